"""The closed-loop bed: real processes on loopback in the shape of a small evaluation topology.

One ``catsctl service-instance`` with the prefill model per site, one ``catsctl sci`` in front
of each (its CSCI-ID), one ``catsctl csma`` for them all, the C-PS (``catsctl serve``) with the
policy under test, and an ingress ``catsctl forwarder`` the C-PS steers over NETCONF. The path
delays of the topology are reported to the C-PS as a C-NMA would (report-network-metrics); on
loopback they are not felt, so the replayer adds each request's round trip to the site that
answered it (the delay is fixed: adding it afterwards changes no queue).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.auth import hash_password
from controller.demo.client import Restconf, http_ok
from controller.demo.launch import Launcher, free_port, listening, wait_until
from controller.evaluate.topology import Topology
from controller.types import Json

SM = "ietf-cats-service-metrics"
ST = "ietf-cats-steering"
SERVICE = "llm"
INGRESS_ID = "10.0.0.1"
PASSWORD = "closed-loop"
START_TIMEOUT_S = 90.0
CNMA_HEARTBEAT_S = 2.0


@dataclass(frozen=True)
class Site:
    """One site of the bed: its instance's port, its SCI's client port (the CSCI-ID) and
    management port, its egress identifier and region."""

    name: str
    region: str
    instance: int
    sci: int
    manage: int

    @property
    def csci_id(self) -> str:
        """The SCI's client-facing locator."""
        return f"127.0.0.1:{self.sci}"

    @property
    def egress(self) -> str:
        """The site's egress forwarder identifier (the SCI's attachment)."""
        return f"egress-{self.name}"


@dataclass(frozen=True)
class Running:
    """The started bed: the C-PS client, the ingress forwarder's data plane and its RESTCONF
    (as the C-PS's user), the sites."""

    cps: Restconf
    ingress: int
    forwarder: Restconf
    sites: tuple[Site, ...]
    launcher: Launcher

    def site_of(self, csci_id: str) -> Site | None:
        """The site whose SCI has this CSCI-ID."""
        return next((s for s in self.sites if s.csci_id == csci_id), None)


def _write(path: Path, document: Json) -> Path:
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def _sci(site: Site, csma: int, capacity: int) -> Json:
    url = f"http://127.0.0.1:{site.instance}"
    return {
        "ietf-cats-sci:sci": {
            "csci-id": site.csci_id,
            "cs-id": SERVICE,
            "client-interface": {"address": "127.0.0.1", "port": site.sci},
            "c-sma": {"restconf-uri": f"http://127.0.0.1:{csma}/restconf"},
            "service-instance": [
                {
                    "si-id": f"llm-{site.name}",
                    "address": "127.0.0.1",
                    "port": site.instance,
                    "metrics-uri": f"{url}/metrics",
                    "health-uri": f"{url}/health",
                    "readiness-uri": f"{url}/ready",
                    "max-capacity": capacity,
                }
            ],
            "metric-collection": {"sampling-interval-ms": 1000},
            "health-monitoring": {
                "liveness": {"method": "http-get", "interval-ms": 2000, "timeout-ms": 1500},
                "readiness": {"interval-ms": 2000, "timeout-ms": 1500},
                "performance": {"interval-ms": 5000, "response-time-threshold": "600000.000"},
                "hysteresis": {"failures-to-down": 3, "passes-to-up": 1},
            },
            "aggregation": {
                "safety-margin": "80.000",
                "computing-time-estimator": "ietf-cats-sci:load-weighted-mean",
                "measurement-window-ms": 10_000,
                "health-batch-window-ms": 0,
            },
            "dispatch": {"algorithm": "ietf-cats-sci:round-robin"},
            "affinity": {"flow-affinity": {"enabled": False}},
            "reporting": {"heartbeat-interval-ms": 1000, "rate-limit": {"min-interval-ms": 100}},
        }
    }


def _csma(cps: str, sites: tuple[Site, ...]) -> Json:
    return {
        "name": "csma-bed",
        "site": "bed",
        "cps": {"url": cps, "username": "csma-bed", "password": PASSWORD, "timeout-ms": 5000},
        "reporting": {
            "interval-ms": 200,
            "heartbeat-ms": 1000,
            "aggregation": "per-sci",
            "computing-time-estimate": 1000,
            "thresholds": {"gas-absolute": 0, "gas-relative": 0, "computing-time-relative": 0},
        },
        "users": [
            {"name": f"sci-{s.name}", "password": PASSWORD, "role": "sci", "csci-id": [s.csci_id]}
            for s in sites
        ],
    }


def _cps_seed(policy: Json, sites: tuple[Site, ...], forwarder: tuple[int, int]) -> Json:
    users = {"admin": PASSWORD, "csma-bed": PASSWORD, "cnma": PASSWORD}
    update = dict(policy.get(f"{SM}:update-control", {}))
    update.setdefault("rate-limit", {"max-reports": 10000})
    netconf, _ = forwarder
    return {
        "ietf-system:system": {
            "authentication": {
                "user": [{"name": n, "password": hash_password(p)} for n, p in users.items()]
            }
        },
        f"{SM}:csci-attachments": {
            "attachment": [
                {"csci-id": s.csci_id, "egress": s.egress, "site": s.name} for s in sites
            ]
        },
        f"{SM}:update-control": update,
        f"{SM}:selection-policy": policy.get(f"{SM}:selection-policy", {}),
        f"{ST}:forwarders": {
            "reconcile-interval": 5,
            "confirm-timeout": 30,
            "forwarder": [
                {
                    "name": "ingress",
                    "address": "127.0.0.1",
                    "port": netconf,
                    "username": "cps",
                    "password": PASSWORD,
                    "role": ["ingress"],
                    "ingress-id": INGRESS_ID,
                    "cs-id": [SERVICE],
                }
            ],
        },
    }


def _paths(topology: Topology, sites: tuple[Site, ...], sequence: int) -> Json:
    """report-network-metrics of the C-NMA: the round trip from the ingress to each site."""
    ingress = topology.ingresses[0].region
    return {
        "sequence-number": str(sequence),
        "timestamp": datetime.now(UTC).isoformat(),
        "report-type": "full",
        "path": [
            {
                "ingress": INGRESS_ID,
                "egress": s.egress,
                "delay": f"{topology.rtt_ms[ingress][s.region]:.3f}",
            }
            for s in sites
        ],
    }


def _start_sites(
    launcher: Launcher, folder: Path, topology: Topology, csma: int
) -> tuple[Site, ...]:
    sites = tuple(
        Site(i.site, i.region, free_port(), free_port(), free_port()) for i in topology.instances
    )
    for site, instance in zip(sites, topology.instances, strict=True):
        spec = instance.spec
        launcher.start(
            f"instance-{site.name}",
            [
                "service-instance",
                "--listen",
                f"127.0.0.1:{site.instance}",
                "--name",
                f"llm-{site.name}",
                "--capacity",
                str(spec.batch_limit),
                "--prefill-rate",
                str(spec.prefill_rate),
                "--kv-blocks",
                str(spec.kv_blocks),
                "--block-tokens",
                str(topology.block_tokens),
            ],
        )
        config = _write(folder / f"sci-{site.name}.json", _sci(site, csma, spec.batch_limit))
        launcher.start(
            f"sci-{site.name}",
            [
                "sci",
                "--config",
                str(config),
                "--state-dir",
                str(folder / f"sci-{site.name}"),
                "--username",
                f"sci-{site.name}",
                "--password",
                PASSWORD,
                "--manage",
                f"127.0.0.1:{site.manage}",
            ],
        )
    return sites


def _ready(launcher: Launcher, what: str, probe: Any) -> None:
    def alive_and() -> bool:
        launcher.check_alive()
        return bool(probe())

    wait_until(what, alive_and, timeout=START_TIMEOUT_S)


@contextlib.contextmanager
def start(folder: Path, topology: Topology, policy: Json) -> Iterator[Running]:
    """Start the bed for one C-PS policy; stop everything when the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    with Launcher(folder) as launcher:
        restconf, netconf, csma = free_port(), free_port(), free_port()
        data, fw_netconf, fw_restconf = free_port(), free_port(), free_port()
        forwarder = {
            "forwarder-id": INGRESS_ID,
            "role": ["ingress"],
            "data-plane": {"threads": 256, "read-timeout-ms": 300_000},
            "users": [{"name": "cps", "password": PASSWORD}],
        }
        launcher.start(
            "forwarder",
            [
                "forwarder",
                "--config",
                str(_write(folder / "forwarder.json", forwarder)),
                "--state-dir",
                str(folder / "forwarder"),
                "--clean",
                "--listen",
                f"127.0.0.1:{data}",
                "--netconf-port",
                str(fw_netconf),
                "--restconf-port",
                str(fw_restconf),
            ],
        )
        sites = _start_sites(launcher, folder, topology, csma)
        seed = _write(folder / "cps-init.json", _cps_seed(policy, sites, (fw_netconf, 0)))
        launcher.start(
            "cps",
            [
                "serve",
                "--state-dir",
                str(folder / "cps"),
                "--init-data",
                str(seed),
                "--restconf-port",
                str(restconf),
                "--netconf-port",
                str(netconf),
            ],
        )
        url = f"http://127.0.0.1:{restconf}/restconf"
        cps = Restconf(url, "admin", PASSWORD)
        _ready(launcher, "the C-PS", lambda: listening(restconf) and cps.up())
        csma_config = _write(folder / "csma.json", _csma(url, sites))
        launcher.start(
            "csma",
            [
                "csma",
                "--config",
                str(csma_config),
                "--state-dir",
                str(folder / "csma"),
                "--restconf-port",
                str(csma),
                "--netconf-port",
                "0",
            ],
        )
        _ready(launcher, "the C-SMA", lambda: listening(csma))
        _ready(
            launcher,
            "the instances and SCIs",
            lambda: all(
                http_ok(f"http://127.0.0.1:{s.instance}/health")
                and http_ok(f"http://127.0.0.1:{s.manage}/state")
                for s in sites
            ),
        )
        stop = threading.Event()
        reporter = threading.Thread(
            target=_cnma, args=(url, topology, sites, stop), name="cnma", daemon=True
        )
        reporter.start()
        _ready(launcher, "every SCI in the C-PS's CST", lambda: _reported(cps, sites))
        steering = Restconf(f"http://127.0.0.1:{fw_restconf}/restconf", "cps", PASSWORD)
        running = Running(cps, data, steering, sites, launcher)
        _ready(launcher, "the ingress steered to an SCI", lambda: steered(running) is not None)
        try:
            yield running
        finally:
            stop.set()
            reporter.join()
            steering.close()
            cps.close()


def _cnma(url: str, topology: Topology, sites: tuple[Site, ...], stop: threading.Event) -> None:
    """Report the path delays every CNMA_HEARTBEAT_S seconds, as a C-NMA does (an NST entry
    older than a CST entry by the time-sync window is not combined with it, 6.2.2)."""
    cnma = Restconf(url, "cnma", PASSWORD)
    sequence = 0
    try:
        while not stop.is_set():
            sequence += 1
            with contextlib.suppress(Exception):
                cnma.call(SM, "report-network-metrics", _paths(topology, sites, sequence))
            stop.wait(CNMA_HEARTBEAT_S)
    finally:
        cnma.close()


def _reported(cps: Restconf, sites: tuple[Site, ...]) -> bool:
    """Whether the C-PS's CST holds an entry of every SCI of the bed."""
    with contextlib.suppress(Exception):
        table = cps.get(f"{SM}:computing-service-table").get(f"{SM}:computing-service-table", {})
        held = {str(e.get("csci-id")) for e in table.get("entry", [])}
        return all(s.csci_id in held for s in sites)
    return False


def steered(running: Running) -> str | None:
    """The CSCI-ID the ingress forwarder's steering of the llm service names now, if any."""
    with contextlib.suppress(Exception):
        document = running.forwarder.get(f"{ST}:steering").get(f"{ST}:steering", {})
        for service in document.get("service", []):
            if str(service.get("cs-id")) == SERVICE and service.get("csci-id"):
                csci: str = service["csci-id"]
                return csci if listening(running.ingress) else None
    return None
