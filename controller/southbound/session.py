"""Configuration operations on one forwarder over a persistent NETCONF session (RFC 6241).

:class:`ConfigSession` adds to :class:`~controller.southbound.peer.NetconfPeer` what the
steering push needs: edit-config to the candidate (7.2), commit with a confirmed commit and
the confirming commit (8.3, 8.4), discard-changes (8.3.4.2), get-config with a subtree filter
(7.1, 6), lock and unlock (7.5, 7.6). Each method is a few lines run by
:meth:`NetconfPeer.run`, which reconnects, backs off and translates every ncclient and paramiko
exception into a :class:`~controller.southbound.errors.SouthboundError`; no ncclient type
leaves this module. The XML is built and read by :mod:`controller.southbound.steering`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from controller.southbound.codec import RpcCodec
from controller.southbound.peer import Credentials, NetconfPeer, PeerSettings
from controller.southbound.steering import (
    Changes,
    Entry,
    EntryKey,
    batches,
    edit_config,
    fencing_config,
    parse_steering,
    subtree_filter,
)

CANDIDATE = ":candidate"
CONFIRMED_COMMIT = ":confirmed-commit"


@dataclass(frozen=True, slots=True)
class WriteSettings:
    """How a change is written: entries per edit-config and per commit, confirmed-commit
    timeout (s), candidate lock."""

    batch: int = 64
    confirm_timeout: int = 30
    lock: bool = True
    commit_size: int = 1024  # entries per commit: a large change is committed in parts
    #: The cluster leader's term, written with every commit (fencing, docs/cluster.md); 0:
    #: no cluster, nothing written.
    term: int = 0


@dataclass(frozen=True, slots=True)
class Written:
    """What one write did: edit-configs sent, entries written, whether it was confirmed."""

    edits: int
    entries: int
    confirmed: bool


class ConfigSession:
    """The steering configuration of one forwarder, read and written over NETCONF."""

    def __init__(
        self,
        address: tuple[str, int],
        credentials: Credentials,
        settings: PeerSettings | None = None,
    ) -> None:
        # run() needs no RPC codec (the codec is for modelled RPCs, not configuration)
        self._peer = NetconfPeer(
            address, credentials, RpcCodec(None), settings=settings or PeerSettings()
        )
        self.name = self._peer.name
        self.connections = 0  # sessions opened so far: a new one means a reconnect
        self._manager_id: int | None = None

    def _seen(self, manager: Any) -> Any:
        if id(manager) != self._manager_id:
            self._manager_id = id(manager)
            self.connections += 1
        return manager

    def capabilities(self) -> frozenset[str]:
        """The forwarder's capabilities (ncclient shorthands such as ``:candidate``)."""

        def operation(manager: Any) -> frozenset[str]:
            caps = self._seen(manager).server_capabilities
            return frozenset(str(c) for c in caps) | frozenset(
                name for name in (CANDIDATE, CONFIRMED_COMMIT) if name in caps
            )

        return self._peer.run("capabilities", operation)

    def read(self) -> dict[EntryKey, Entry]:
        """get-config of running with the steering subtree filter: the forwarder's entries."""

        def operation(manager: Any) -> Any:
            self._seen(manager).huge_tree = True  # 100k rules exceed lxml's default limits
            return manager.get_config(source="running", filter=("subtree", subtree_filter()))

        reply = self._peer.run("get-config", operation)
        return parse_steering(reply.data_ele)

    def write(self, changes: Changes, settings: WriteSettings = WriteSettings()) -> Written:
        """Write ``changes``: through the candidate (locked, edit-configs of at most
        ``settings.batch`` entries, a confirmed commit and the confirming commit) when the
        forwarder offers it, else edit-config to running. A refused edit or commit discards
        the candidate's changes and raises."""
        parts = batches(changes, settings.batch)
        if not parts and not settings.term:
            return Written(0, 0, confirmed=False)
        fence = [fencing_config(settings.term)] if settings.term else []

        def operation(manager: Any) -> Written:
            caps = self._seen(manager).server_capabilities
            if CANDIDATE not in caps:
                for config in [*fence, *(edit_config(part) for part in parts)]:
                    manager.edit_config(target="running", config=config)
                return Written(len(parts), len(changes), confirmed=False)
            confirmed = CONFIRMED_COMMIT in caps
            locked = False
            try:
                if settings.lock:
                    manager.lock(target="candidate")
                    locked = True
                for config in [*fence, *(edit_config(part) for part in parts)]:
                    manager.edit_config(target="candidate", config=config)
                if confirmed:
                    manager.commit(confirmed=True, timeout=str(settings.confirm_timeout))
                manager.commit()  # the confirming commit (or the only one)
            except Exception:
                with contextlib.suppress(Exception):
                    manager.discard_changes()
                raise
            finally:
                if locked:
                    with contextlib.suppress(Exception):
                        manager.unlock(target="candidate")
            return Written(len(parts), len(changes), confirmed=confirmed)

        return self._peer.run("edit-config", operation)

    def edit_config(self, changes: Changes, target: str = "candidate") -> None:
        """One edit-config of ``changes`` (at most one batch) to ``target``, no commit."""
        config = edit_config(changes)
        self._peer.run(
            "edit-config", lambda m: self._seen(m).edit_config(target=target, config=config)
        )

    def commit(self, *, confirmed: bool = False, timeout: int | None = None) -> None:
        """commit: confirmed (RFC 6241 8.4, rolled back unless confirmed within ``timeout``
        s) or a plain or confirming commit."""

        def operation(manager: Any) -> None:
            if confirmed:
                self._seen(manager).commit(confirmed=True, timeout=str(timeout or 600))
            else:
                self._seen(manager).commit()

        self._peer.run("commit", operation)

    def discard_changes(self) -> None:
        """discard-changes: the candidate reverts to running."""
        self._peer.run("discard-changes", lambda m: self._seen(m).discard_changes())

    def lock(self, target: str = "candidate") -> None:
        """lock a datastore (RFC 6241 7.5)."""
        self._peer.run("lock", lambda m: self._seen(m).lock(target=target))

    def unlock(self, target: str = "candidate") -> None:
        """unlock a datastore (RFC 6241 7.6)."""
        self._peer.run("unlock", lambda m: self._seen(m).unlock(target=target))

    def close(self) -> None:
        """Close the session."""
        self._peer.close()
