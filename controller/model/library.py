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

from controller.model.schema import Schema

MODULE_SET = "complete"
_LYS_VERSION_1_1 = 2  # LYS_VERSION_1_1 of libyang's tree_schema.h
SCHEMA = "complete"


@dataclass(frozen=True, slots=True)
class ModuleRecord:
    """One module as RFC 8525 ``module-set/module`` or ``import-only-module`` lists it."""

    name: str
    revision: str | None
    namespace: str
    features: tuple[str, ...]
    implemented: bool
    yang_version: str = "1.1"  # "1" for a YANG 1.0 module (RFC 6020)


def module_records(schema: Schema) -> tuple[ModuleRecord, ...]:
    """Every module of the schema's context, implemented or imported only."""
    records: list[ModuleRecord] = []
    for module in schema.context:
        revision = next(iter(module.revisions()), None)
        features = tuple(sorted(feature.name() for feature in module.features() if feature.state()))
        parsed = module.cdata.parsed
        version = "1.1" if parsed != ffi.NULL and parsed.version == _LYS_VERSION_1_1 else "1"
        records.append(
            ModuleRecord(
                name=module.name(),
                revision=revision.date() if revision is not None else None,
                namespace=str(ffi.string(module.cdata.ns).decode()),
                features=features,
                implemented=bool(module.implemented()),
                yang_version=version,
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


def modules_state(records: Sequence[ModuleRecord]) -> dict[str, object]:
    """The deprecated ``ietf-yang-library:modules-state`` (RFC 7895, kept in RFC 8525 as
    legacy state), which clients without RFC 8525 support still discover modules from.

    Every module is listed, implemented or imported; ``module-set-id`` is a hash of the list,
    so it changes exactly when the list does.
    """
    entries: list[dict[str, object]] = []
    for record in records:
        if not record.implemented and not record.revision:
            continue  # an import-only module is listed by its revision
        entry: dict[str, object] = {
            "name": record.name,
            "revision": record.revision or "",
            "namespace": record.namespace,
        }
        if record.implemented and record.features:
            entry["feature"] = list(record.features)
        entry["conformance-type"] = "implement" if record.implemented else "import"
        entries.append(entry)
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()
    return {"ietf-yang-library:modules-state": {"module-set-id": digest[:32], "module": entries}}


def module_capabilities(records: Sequence[ModuleRecord]) -> tuple[str, ...]:
    """The hello capability of every implemented YANG 1.0 module (RFC 7950 5.6.4, RFC 6020
    5.6.4): ``NAMESPACE?module=NAME&revision=DATE&features=F1,F2``. YANG 1.1 modules are
    announced through the yang-library capability only."""
    found: list[str] = []
    for record in records:
        if not record.implemented or record.yang_version != "1":
            continue
        uri = f"{record.namespace}?module={record.name}"
        if record.revision:
            uri += f"&revision={record.revision}"
        if record.features:
            uri += "&features=" + ",".join(record.features)
        found.append(uri)
    return tuple(found)


def module_source(schema: Schema, name: str, revision: str | None, fmt: str) -> str | None:
    """A module of the schema printed by libyang in ``yang`` or ``yin`` (RFC 7950 13), or
    None when the schema has no such module. libyang's built-in modules (``yang``,
    ``ietf-yang-types``...) have no file on every system; this gives them all."""
    module = schema.context.get_module(name)
    if module is None:
        return None
    found = next(iter(module.revisions()), None)
    if revision and (found is None or found.date() != revision):
        return None
    return str(module.print_mem(fmt))
