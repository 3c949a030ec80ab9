"""ietf-yang-library (RFC 8525) data describing exactly what a schema loads.

:func:`module_records` reads the schema once; :func:`yang_library` is a pure function of those
records and the datastores served, and its ``content-id`` is a hash of everything else in the
document, so it changes exactly when the content does (RFC 8525 3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from _libyang import ffi

from controller import __version__
from controller.model.schema import Schema

#: The module set and schema are named by the product and its version (RFC 8525 names them
#: freely), so a client reads the server's version where it reads its modules.
MODULE_SET = f"cats-controller-{__version__}"
SCHEMA = MODULE_SET


@dataclass(frozen=True, slots=True)
class ModuleRecord:
    """One module as RFC 8525 ``module-set/module`` or ``import-only-module`` lists it."""

    name: str
    revision: str | None
    namespace: str
    features: tuple[str, ...]
    implemented: bool


def module_records(schema: Schema) -> tuple[ModuleRecord, ...]:
    """Every module of the schema's context, implemented or imported only."""
    records: list[ModuleRecord] = []
    for module in schema.context:
        revision = next(iter(module.revisions()), None)
        features = tuple(sorted(feature.name() for feature in module.features() if feature.state()))
        records.append(
            ModuleRecord(
                name=module.name(),
                revision=revision.date() if revision is not None else None,
                namespace=str(ffi.string(module.cdata.ns).decode()),
                features=features,
                implemented=bool(module.implemented()),
            )
        )
    return tuple(sorted(records, key=lambda record: record.name))


def _module_entry(record: ModuleRecord) -> dict[str, object]:
    entry: dict[str, object] = {"name": record.name}
    if record.revision is not None:
        entry["revision"] = record.revision
    entry["namespace"] = record.namespace
    if record.implemented and record.features:
        entry["feature"] = list(record.features)
    return entry


def yang_library(records: Sequence[ModuleRecord], datastores: Sequence[str]) -> dict[str, object]:
    """The ``ietf-yang-library:yang-library`` container (RFC 8525 3), as RFC 7951 JSON.

    ``datastores`` are ietf-datastores identities (``ietf-datastores:running``); all share one
    schema, because every datastore of this server implements the same modules.
    """
    module_set: dict[str, object] = {
        "name": MODULE_SET,
        "module": [_module_entry(r) for r in records if r.implemented],
    }
    imported = [_module_entry(r) for r in records if not r.implemented and r.revision]
    if imported:
        module_set["import-only-module"] = imported
    content: dict[str, object] = {
        "module-set": [module_set],
        "schema": [{"name": SCHEMA, "module-set": [MODULE_SET]}],
        "datastore": [{"name": name, "schema": SCHEMA} for name in datastores],
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
    content["content-id"] = digest[:32]
    return {"ietf-yang-library:yang-library": content}
