"""ietf-netconf-monitoring (RFC 6022): the netconf-state data and get-schema's sources."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from controller.datastore.api import DatastoreName
from controller.errors import ErrorType
from controller.netconf.errors import netconf_error
from controller.netconf.sessions import Registry

MONITORING_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
NETCONF_STATE = "ietf-netconf-monitoring:netconf-state"
_DATASTORES = (DatastoreName.RUNNING, DatastoreName.CANDIDATE, DatastoreName.STARTUP)


def _time(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def netconf_state(
    registry: Registry,
    holders: Mapping[DatastoreName, str],
    capabilities: Sequence[str],
    modules: Sequence[tuple[str, str | None, str]],
) -> dict[str, object]:
    """``netconf-state`` as RFC 7951 JSON.

    ``holders`` are the core's lock holders (``ServerCore.lock_holders``); ``modules`` are
    (name, revision, namespace).
    """
    datastores: list[dict[str, object]] = []
    for name in _DATASTORES:
        entry: dict[str, object] = {"name": name.value}
        holder = holders.get(name)
        if holder is not None and holder.isdigit():
            locked = registry.locked_time(name, holder)
            entry["locks"] = {
                "global-lock": {"locked-by-session": int(holder), "locked-time": _time(locked)}
            }
        datastores.append(entry)
    sessions = [
        {
            "session-id": info.session_id,
            "transport": "ietf-netconf-monitoring:netconf-ssh",
            "username": info.user,
            "source-host": info.source_host,
            "login-time": _time(info.login_time),
            "in-rpcs": info.counters.in_rpcs,
            "in-bad-rpcs": info.counters.in_bad_rpcs,
            "out-rpc-errors": info.counters.out_rpc_errors,
            "out-notifications": info.counters.out_notifications,
        }
        for info in registry.sessions()
    ]
    stats = registry.statistics
    totals = [stats.closed, *(info.counters for info in registry.sessions())]
    return {
        NETCONF_STATE: {
            "capabilities": {"capability": list(capabilities)},
            "datastores": {"datastore": datastores},
            "schemas": {
                "schema": [
                    {
                        "identifier": name,
                        "version": revision or "",
                        "format": f"ietf-netconf-monitoring:{fmt}",
                        "namespace": namespace,
                        "location": ["NETCONF"],
                    }
                    for name, revision, namespace in modules
                    for fmt in FORMATS
                ]
            },
            "sessions": {"session": sessions} if sessions else {},
            "statistics": {
                "netconf-start-time": _time(stats.start_time),
                "in-bad-hellos": stats.in_bad_hellos,
                "in-sessions": stats.in_sessions,
                "dropped-sessions": stats.dropped_sessions,
                "in-rpcs": sum(c.in_rpcs for c in totals),
                "in-bad-rpcs": sum(c.in_bad_rpcs for c in totals),
                "out-rpc-errors": sum(c.out_rpc_errors for c in totals),
                "out-notifications": sum(c.out_notifications for c in totals),
            },
        }
    }


#: Prints a module of the schema: (name, revision, format) to text, None when unknown.
Printer = Callable[[str, str | None, str], str | None]
FORMATS = ("yang", "yin")


class SchemaSources:
    """The text of a module for get-schema: the YANG file the schema was loaded from when
    there is one, else (and for YIN) the module as the schema prints it."""

    def __init__(
        self,
        folders: Sequence[Path],
        modules: Sequence[tuple[str, str | None]],
        printer: Printer | None = None,
    ) -> None:
        self._folders = list(folders)
        self._modules = dict(modules)
        self._printer = printer

    def text(self, identifier: str, version: str | None, fmt: str) -> str:
        """The module's source (RFC 6022 3.1 get-schema); ``fmt`` is ``yang`` or ``yin``."""
        if fmt not in FORMATS:
            raise _invalid(f"format {fmt!r} is not served")
        if identifier not in self._modules:
            raise _invalid(f"no module {identifier!r}")
        revision = self._modules[identifier]
        if version and version != revision:
            raise _invalid(f"no revision {version!r} of {identifier!r}")
        if fmt == "yang":
            found = self._file(identifier, revision)
            if found is not None:
                return found
        printed = self._printer(identifier, revision, fmt) if self._printer else None
        if printed is not None:
            return printed
        raise netconf_error(
            "operation-failed",
            f"the source of {identifier!r} is not available",
            error_type=ErrorType.APPLICATION,
        )

    def _file(self, identifier: str, revision: str | None) -> str | None:
        names = [f"{identifier}@{revision}.yang"] if revision else []
        names.append(f"{identifier}.yang")
        for folder in self._folders:
            for name in names:
                path = folder / name
                if path.is_file():
                    return path.read_text(encoding="utf-8")
        return None


def _invalid(message: str) -> Exception:
    return netconf_error("invalid-value", message, error_type=ErrorType.APPLICATION)
