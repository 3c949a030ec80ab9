"""The running system of the demo: the C-PS, service instances, SCIs, C-SMAs and the C-NMA on
loopback (service-metrics-op 7.1), started in dependency order and stopped together.

:func:`start_bed` is a context manager; the :class:`Bed` it yields reads the C-PS's tables,
asks it for decisions, changes the network (the C-NMA's topology file, then SIGHUP) and the
service instances (their admin endpoint), and sends client requests through the SCIs.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests

from controller.auth import hash_password
from controller.demo import episode
from controller.demo import topology as t
from controller.demo.client import Restconf, http_ok, post_json
from controller.demo.expect import Decision
from controller.demo.forwarders import RunningForwarder, forwarder_up, start_forwarders
from controller.demo.launch import Child, Launcher, free_port, listening, port_taken, wait_until

START_TIMEOUT_S = 120.0  # a ceiling, not a pace: start-up on a loaded 2-core machine
START_ATTEMPTS = 3
Entries = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class BedSettings:
    """Where the state goes, the passwords, the C-PS's heartbeat interval (s), and whether
    the forwarders are started too, and the agent selection of the step-30 episode (the site
    C-SMAs answering for its candidates over NETCONF, the C-PS configured for them)."""

    folder: Path
    admin_password: str = "cats-demo"
    agent_password: str = "agent-secret"
    operator_password: str = "operator-demo"  # the console's users of the operator and
    observer_password: str = "observer-demo"  # observer groups (controller.auth.policy)
    heartbeat: int = 2
    forwarders: bool = False
    agents: bool = False
    progress: Callable[[str], None] = field(default=lambda line: None, compare=False)


@dataclass(frozen=True)
class CsmaPorts:
    """A site C-SMA's RESTCONF port, NETCONF port (0: none) and management port (/metrics;
    0: any free one)."""

    restconf: int
    netconf: int = 0
    metrics: int = 0


@dataclass(frozen=True)
class Addresses:
    """Where the processes listen, chosen before any starts: the C-PS's ports, the SCIs'
    CSCI-IDs by label, the C-SMAs' ports by site, the episode's candidates' CSCI-IDs by
    letter (none without agents)."""

    ports: dict[str, int]
    csci_ids: dict[str, str]
    csmas: dict[str, CsmaPorts]
    locators: dict[str, str]


@dataclass
class RunningSci:
    """An SCI: its spec, its client and management ports, its instances' ports."""

    spec: t.SciSpec
    port: int
    manage: int
    instance_ports: dict[str, int]
    child: Child | None = None

    @property
    def csci_id(self) -> str:
        """The CSCI-ID it reports: its client-facing locator."""
        return self.spec.csci_id(self.port)

    @property
    def url(self) -> str:
        """Where clients send requests (its CSCI-ID)."""
        return f"http://{self.csci_id}"


@dataclass
class Bed:
    """The running system and what the scenarios do with it."""

    settings: BedSettings
    launcher: Launcher
    cps: Restconf
    ports: dict[str, int]
    scis: dict[str, RunningSci]
    cnma: Child
    cnma_path: Path
    forwarders: dict[str, RunningForwarder] = field(default_factory=dict)
    csmas: dict[str, CsmaPorts] = field(default_factory=dict)
    locators: dict[str, str] = field(default_factory=dict)  # the episode's B and C: CSCI-IDs
    sessions: dict[str, requests.Session] = field(default_factory=dict)

    def csci(self, label: str) -> str:
        """The CSCI-ID of an SCI by its label."""
        return self.scis[label].csci_id

    @property
    def labels(self) -> dict[str, str]:
        """CSCI-ID -> the draft's name, e.g. ``SCI-3 188.3.67.4:69``."""
        return {s.csci_id: f"{s.spec.label} {s.spec.draft_csci_id}" for s in self.scis.values()}

    def label_of(self, csci_id: str) -> str | None:
        """The label (``SCI-3``) of a CSCI-ID."""
        return next((k for k, s in self.scis.items() if s.csci_id == csci_id), None)

    def select(self, requirement: dict[str, Any] | None = None) -> Decision:
        """select-service for ARS at the ingress, every candidate reported (6.2.3)."""
        members: dict[str, Any] = {"cs-id": "ARS", "ingress": t.INGRESS}
        if requirement:
            members["requirement"] = requirement
        return Decision.from_json(self.cps.call(t.SM, "select-service", members))

    def cst(self) -> Entries:
        """The Computing Service Table by CSCI-ID."""
        found = self.cps.get(f"{t.SM}:computing-service-table")
        entries = found.get(f"{t.SM}:computing-service-table", {}).get("entry", [])
        return {e["csci-id"]: e for e in entries}

    def nst(self) -> Entries:
        """The Network Service Table entries of the ingress, by egress."""
        found = self.cps.get(f"{t.SM}:network-service-table")
        entries = found.get(f"{t.SM}:network-service-table", {}).get("entry", [])
        return {e["egress"]: e for e in entries if e["ingress"] == t.INGRESS}

    def set_paths(self, paths_ms: dict[str, str], timeout: float = 30.0) -> None:
        """Change the topology so that each egress is reached in the given delay, reload the
        C-NMA (SIGHUP), and wait until the NST shows every new delay."""
        links = {egress: t.link_delay_for(ms) for egress, ms in paths_ms.items()}
        current = {e: t.link_delay_for(ms) for e, ms in self.path_delays().items()}
        document = t.cnma_config(f"{self.cps.root}", self.settings.agent_password, current | links)
        t.write_json(self.cnma_path, document)
        self.cnma.signal(signal.SIGHUP)

        def shown() -> bool:
            table = self.nst()
            return all(
                e in table and Decimal(table[e]["network-delay"]) == Decimal(ms)
                for e, ms in paths_ms.items()
            )

        wait_until(f"NST delays {paths_ms}", shown, timeout=timeout, seen=self.path_delays)

    def path_delays(self) -> dict[str, str]:
        """The NST's delays by egress, in ms."""
        return {e: str(entry["network-delay"]) for e, entry in self.nst().items()}

    def admin(self, label: str, **switches: object) -> None:
        """Set the failure switches of every instance of one SCI (slow_ms, health, ...)."""
        body = {key.replace("_", "-"): value for key, value in switches.items()}
        sci = self.scis[label]
        for port in sci.instance_ports.values():
            post_json(f"http://127.0.0.1:{port}/admin", body)

    def served(self) -> dict[str, int]:
        """Requests served so far, per service instance."""
        counts = {}
        for sci in self.scis.values():
            for name, port in sci.instance_ports.items():
                reply = requests.get(f"http://127.0.0.1:{port}/admin", timeout=5)
                counts[name] = int(reply.json()["requests"])
        return counts

    def drive(self, labels: tuple[str, ...], rounds: int) -> list[int]:
        """Send ``rounds`` requests to each SCI, interleaved; their statuses."""
        statuses = []
        for _ in range(rounds):
            for label in labels:
                session = self.sessions.setdefault(label, requests.Session())
                try:
                    reply = session.get(f"{self.scis[label].url}/ars", timeout=10)
                    statuses.append(reply.status_code)
                except requests.RequestException:
                    statuses.append(0)
        return statuses

    def wait_cst(
        self,
        what: str,
        holds: Callable[[Entries], bool],
        *,
        drive: tuple[str, ...] = (),
        timeout: float = 45.0,
    ) -> Entries:
        """Wait until the CST satisfies ``holds``, sending requests through ``drive`` meanwhile
        so that the SCIs keep observing response times."""
        seen: list[Entries] = [{}]

        def probe() -> Entries | None:
            if drive:
                self.drive(drive, 5)
            self.launcher.check_alive()
            seen[0] = table = self.cst()
            return table if holds(table) else None

        return wait_until(what, probe, timeout=timeout, seen=lambda: brief(seen[0]))

    def close(self) -> None:
        """Close the HTTP sessions."""
        for session in self.sessions.values():
            session.close()
        self.cps.close()


def brief(table: Entries) -> dict[str, str]:
    """A CST in one line per entry: GAS, CT, health."""
    return {
        k: f"GAS {e.get('gas')} CT {e.get('computing-time', '-')} {e.get('health', '-')}"
        for k, e in table.items()
    }


def cps_groups(settings: BedSettings) -> dict[str, list[str]]:
    """Every process logs in to the C-PS as its own user, in its role's group (least
    privilege, controller.auth.policy); the demo's driver is the administrator."""
    groups = {"admin": ["admin"], "cnma": ["cnma"], "csma": [site.csma for site in t.SITES]}
    groups |= {"operator": ["operator"], "observer": ["observer"]}
    if settings.agents:
        groups["gateway"] = [episode.GATEWAY_USER]
    return groups


def _start_cps(launcher: Launcher, settings: BedSettings, where: Addresses) -> Child:
    users = {"admin": settings.admin_password, "cnma": settings.agent_password}
    users |= {"operator": settings.operator_password, "observer": settings.observer_password}
    users |= {site.csma: settings.agent_password for site in t.SITES}
    if settings.agents:
        users[episode.GATEWAY_USER] = settings.agent_password
    hashes = {name: hash_password(password) for name, password in users.items()}
    seed = t.cps_seed(hashes, cps_groups(settings), where.csci_ids, settings.heartbeat)
    if settings.agents:
        netconf = {site: p.netconf for site, p in where.csmas.items()}
        seed = episode.with_agent_selection(seed, netconf, settings.agent_password, where.locators)
    ports = where.ports
    path = t.write_json(settings.folder / "cps-init.json", seed)
    return launcher.start(
        "cps",
        [
            "serve",
            "--state-dir",
            str(settings.folder / "cps"),
            "--init-data",
            str(path),
            "--restconf-port",
            str(ports["restconf"]),
            "--netconf-port",
            str(ports["netconf"]),
        ],
    )


def _csma_ports(settings: BedSettings) -> dict[str, CsmaPorts]:
    """The ports of each site's C-SMA: NETCONF and a known management port too when it
    answers for agent state (the demo reads its advertisements' count there)."""
    if not settings.agents:
        return {site.site: CsmaPorts(free_port()) for site in t.SITES}
    return {site.site: CsmaPorts(free_port(), free_port(), free_port()) for site in t.SITES}


def _start_csmas(launcher: Launcher, settings: BedSettings, cps: str, where: Addresses) -> None:
    password = settings.agent_password
    for site in t.SITES:
        config = t.csma_config(site, cps, password, where.csci_ids)
        if settings.agents:
            config = episode.with_agent_csma(config, site, password, where.locators)
        path = t.write_json(settings.folder / f"{site.csma}.json", config)
        port = where.csmas[site.site]
        launcher.start(
            site.csma,
            [
                "csma",
                "--config",
                str(path),
                "--state-dir",
                str(settings.folder / site.csma),
                "--restconf-port",
                str(port.restconf),
                "--netconf-port",
                str(port.netconf),
                "--metrics-address",
                f"127.0.0.1:{port.metrics}",
            ],
        )


def _start_scis(
    launcher: Launcher, settings: BedSettings, csmas: dict[str, int], scis: list[RunningSci]
) -> None:
    for sci in scis:
        csma = f"http://127.0.0.1:{csmas[sci.spec.site]}/restconf"
        config = t.sci_config(sci.spec, sci.port, csma, sci.instance_ports)
        path = t.write_json(settings.folder / f"{sci.spec.label}.json", config)
        sci.child = launcher.start(
            sci.spec.label,
            [
                "sci",
                "--config",
                str(path),
                "--state-dir",
                str(settings.folder / sci.spec.label),
                "--username",
                sci.spec.user,
                "--password",
                settings.agent_password,
                "--manage",
                f"127.0.0.1:{sci.manage}",
            ],
        )


def _sci_answers(sci: RunningSci) -> bool:
    """Whether the SCI itself answers on its management port: its /state names its CSCI-ID.

    Not any 2xx: another program on the machine that took the port between its choice and the
    SCI's bind answered once, the SCI exited after the start-up had passed (Address already in
    use) and the demo failed in stage A instead of starting again on fresh ports.
    """
    with contextlib.suppress(requests.RequestException, ValueError, AttributeError):
        reply = requests.get(f"http://127.0.0.1:{sci.manage}/state", timeout=1)
        return bool(reply.json().get("ietf-cats-sci:sci", {}).get("csci-id") == sci.csci_id)
    return False


def _locator_port(spec: t.SciSpec) -> int:
    """A free port on the SCI's loopback twin address.

    Not the draft's port + 20000: that one is the same for every demo on the machine, so two demos
    (a test beside a run) raced for it and one SCI failed with "Address already in use".
    """
    return free_port(spec.address)


def _ready(
    launcher: Launcher,
    what: str,
    probe: Callable[[], bool],
    progress: Callable[[str], None] = lambda line: None,
) -> None:
    """Wait until ``probe`` holds (a child that exits fails it at once); say when it did."""

    def alive_and(probe: Callable[[], bool] = probe) -> bool:
        launcher.check_alive()
        return probe()

    began = time.monotonic()
    progress(f"  waiting for {what} ...")
    wait_until(what, alive_and, timeout=START_TIMEOUT_S)
    progress(f"  {what}: up after {time.monotonic() - began:.1f} s")


@contextlib.contextmanager
def start_bed(settings: BedSettings) -> Iterator[Bed]:
    """Start every process in order, wait until each answers; stop them all at the end.

    A child that finds its port taken (another program on the machine bound it between the
    choice and the child's start) fails the start-up; then everything is stopped and started
    again on fresh ports in a fresh sub-folder, up to :data:`START_ATTEMPTS` times.
    """
    for attempt in range(1, START_ATTEMPTS + 1):
        folder = settings.folder if attempt == 1 else settings.folder / f"start-{attempt}"
        folder.mkdir(parents=True, exist_ok=True)
        stack = contextlib.ExitStack()
        try:
            bed = stack.enter_context(_started(replace(settings, folder=folder)))
        except (RuntimeError, OSError) as exc:
            stack.close()
            if attempt == START_ATTEMPTS or not port_taken(exc):
                raise
            settings.progress(f"  a port was taken meanwhile; starting again ({exc})")
            continue
        with stack:
            yield bed
        return


@contextlib.contextmanager
def _started(settings: BedSettings) -> Iterator[Bed]:
    """One start-up of every process, in order."""
    with Launcher(settings.folder) as launcher:
        ports = {"restconf": free_port(), "netconf": free_port()}
        scis = [
            RunningSci(s, _locator_port(s), free_port(), {i.name: free_port() for i in s.instances})
            for s in t.SCIS
        ]
        csci_ids = {s.spec.label: s.csci_id for s in scis}
        settings.progress("  starting the service instances, forwarders and the C-PS ...")
        for sci in scis:
            for spec in sci.spec.instances:
                port = sci.instance_ports[spec.name]
                launcher.start(spec.name, t.instance_args(spec, port))
        locators = {}
        for placed in episode.CANDIDATES if settings.agents else ():
            port = free_port(placed.address)
            locators[placed.letter] = f"{placed.address}:{port}"
            launcher.start(f"agent-{placed.letter}", episode.instance_args(placed, port))
        password = settings.agent_password
        forwarders = (
            start_forwarders(launcher, settings.folder, password) if settings.forwarders else {}
        )
        csmas = _csma_ports(settings)
        where = Addresses(ports, csci_ids, csmas, locators)
        _start_cps(launcher, settings, where)
        cps_url = f"http://127.0.0.1:{ports['restconf']}/restconf"
        cps = Restconf(cps_url, "admin", settings.admin_password)
        say = settings.progress
        _ready(launcher, "the C-PS", lambda: listening(ports["restconf"]) and cps.up(), say)
        _start_csmas(launcher, settings, cps_url, where)
        cnma_path = t.write_json(
            settings.folder / "cnma.json", t.cnma_config(cps_url, settings.agent_password)
        )
        cnma = launcher.start(
            "cnma",
            [
                "cnma",
                "--config",
                str(cnma_path),
                "--state-dir",
                str(settings.folder / "cnma"),
            ],
        )
        _ready(
            launcher,
            "the C-SMAs",
            lambda: all(
                listening(p.restconf) and (not p.netconf or listening(p.netconf))
                for p in csmas.values()
            ),
            say,
        )
        _ready(
            launcher,
            "the service instances",
            lambda: (
                all(
                    http_ok(f"http://127.0.0.1:{p}/health")
                    for s in scis
                    for p in s.instance_ports.values()
                )
                and all(http_ok(f"http://{loc}/health") for loc in locators.values())
            ),
            say,
        )
        _start_scis(launcher, settings, {k: p.restconf for k, p in csmas.items()}, scis)
        _ready(
            launcher,
            "the SCIs",
            lambda: all(_sci_answers(s) for s in scis),
            say,
        )
        _ready(
            launcher,
            "the forwarders",
            lambda: all(forwarder_up(f, password) for f in forwarders.values()),
            say,
        )
        labelled = {s.spec.label: s for s in scis}
        bed = Bed(
            settings, launcher, cps, ports, labelled, cnma, cnma_path, forwarders, csmas, locators
        )
        try:
            yield bed
        finally:
            bed.close()
