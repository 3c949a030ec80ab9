"""Assemble the NETCONF server from the core and the schema (called by controller.app)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.datastore.api import SYSTEM, DatastoreName, ReadRequest, ServerCore
from controller.model import Schema
from controller.model.codec import NotificationCodec
from controller.model.library import module_capabilities, module_records, module_source
from controller.model.paths import PathResolver
from controller.model.schema import project_yang_dir, standard_yang_dirs
from controller.netconf.confirmed import ConfirmedCommits, SharedPending
from controller.netconf.monitoring import SchemaSources, netconf_state
from controller.netconf.operations import Operations
from controller.netconf.reads import Reads
from controller.netconf.server import NetconfServer, NetconfSettings, capabilities
from controller.netconf.session import SessionEnv
from controller.netconf.sessions import Registry
from controller.netconf.ssh import Credentials
from controller.observability.metrics import NETCONF_SESSIONS
from controller.types import DataPath

LOG = logging.getLogger("catsctl.netconf")
YANG_LIBRARY = "/ietf-yang-library:yang-library"


@dataclass
class NetconfParts:
    """The NETCONF server and what its monitoring state is made of."""

    server: NetconfServer
    registry: Registry
    capabilities: tuple[str, ...]
    modules: tuple[tuple[str, str | None, str], ...]
    lock_holders: Callable[[], dict[DatastoreName, str]]
    confirmed: ConfirmedCommits  # cats-controller-admin's commit with confirm-timeout uses it
    kill_here: Callable[[int, int], bool]  # kill one of this server's sessions (a cluster's)

    def state(self) -> dict[str, object]:
        """``ietf-netconf-monitoring:netconf-state`` for the core's state provider."""
        return netconf_state(self.registry, self.lock_holders(), self.capabilities, self.modules)


@dataclass(frozen=True)
class Killer:
    """kill-session (RFC 6241 7.9) of a session here, else of another replica's (a cluster's:
    ``elsewhere`` says whether one held it)."""

    registry: Registry
    elsewhere: Callable[[int, int], bool] | None = None

    def here(self, session_id: int, killed_by: int) -> bool:
        """Kill one of this server's sessions; whether it was one."""
        info = self.registry.get(session_id)
        if info is not None:
            info.kill(killed_by)
        return info is not None

    def __call__(self, session_id: int, killed_by: int) -> bool:
        if self.here(session_id, killed_by):
            return True
        return self.elsewhere is not None and self.elsewhere(session_id, killed_by)


def _library(core: ServerCore) -> tuple[str, str]:
    """The yang-library revision and content-id the core reports (RFC 8525 3)."""
    request = ReadRequest(DatastoreName.OPERATIONAL, DataPath(f"{YANG_LIBRARY}/content-id"))
    document = core.read(request, SYSTEM).document or "{}"
    content_id = str(next(iter(json.loads(document).values()), ""))
    return "2019-01-04", content_id


def build_netconf(  # noqa: PLR0913, PLR0917 - wiring takes what controller.app has
    core: ServerCore,
    schema: Schema,
    resolver: PathResolver,
    settings: NetconfSettings,
    state_dir: Path,
    yang_dirs: Sequence[Path],
    credentials: Credentials,
    session_ids: Callable[[], int] | None = None,
    shared_confirmed: SharedPending | None = None,
    kill_elsewhere: Callable[[int, int], bool] | None = None,
) -> NetconfParts:
    """The NETCONF server over ``core`` (not started); ``session_ids`` draws the session
    ids (a cluster's, unique across its replicas; by default from 1); ``shared_confirmed`` is
    the cluster's pending confirmed commit (by default, the server's own); ``kill_elsewhere``
    kills a session another replica holds (whether one did)."""
    registry = Registry(session_ids)

    def publish(document: str) -> None:
        core.publish("NETCONF", document)

    confirmed = ConfirmedCommits(core, publish, shared_confirmed)
    confirmed.resume()  # a confirmed commit pending before a restart (or the cluster's)
    records = module_records(schema)
    modules = tuple((r.name, r.revision, r.namespace) for r in records)
    folders = [project_yang_dir(), *yang_dirs, *standard_yang_dirs()]
    sources = SchemaSources(
        folders,
        [(r.name, r.revision) for r in records],
        lambda name, revision, fmt: module_source(schema, name, revision, fmt),
    )
    server_box: list[NetconfServer] = []

    kill = Killer(registry, kill_elsewhere)

    def end_deleted(users: frozenset[str]) -> None:
        """A deleted user's sessions end at once (RFC 8341: what it may do ends with it)."""
        gone = [info for info in registry.sessions() if info.user not in users]
        for info in gone:
            LOG.info("netconf: session %d of deleted user %s ended", info.session_id, info.user)

        def kill_all() -> None:
            for info in gone:
                info.kill(0)

        if gone:  # not under the core lock the caller holds
            threading.Thread(target=kill_all, daemon=True, name="end-deleted").start()

    core.watch_accounts(end_deleted)
    operations = Operations(core, resolver, registry, confirmed, sources, kill)
    revision, content_id = _library(core)
    served = capabilities(revision, content_id, module_capabilities(records))
    env = SessionEnv(
        core=core,
        operations=operations,
        registry=registry,
        confirmed=confirmed,
        capabilities=served,
        namespace_of=resolver.namespace,
        to_xml=NotificationCodec(schema.context).to_xml,
        resolve_xpath=Reads(core, resolver).resolve_xpath,
        max_message_size=settings.max_message_size,
        max_sessions=settings.max_sessions,
        events=publish,
        limits=settings.limits,
        strict=settings.strict,
    )
    NETCONF_SESSIONS.set_function(lambda: len(registry))
    server = NetconfServer(env, settings, state_dir, credentials)
    server_box.append(server)
    return NetconfParts(server, registry, served, modules, core.lock_holders, confirmed, kill.here)
