"""The one place that wires a model-driven server: schema, server core, RESTCONF and NETCONF.

One composition serves any application: :class:`Application` takes an :class:`Installer`,
which registers the application's state, RPC handlers and commit hooks and returns the part
that runs (:class:`Hosted`, started and closed with the servers). The C-PS (:func:`install_cps`:
the service metrics of :func:`install_service_metrics` and the agent selection of
:func:`install_agent_selection`, whose commitments reach the forwarders through
:class:`ForwarderSteering`) is the default, so ``catsctl serve`` calls :func:`serve`;
``catsctl csma`` passes the C-SMA's installer (agents.csma.service). Tests and tools use
:class:`Application` with ``with``.
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
from typing import Protocol

from controller.agent_selection import (
    AgentSelection,
    AgentSelectionSettings,
    Placement,
    RunningAgentConfig,
    Steering,
    SteeringInstruction,
    steering_rule,
)
from controller.agent_selection import register as register_agent_selection
from controller.agent_selection.csmas import ConfiguredStateAgents, NetconfLogins
from controller.auth import LocalUsers
from controller.datastore.api import (
    SYSTEM,
    Access,
    AccessCheck,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    ReadRequest,
    Registrations,
    Revision,
    ServerCore,
)
from controller.datastore.core import Core, permit_all
from controller.errors import CatsError
from controller.model import Encoding, Schema
from controller.model.codec import NotificationCodec
from controller.model.paths import PathResolver
from controller.model.schema import SERVER_FEATURES, SERVER_MODULES, modules_in, project_yang_dir
from controller.netconf.server import NetconfSettings
from controller.netconf.wiring import (
    NETCONF_FEATURES,
    NETCONF_MODULES,
    NetconfParts,
    build_netconf,
)
from controller.plugins import apply_plugins
from controller.restconf.auth import Authenticator
from controller.restconf.resources import Restconf, ServerInfo
from controller.restconf.server import ListenSettings, RestconfServer
from controller.restconf.streams import MONITORING, monitoring_state
from controller.restconf.wsgi import create_app
from controller.service_metrics import RunningConfig, ServiceMetrics
from controller.service_metrics import register as register_cps
from controller.southbound import PeerSettings
from controller.southbound.forwarders import SteeringService
from controller.southbound.inventory import FORWARDERS, Inventory, parse_inventory
from controller.types import CsciId, CsId, DataPath

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


_WRITES = (Access.CREATE, Access.UPDATE, Access.DELETE)


@dataclass(frozen=True, slots=True)
class ReadOnlyGroups:
    """The access check of ``--read-only-group``: members of these groups may not write.

    The smallest real use of the core's AccessCheck seam until NACM (RFC 8341) rules are
    served: reads and ``exec`` stay allowed to everyone.
    """

    groups: frozenset[str]

    def __call__(self, principal: Principal, access: Access, path: DataPath) -> bool:
        del path
        return access not in _WRITES or self.groups.isdisjoint(principal.groups)


def _yang_library_version(schema: Schema) -> str:
    for name, revision in schema.implemented_modules():
        if name == "ietf-yang-library" and revision is not None:
            return revision
    return "2019-01-04"


def _schema_id(schema: Schema) -> str:
    return ",".join(
        f"{name}@{revision}" for name, revision in sorted(schema.implemented_modules(), key=str)
    )


def server_schema(yang_dirs: tuple[Path, ...]) -> Schema:
    """The server's schema (model.Schema.for_server) plus the NETCONF protocol modules."""
    extra = [name for folder in yang_dirs for name in modules_in(folder)]
    wanted = [*SERVER_MODULES, *NETCONF_MODULES]
    modules = wanted + [name for name in extra if name not in wanted]
    features = {name: list(names) for name, names in SERVER_FEATURES.items()}
    for name, names in NETCONF_FEATURES.items():
        features.setdefault(name, []).extend(names)
    return Schema([project_yang_dir(), *yang_dirs], modules, features)


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


def _service_metrics(
    registrations: Registrations, host: Host
) -> tuple[ServiceMetrics, SteeringService, RunningConfig]:
    config = RunningConfig(host.core)
    service_metrics = ServiceMetrics(
        config,
        publish=host.publish,
        state_dir=host.settings.state_dir,  # the report-sender ledger (replay protection)
    )
    register_cps(registrations, service_metrics)  # plugins may replace its entries
    steering = SteeringService(host.core, service_metrics.steering_outcomes)  # southbound
    service_metrics.on_tables_changed = steering.on_tables_changed
    registrations.state[FORWARDERS] = steering.state
    return service_metrics, steering, config


def install_service_metrics(registrations: Registrations, host: Host) -> Hosted:
    """The C-PS application (controller.service_metrics): reports into the CST and NST,
    select-service."""
    service_metrics, steering, _ = _service_metrics(registrations, host)
    return Composed((service_metrics, steering))


class RunningInventory:
    """The forwarder inventory in running (``ietf-cats-steering:forwarders``), parsed once per
    revision of running."""

    def __init__(self, core: Callable[[], ServerCore]) -> None:
        self._core = core
        self._guard = threading.Lock()
        self._cached: tuple[str, Inventory] | None = None

    def __call__(self) -> Inventory:
        core = self._core()
        etag = core.revision(DatastoreName.RUNNING, None).etag
        with self._guard:
            if self._cached is not None and self._cached[0] == etag:
                return self._cached[1]
        document = core.read(ReadRequest(DatastoreName.RUNNING, FORWARDERS), SYSTEM).document
        loaded = json.loads(document) if document else {}
        inventory = parse_inventory(loaded if isinstance(loaded, dict) else {})
        with self._guard:
            self._cached = (etag, inventory)
        return inventory


def attached_egress(
    config: RunningConfig, service_metrics: ServiceMetrics
) -> Callable[[CsId, CsciId], str | None]:
    """The egress forwarder of an instance: its configured ``csci-attachments`` egress, else
    the egress of its CST entry (as the joint selection attaches it, service-metrics-op 6.2.3
    step 3)."""

    def egress(cs_id: CsId, csci_id: CsciId) -> str | None:
        attachment = config().attachments.get(csci_id)
        if attachment is not None and attachment.egress:
            return attachment.egress
        entry = service_metrics.cst.get(cs_id, csci_id)  # one dict lookup; entries are values
        return None if entry is None or entry.egress is None else str(entry.egress)

    return egress


class ForwarderSteering:
    """The agent-selection :class:`Steering` seam over the southbound (agent draft 8.1 P8, 9.1
    MSG-10): a commitment's ``steering/rule`` is intended at every ingress forwarder of the
    inventory that handles the session's CS-ID, with the egress its instance is attached to,
    and withdrawn from every forwarder it was intended at. The SteeringService's intended state
    is keyed by commitment id, so instructing twice is one rule; its workers write the
    differences with edit-config. The forwarders and the egress are looked up at each
    instruction: one with no egress known or no forwarder concerned yet is reported pending,
    and agent selection hands it again at its next sweep until it is placed."""

    def __init__(
        self,
        steering: SteeringService,
        inventory: Callable[[], Inventory],
        egress: Callable[[CsId, CsciId], str | None],
    ) -> None:
        self._steering = steering
        self._inventory = inventory
        self._egress = egress
        self._guard = threading.Lock()
        self._placed: dict[str, frozenset[str]] = {}  # commitment id: forwarder names
        self._pending: dict[str, str] = {}  # commitment id: what was missing, logged once

    def concerned(self, cs_id: CsId) -> frozenset[str]:
        """The ingress forwarders of the inventory that handle ``cs_id``."""
        forwarders = self._inventory().forwarders
        return frozenset(f.name for f in forwarders if f.ingress and cs_id in f.cs_ids)

    def instruct(self, instruction: SteeringInstruction) -> Placement:
        """Intend the rule at the forwarders concerned (and no longer at any other); pending
        while no egress is known for the instance (a normal rule names it; a rule placed
        before stays as it was) or no forwarder handles the service."""
        commitment_id = instruction.commitment_id
        egress = self._egress(instruction.cs_id, instruction.csci_id)
        if egress is None:
            with self._guard:
                placed = self._placed.get(commitment_id, frozenset())
            missing = f"no egress forwarder known for {instruction.csci_id}"
            return self._pending_at(commitment_id, placed, missing)
        names = self.concerned(instruction.cs_id)
        rule = steering_rule(instruction, egress)
        with self._guard:
            before = self._placed.get(commitment_id, frozenset())
            self._placed[commitment_id] = names
        for name in sorted(names):
            self._steering.intend_rule(name, rule)
        for name in sorted(before - names):
            self._steering.withdraw_rule(name, commitment_id)
        if not names:
            return self._pending_at(
                commitment_id, names, f"no forwarder handles {instruction.cs_id}"
            )
        with self._guard:
            missing_before = self._pending.pop(commitment_id, None)
        if missing_before is not None:
            LOG.info("commitment %s: steering rule placed at %s", commitment_id, sorted(names))
        return Placement(names)

    def _pending_at(self, commitment_id: str, placed: frozenset[str], missing: str) -> Placement:
        """A pending placement, logged when what is missing changes (not at each retry)."""
        with self._guard:
            changed = self._pending.get(commitment_id) != missing
            self._pending[commitment_id] = missing
        if changed:
            LOG.warning("commitment %s: %s, steering rule pending", commitment_id, missing)
        return Placement(placed, missing)

    def withdraw(self, instruction: SteeringInstruction) -> None:
        """Withdraw the rule from every forwarder it was intended at."""
        with self._guard:
            names = self._placed.pop(instruction.commitment_id, frozenset())
            self._pending.pop(instruction.commitment_id, None)
        for name in sorted(names):
            self._steering.withdraw_rule(name, instruction.commitment_id)


#: How long the C-PS waits for a C-SMA's answer (query-state, reserve-state, release-state).
CSMA_TIMEOUT_S = 10.0


def install_agent_selection(
    registrations: Registrations, host: Host, steering: Steering | None = None
) -> Hosted:
    """Agent selection (controller.agent_selection): the RPCs of ietf-cats-agent-selection,
    configured by its ``agent-selection`` container in running, notifying on the NETCONF
    stream, calling the C-SMAs with the credentials configured for each, and handing its
    steering instructions to ``steering`` (to nobody when None)."""
    config = RunningAgentConfig(host.core)
    agents = ConfiguredStateAgents(config, NetconfLogins(PeerSettings(timeout=CSMA_TIMEOUT_S)))
    settings = AgentSelectionSettings(state_dir=host.settings.state_dir)  # reuse-key scope
    if steering is not None:
        settings = replace(settings, steering=steering)
    service = AgentSelection(config, agents, publish=host.publish, settings=settings)
    register_agent_selection(registrations, service)  # plugins may replace its entries
    return service


def install_cps(registrations: Registrations, host: Host) -> Hosted:
    """The C-PS of ``catsctl serve``: service metrics, agent selection handing its commitments
    to the forwarders, and the steering of the forwarders, started in that order. Agent
    selection starts before the steering workers, so any commitment it holds at start is
    intended before their first reconciliation, which would otherwise remove its rule from the
    forwarders."""
    service_metrics, steering, config = _service_metrics(registrations, host)
    seam = ForwarderSteering(
        steering, RunningInventory(host.core), attached_egress(config, service_metrics)
    )
    agents = install_agent_selection(registrations, host, seam)
    return Composed((service_metrics, agents, steering))


def is_new_state_dir(state_dir: Path) -> bool:
    """Whether a state directory holds nothing yet (``--init-data`` applies only then)."""
    return not state_dir.is_dir() or not any(state_dir.iterdir())


def seed_running(core: Core, init_data: Path) -> Revision:
    """Replace running with the ``--init-data`` document (JSON, or XML by its suffix)."""
    encoding = Encoding.XML if init_data.suffix.lower() == ".xml" else Encoding.JSON
    text = init_data.read_text(encoding="utf-8")
    LOG.info("seeding running from %s", init_data)
    return core.edit(
        DatastoreName.RUNNING, [Edit(EditOperation.REPLACE, DataPath("/"), text, encoding)], SYSTEM
    )


class Application:
    """A running server: schema, core, RESTCONF and NETCONF servers and the installed
    application (the C-PS by default); ``with`` owns them all."""

    def __init__(self, settings: ServeSettings, installer: Installer = install_cps) -> None:
        self.settings = settings
        self.schema = server_schema(settings.yang_dirs)
        listen = settings.listen
        registrations = Registrations()
        registrations.state[DataPath(f"/{MONITORING}")] = lambda: monitoring_state(
            self.core.streams(), listen.base_url
        )
        self.netconf: NetconfParts | None = None
        registrations.state[DataPath("/ietf-netconf-monitoring:netconf-state")] = (
            self._netconf_state
        )
        fresh = is_new_state_dir(settings.state_dir)  # before an installer keeps files there
        self.hosted = installer(
            registrations, Host(settings, lambda: self.core, self._publish_notification)
        )
        try:
            apply_plugins(settings.plugins, registrations)
            access: AccessCheck = permit_all
            if settings.read_only_groups:
                access = ReadOnlyGroups(frozenset(settings.read_only_groups))
            self.core = Core(self.schema, settings.state_dir, registrations, access)
        except BaseException:
            self.schema.close()
            raise
        if fresh and settings.init_data is not None:
            seed_running(self.core, settings.init_data)
        resolver = PathResolver(self.schema.context)
        started = datetime.now(UTC)
        info = ServerInfo(_yang_library_version(self.schema), _schema_id(self.schema), started)
        self.users = users = LocalUsers(self.core)
        authenticator = Authenticator(users.check_password)
        app = create_app(
            Restconf(self.core, resolver, info, NotificationCodec(self.schema.context).to_xml),
            authenticator.authenticate,
            users.groups,
            max_body_size=listen.max_body_size,
        )
        self.server = RestconfServer(app, listen)
        self.netconf = build_netconf(
            self.core,
            self.schema,
            resolver,
            settings.netconf,
            settings.state_dir,
            settings.yang_dirs,
            users,
        )

    def _publish_notification(self, document: dict[str, object]) -> None:
        """Put an application notification on the NETCONF stream (validated by the core)."""
        try:
            self.core.publish("NETCONF", json.dumps(document))
        except CatsError:  # the application's fault; the report or decision stands
            LOG.exception("an application notification failed validation")

    def _netconf_state(self) -> dict[str, object]:
        return self.netconf.state() if self.netconf is not None else {}

    def __enter__(self) -> Application:
        self.hosted.start()  # the C-PS: the sweeper (throttled reports, aging, ledger)
        if not self.users.password_hashes():
            LOG.warning(
                "no users in ietf-system:system/authentication: every request gets 401; "
                "seed one with --init-data (see catsctl hash-password)"
            )
        try:
            self.server.start()
        except BaseException:
            self.hosted.close()
            raise
        if self.netconf is not None and self.settings.netconf.port > 0:
            try:
                self.netconf.server.start()
            except BaseException:
                self.server.stop()
                self.hosted.close()
                raise
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
        self.core.close()
        self.schema.close()


def serve(
    settings: ServeSettings,
    stop: threading.Event | None = None,
    installer: Installer = install_cps,
) -> int:
    """Run the server (the C-PS by default) until ``stop`` is set; returns the exit code."""
    with Application(settings, installer):
        LOG.info("serving; state in %s", settings.state_dir)
        (stop or threading.Event()).wait()
    return 0
