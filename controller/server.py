"""The generic model-driven server: schema, server core, RESTCONF and NETCONF, one application.

One composition serves any application: :class:`Application` takes an :class:`Installer`,
which registers the application's state, RPC handlers and commit hooks with the server core
and returns the part that runs (:class:`Hosted`, started and closed with the servers). The
C-PS (:mod:`controller.app`), the C-SMA (``agents.csma.service``) and the forwarder
(``agents.forwarder.service``) are such applications; tests and tools use it with ``with``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from controller import audit
from controller.admin import Admin, ConfirmedCommit, ConfirmRequest
from controller.admin import register as register_admin
from controller.audit import Event, SqliteAudit, SqliteHistory
from controller.auth import LocalUsers, LoginSettings
from controller.auth.logins import LOGINS_PATH
from controller.datastore.api import (
    SYSTEM,
    Principal,
    Registrations,
)
from controller.datastore.core import Core, CoreSettings
from controller.datastore.secrets import load_key
from controller.datastore.shared import SharedRecords
from controller.datastore.statelock import StateLock
from controller.errors import CatsError
from controller.model import Schema
from controller.model.codec import NotificationCodec
from controller.model.paths import PathResolver
from controller.model.serverschema import server_schema
from controller.netconf.confirmed import DEFAULT_TIMEOUT, Actor, CommitParams
from controller.netconf.server import NetconfSettings
from controller.netconf.wiring import (
    NetconfParts,
    build_netconf,
)
from controller.observability.listener import Readiness, start_management
from controller.plugins import apply_plugins
from controller.restconf.auth import Authenticator
from controller.restconf.resources import Restconf, ServerInfo
from controller.restconf.server import ListenSettings, RestconfServer
from controller.restconf.streams import MONITORING, monitoring_state
from controller.restconf.wsgi import create_app
from controller.statedir import (
    ensure_read_only_groups,
    is_new_state_dir,
    private_state_dir,
    seed_running,
)
from controller.types import DataPath
from controller.workers.pool import WorkerPool, WorkerSettings

if TYPE_CHECKING:
    from controller.cluster.membership import Membership

LOG = logging.getLogger("catsctl.serve")


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """Everything ``catsctl serve`` is told."""

    state_dir: Path = Path("state")
    yang_dirs: tuple[Path, ...] = ()
    init_data: Path | None = None
    listen: ListenSettings = field(default_factory=ListenSettings)
    plugins: tuple[str, ...] = ()  # importable modules with register(registrations)
    netconf: NetconfSettings = field(default_factory=NetconfSettings)
    read_only_groups: tuple[str, ...] = field(default=(), kw_only=True)
    #: ``--feature MODULE:FEATURE``: features to enable besides the server's own (RFC 7950
    #: 7.20.1; a module of a --yang-dir has none otherwise), as (module, feature) pairs.
    features: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    recovery_user: str | None = field(default=None, kw_only=True)  # RFC 8341 3.2
    history_size: int = field(default=1000, kw_only=True)  # commits kept; 0: no history
    audit_size: int = field(default=100_000, kw_only=True)  # audit records before rotation
    metrics_address: str | None = field(default=None, kw_only=True)  # None: loopback default
    metrics: bool = field(default=True, kw_only=True)  # the management listener at all
    decision_max_age: float = field(default=7 * 24 * 3600.0, kw_only=True)  # C-PS decisions
    logins: LoginSettings = field(default_factory=LoginSettings, kw_only=True)
    core: CoreSettings = field(default_factory=CoreSettings, kw_only=True)
    cluster: str | None = field(default=None, kw_only=True)  # etcd://HOST:PORT[,...]
    node_id: str | None = field(default=None, kw_only=True)  # the replica's name in it
    local_reads: bool = field(default=False, kw_only=True)  # cluster reads not made consistent
    cluster_log_keep: int = field(default=1000, kw_only=True)  # commits between snapshots
    #: The schema, compiled already (with ``core.preparse`` parsing running's snapshot);
    #: the server owns it from then on. None: compiled from ``yang_dirs`` and ``features``.
    schema: Schema | None = field(default=None, kw_only=True)


def _yang_library_version(schema: Schema) -> str:
    for name, revision in schema.implemented_modules():
        if name == "ietf-yang-library" and revision is not None:
            return revision
    return "2019-01-04"


def _schema_id(schema: Schema) -> str:
    return ",".join(
        f"{name}@{revision}" for name, revision in sorted(schema.implemented_modules(), key=str)
    )


class Serving(Protocol):
    """RESTCONF's server: in this process, or in worker processes (``--restconf-workers``)."""

    def start(self) -> None:
        """Bind and serve."""
        ...

    def stop(self) -> None:
        """Stop serving."""
        ...


class Hosted(Protocol):
    """The running part of an application: started after the core, closed before it."""

    def start(self) -> None:
        """Start the application's own work (threads, sweepers); the servers start next."""
        ...

    def close(self) -> None:
        """Stop it; the servers have stopped taking requests."""
        ...


@dataclass(frozen=True, slots=True)
class Host:
    """What an installer gets of the server it is installed in."""

    settings: ServeSettings
    core: Callable[[], Core]  # the server core (built after the installer ran)
    publish: Callable[[dict[str, object]], None]  # a notification on the NETCONF stream
    #: Whether this server acts on the network: None while another replica of its cluster
    #: leads, else the term to fence pushes with (0: no cluster). See docs/cluster.md.
    leader: Callable[[], int | None] = lambda: 0
    #: Register a callable run whenever this replica gains or loses the leadership.
    watch_leader: Callable[[Callable[[], None]], None] = lambda _: None
    #: The values the replicas share under a name (``/cats/NAME/`` in etcd); None without a
    #: cluster (docs/cluster.md, "Agent sessions").
    shared: Callable[[str], SharedRecords] | None = None


class Installer(Protocol):
    """Registers an application with the server core and returns its running part."""

    def __call__(self, registrations: Registrations, host: Host, /) -> Hosted: ...


@dataclass(frozen=True, slots=True)
class Composed:
    """Several running parts as one: started in order, closed in reverse order."""

    parts: tuple[Hosted, ...]

    def start(self) -> None:
        """Start each part."""
        for part in self.parts:
            part.start()

    def close(self) -> None:
        """Close each part, the last started first."""
        for part in reversed(self.parts):
            part.close()


def _join(settings: ServeSettings) -> Membership:
    """``--cluster``: join it (etcd's client is imported only then)."""
    from controller.cluster.membership import Membership  # noqa: PLC0415

    key, reads = load_key(settings.state_dir), not settings.local_reads
    return Membership(
        str(settings.cluster),
        settings.node_id,
        key,
        consistent_reads=reads,
        log_keep=settings.cluster_log_keep,
    )


def confirmed_commit(parts: NetconfParts) -> ConfirmedCommit:
    """cats-controller-admin's confirmed commit, run by NETCONF's confirmed-commit state (RFC
    6241 8.4): over RESTCONF (no session) the owner is session 0, so the commit is confirmed
    by any later confirming commit or rolled back at its timeout."""

    def run(principal: Principal, session: str | None, request: ConfirmRequest) -> None:
        actor = Actor(int(session) if session and session.isdigit() else 0, principal.user)
        params = CommitParams(
            confirmed=request.timeout is not None,
            timeout=request.timeout or DEFAULT_TIMEOUT,
            persist=request.persist,
            persist_id=request.persist_id,
        )
        parts.confirmed.commit(actor, principal, params)

    return run


class Application:
    """A running server: schema, core, RESTCONF and NETCONF servers and the installed
    application; ``with`` owns them all."""

    cluster: Membership | None = None  # --cluster: the commit log and the election

    def __init__(self, settings: ServeSettings, installer: Installer) -> None:
        self.settings = settings
        self.schema = settings.schema or server_schema(settings.yang_dirs, settings.features)
        listen = settings.listen
        registrations = Registrations()
        registrations.state[DataPath(f"/{MONITORING}")] = lambda: monitoring_state(
            self.core.streams(), listen.base_url
        )
        self.netconf: NetconfParts | None = None
        registrations.state[DataPath("/ietf-netconf-monitoring:netconf-state")] = (
            self._netconf_state
        )
        registrations.state[DataPath(LOGINS_PATH)] = self._logins_state
        fresh = is_new_state_dir(settings.state_dir)  # before an installer keeps files there
        private_state_dir(settings.state_dir)
        self._lock = StateLock(settings.state_dir)
        self.history: SqliteHistory | None = None
        self._audit: SqliteAudit | None = None
        try:
            self._lock.acquire()  # before anything reads or writes there
            size = settings.history_size  # the history and the audit live in the locked folder
            self.history = SqliteHistory(settings.state_dir, size) if size > 0 else None
            self._audit = records = SqliteAudit(settings.state_dir, settings.audit_size)
            audit.install(records)
            admin = Admin(
                lambda: self.core, self.history, records, kept=size, confirmed=self._confirmed
            )
            register_admin(registrations, admin)
            if settings.cluster is not None:
                self.cluster = _join(settings)
            self.hosted = installer(registrations, self._host(settings))
            apply_plugins(settings.plugins, registrations)
            core_settings = self._core_settings(settings)
            self.core = Core(self.schema, settings.state_dir, registrations, core_settings)
            self.core.follow()
        except BaseException:
            self._abandon()
            raise
        if settings.init_data is not None and (fresh or self.cluster is not None):
            seed_running(self.core, settings.init_data)
        elif settings.init_data is not None:
            LOG.warning(
                "--init-data %s ignored: the state directory %s already holds the datastores "
                "(it seeds a new state directory only)",
                settings.init_data,
                settings.state_dir,
            )
        ensure_read_only_groups(self.core, settings.read_only_groups)
        resolver = PathResolver(self.schema.context)
        started = datetime.now(UTC)
        info = ServerInfo(_yang_library_version(self.schema), _schema_id(self.schema), started)
        self.users = users = LocalUsers(self.core, settings.recovery_user, settings.logins)
        authenticator = Authenticator(users.login, users.known_good, users.logins.retry_after)
        app = create_app(
            Restconf(self.core, resolver, info, NotificationCodec(self.schema.context).to_xml),
            authenticator.authenticate,
            users.principal,
            max_body_size=listen.max_body_size,
            limits=listen.limits,
        )
        self.server: Serving
        if listen.workers <= 0:
            self.server = RestconfServer(app, listen)
        else:  # --restconf-workers
            folders = tuple(str(folder) for folder in settings.yang_dirs)
            workers = WorkerSettings(listen.workers, folders, settings.features, info)
            self.server = WorkerPool(app, self.core, listen, workers)
        self.netconf = build_netconf(
            self.core,
            self.schema,
            resolver,
            settings.netconf,
            settings.state_dir,
            settings.yang_dirs,
            users,
            None if self.cluster is None else self.cluster.session_ids,
            None if self.cluster is None else self.cluster.confirmed,
            None if self.cluster is None else self.cluster.kills.request,
        )

    def _abandon(self) -> None:
        """Undo a start that failed before the core was made."""
        if self.cluster is not None:
            self.cluster.close()
        self._close_records()
        self._lock.release()
        if self.settings.core.preparse is not None:
            self.settings.core.preparse.close()  # done with the context before it is freed
        self.schema.close()

    def _core_settings(self, settings: ServeSettings) -> CoreSettings:
        """The core's settings with the history and, in a cluster, its commit log, its lock
        of running, its startup and this replica's name (its commits' audit records name it)."""
        cluster = self.cluster
        if cluster is None:
            return replace(settings.core, history=self.history)
        return replace(
            settings.core,
            history=self.history,
            replication=cluster.replication,
            shared_lock=cluster.locks,
            startup_lock=cluster.startup_locks,
            node=cluster.node,
            startup=cluster.startup,
        )

    def _host(self, settings: ServeSettings) -> Host:
        if self.cluster is None:
            return Host(settings, lambda: self.core, self._publish_notification)
        cluster = self.cluster
        return Host(
            settings,
            lambda: self.core,
            self._publish_notification,
            cluster.leader,
            cluster.watch,
            cluster.records,
        )

    def _confirmed(self) -> ConfirmedCommit | None:
        if self.netconf is None or self.settings.netconf.port <= 0:
            return None
        return confirmed_commit(self.netconf)

    def _close_records(self) -> None:
        audit.install(None)
        if self._audit is not None:
            self._audit.close()
        if self.history is not None:
            self.history.close()

    def _publish_notification(self, document: dict[str, object]) -> None:
        """Put an application notification on the NETCONF stream (validated by the core)."""
        try:
            self.core.publish("NETCONF", json.dumps(document))
        except CatsError:  # the application's fault; the report or decision stands
            LOG.exception("an application notification failed validation")

    def _logins_state(self) -> dict[str, object]:
        return self.users.logins.state()

    def _netconf_state(self) -> dict[str, object]:
        return self.netconf.state() if self.netconf is not None else {}

    def __enter__(self) -> Application:
        self.hosted.start()  # the C-PS: the sweeper (throttled reports, aging, ledger)
        if self.cluster is not None:
            self.cluster.start()  # running is caught up: this replica may lead
        if not self.users.password_hashes():
            LOG.warning(
                "no users in ietf-system:system/authentication: every request gets 401; "
                "seed one with --init-data (see catsctl hash-password)"
            )
        try:
            self.server.start()
            if self.netconf is not None and self.settings.netconf.port > 0:
                self.netconf.server.start()
                if self.cluster is not None:  # kill-session from other replicas
                    self.cluster.kills.follow(self.netconf.kill_here)
        except BaseException:
            self.__exit__(None, None, None)  # a port taken: everything started is stopped
            raise
        audit.record(Event.SERVER_START, SYSTEM.user, detail=f"state in {self.settings.state_dir}")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.core.end_subscriptions()  # streams end, so their workers are free to stop
        if self.netconf is not None:
            self.netconf.server.stop()
        self.server.stop()
        self.hosted.close()  # C-PS: no more reports, stop sweeping, write the ledger
        self.users.close()
        if self.cluster is not None:
            self.cluster.close()  # a leader hands over; no more commits of the others
        self.core.close()
        audit.record(Event.SERVER_STOP, SYSTEM.user, detail="stopped")
        self._close_records()
        self.schema.close()
        self._lock.release()


def southbound_ready(hosted: Hosted) -> bool:
    """Whether the application's southbound sessions are up (an application without any, or
    whose running parts do not say, is ready)."""
    parts = hosted.parts if isinstance(hosted, Composed) else (hosted,)
    checks = [getattr(part, "southbound_ready", None) for part in parts]
    return all(check() for check in checks if callable(check))


def serve(
    settings: ServeSettings,
    installer: Installer,
    stop: threading.Event | None = None,
) -> int:
    """Run the server with ``installer``'s application until ``stop`` is set; returns the
    exit code. The management listener (``/readyz``) starts first, so that it answers "not
    ready" while the datastore loads; SIGTERM (``stop``) makes it not ready, then the servers
    stop taking requests, the application persists what it holds and the sessions end."""
    readiness = Readiness()
    for check in ("datastore", "northbound"):
        readiness.expect(check)
    management = (
        start_management(settings.metrics_address, "serve", readiness) if settings.metrics else None
    )
    try:
        application = Application(settings, installer)
        readiness.done("datastore")
        with application:
            readiness.done("northbound")
            readiness.set("southbound", lambda: southbound_ready(application.hosted))
            if application.cluster is not None:  # reads and select-service go on without it
                why = application.cluster.replication.problem
                readiness.set("cluster-writes", lambda: why() is None, why)
            LOG.info("serving; state in %s", settings.state_dir)
            (stop or threading.Event()).wait()
            readiness.expect("stopping")
            LOG.info("stopping: draining requests, persisting state, closing sessions")
        LOG.info("stopped")
    finally:
        if management is not None:
            management.stop()
    return 0
