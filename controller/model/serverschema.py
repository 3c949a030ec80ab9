"""The schema ``catsctl serve`` compiles: the server's modules, NETCONF's and ``--yang-dir``'s.

Kept apart from the server's wiring so that a start-up can compile it before the server's
modules are imported (:mod:`controller.datastore.preparse`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from controller.model.schema import (
    SERVER_FEATURES,
    SERVER_MODULES,
    Schema,
    modules_in,
    project_yang_dir,
)

#: The protocol modules a NETCONF server implements (RFC 6241, 6022, 8526), and their features.
NETCONF_MODULES: tuple[str, ...] = ("ietf-netconf", "ietf-netconf-monitoring", "ietf-netconf-nmda")
NETCONF_FEATURES: dict[str, tuple[str, ...]] = {
    "ietf-netconf": (
        "writable-running",
        "candidate",
        "confirmed-commit",
        "rollback-on-error",
        "validate",
        "startup",
        "xpath",
    ),
    "ietf-netconf-nmda": ("origin", "with-defaults"),
}


def server_schema(yang_dirs: tuple[Path, ...], enabled: Sequence[tuple[str, str]] = ()) -> Schema:
    """The server's schema (model.Schema.for_server) plus the NETCONF protocol modules, with
    the ``enabled`` (module, feature) pairs on top of the server's own features.

    Raises:
        ModelError: a feature or its module is unknown (the server does not start).
    """
    extra = [name for folder in yang_dirs for name in modules_in(folder)]
    wanted = [*SERVER_MODULES, *NETCONF_MODULES]
    modules = wanted + [name for name in extra if name not in wanted]
    features = {name: list(names) for name, names in SERVER_FEATURES.items()}
    for name, names in NETCONF_FEATURES.items():
        features.setdefault(name, []).extend(names)
    for name, feature in enabled:
        chosen = features.setdefault(name, [])
        if feature not in chosen:
            chosen.append(feature)
    return Schema([project_yang_dir(), *yang_dirs], modules, features)
