"""The demo's system as in service-metrics-op 7.1, and the configuration of each process.

Two service sites: SS2 behind CF-2 (188.3.67.3) with SCI-1 (ARS, 188.3.67.3:67) and SCI-2
(VRS, 188.3.67.3:68), SS3 behind CF-3 (188.3.67.4) with SCI-3 (ARS, 188.3.67.4:69). A locator
CSCI-ID must be the SCI's own client-facing address and port (ietf-cats-sci), so each SCI
listens on a loopback twin of the draft's locator, 188.3.67.3:67 -> 127.3.67.3:20067 (an
ephemeral port if that one is taken; no low ports, no extra addresses needed), and the legend
maps one to the other. The egress forwarders keep the draft's names (188.3.67.3, 188.3.67.4):
the C-PS's csci-attachments place each loopback CSCI-ID at its draft egress. GAS follows from the
instances' capacity (sci-implementation 4.3: floor(0.8 x 500) = 400, floor(0.8 x 750) = 600);
Computing Time is the median response time each SCI observes over 2 s, from fixed service
times of 5, 15 and 6 ms; price is each SCI's
configured optional metric ``cost`` (Table 1), carried by the C-SMA into the CST. The 7.1
LLMS instance (188.3.67.4:70) is left out: no scenario selects LLMS.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from controller.auth.policy import default_policy
from controller.demo.launch import ROOT
from controller.types import Json

SM = "ietf-cats-service-metrics"
INGRESS = "10.0.0.1"
CF2, CF3 = "188.3.67.3", "188.3.67.4"
CNMA_EXAMPLE = ROOT / "docs" / "examples" / "cnma-7.1.toml"
SAFETY_MARGIN = "80.000"
LOCATOR_PORT_BASE = 20000
# Performance check (5.2): a mean response time above this is DEGRADED. Far above what a loaded
# two-core machine adds to a 5-6 ms instance (40 ms seen at load 22), far below a slowed one.
SLOW_THRESHOLD_MS = "150.000"


@dataclass(frozen=True)
class InstanceSpec:
    """A ``catsctl service-instance``: its name, slots and fixed service time."""

    name: str
    capacity: int
    service_ms: int


@dataclass(frozen=True)
class SciSpec:
    """An SCI of section 7.1 and the service instances behind it."""

    label: str
    draft_csci_id: str
    cs_id: str
    site: str
    egress: str
    price: int
    instances: tuple[InstanceSpec, ...]

    @property
    def user(self) -> str:
        """Its user at its C-SMA."""
        return f"sci-{self.label[-1]}"

    @property
    def address(self) -> str:
        """The loopback twin of the draft's address: 188.3.67.3 -> 127.3.67.3."""
        return "127." + self.draft_csci_id.split(".", 1)[1].rsplit(":", 1)[0]

    @property
    def preferred_port(self) -> int:
        """20000 + the draft's port: 67 -> 20067."""
        return LOCATOR_PORT_BASE + int(self.draft_csci_id.rsplit(":", 1)[1])

    def csci_id(self, port: int) -> str:
        """The CSCI-ID it reports: its client-facing address and port."""
        return f"{self.address}:{port}"


@dataclass(frozen=True)
class SiteSpec:
    """A service site and its C-SMA."""

    site: str
    egress: str

    @property
    def csma(self) -> str:
        """The C-SMA's name, also its user at the C-PS."""
        return f"csma-{self.site.lower()}"


SITES = (SiteSpec("SS2", CF2), SiteSpec("SS3", CF3))
SCIS = (
    SciSpec("SCI-1", "188.3.67.3:67", "ARS", "SS2", CF2, 10,
            (InstanceSpec("ars-1a", 250, 5), InstanceSpec("ars-1b", 250, 5))),
    SciSpec("SCI-2", "188.3.67.3:68", "VRS", "SS2", CF2, 20, (InstanceSpec("vrs-2a", 125, 15),)),
    SciSpec("SCI-3", "188.3.67.4:69", "ARS", "SS3", CF3, 5,
            (InstanceSpec("ars-3a", 375, 6), InstanceSpec("ars-3b", 375, 6))),
)  # fmt: skip
BY_LABEL = {sci.label: sci for sci in SCIS}


@dataclass(frozen=True)
class Credentials:
    """A user and password of the demo."""

    user: str
    password: str


def cps_seed(
    users: dict[str, str],
    groups: dict[str, list[str]],
    csci_ids: dict[str, str],
    heartbeat: int,
) -> Json:
    """``--init-data`` of the C-PS: users (name -> crypt hash) in the groups of the shipped
    least-privilege policy (group -> members, controller.auth.policy), the 7.1 attachments of
    the CSCI-IDs (label -> CSCI-ID), update control with a short heartbeat (expiry 3 x
    heartbeat) and room for the demo's reports."""
    return {
        "ietf-system:system": {
            "authentication": {"user": [{"name": n, "password": h} for n, h in users.items()]}
        },
        **default_policy(groups),
        f"{SM}:csci-attachments": {
            "attachment": [
                {"csci-id": csci_ids[s.label], "egress": s.egress, "site": s.site} for s in SCIS
            ]
        },
        f"{SM}:update-control": {
            "heartbeat-interval": heartbeat,
            "rate-limit": {"max-reports": 1000},
        },
    }


def instance_args(spec: InstanceSpec, port: int, address: str = "127.0.0.1") -> list[str]:
    """``catsctl service-instance`` arguments: fixed service time, ``capacity`` slots."""
    return [
        "service-instance",
        "--listen",
        f"{address}:{port}",
        "--name",
        spec.name,
        "--capacity",
        str(spec.capacity),
        "--service-time",
        "fixed",
        "--mean-ms",
        str(spec.service_ms),
    ]


def sci_config(spec: SciSpec, port: int, csma_url: str, ports: dict[str, int]) -> Json:
    """The SCI's ``ietf-cats-sci:sci``: 1 s checks, hysteresis 2/2, 1 s heartbeat, its price."""
    return {
        "ietf-cats-sci:sci": {
            "csci-id": spec.csci_id(port),
            "cs-id": spec.cs_id,
            "client-interface": {"address": spec.address, "port": port},
            "c-sma": {"restconf-uri": csma_url},
            "service-instance": [_instance(i, ports[i.name]) for i in spec.instances],
            "optional-metrics": {"cost": spec.price},
            "metric-collection": {"sampling-interval-ms": 1000},
            "health-monitoring": {
                "liveness": {"method": "http-get", "interval-ms": 1000, "timeout-ms": 500},
                "readiness": {"interval-ms": 1000, "timeout-ms": 500},
                "performance": {"interval-ms": 1000, "response-time-threshold": SLOW_THRESHOLD_MS},
                "hysteresis": {"failures-to-down": 2, "passes-to-up": 2},
            },
            "aggregation": {
                "safety-margin": SAFETY_MARGIN,
                "degradation-factor": "50.000",
                "computing-time-estimator": "ietf-cats-sci:percentile",
                "estimator-rank": "50.0",  # the median: robust to a scheduling hiccup
                "measurement-window-ms": 2000,
                "health-batch-window-ms": 0,
            },
            "dispatch": {"algorithm": "ietf-cats-sci:round-robin"},
            "affinity": {"flow-affinity": {"enabled": False}},  # stateless requests
            "reporting": {"heartbeat-interval-ms": 1000, "rate-limit": {"min-interval-ms": 100}},
        }
    }


def _instance(spec: InstanceSpec, port: int) -> Json:
    url = f"http://127.0.0.1:{port}"
    return {
        "si-id": spec.name,
        "address": "127.0.0.1",
        "port": port,
        "metrics-uri": f"{url}/metrics",
        "health-uri": f"{url}/health",
        "readiness-uri": f"{url}/ready",
        "max-capacity": spec.capacity,
    }


def csma_config(site: SiteSpec, cps_url: str, password: str, csci_ids: dict[str, str]) -> Json:
    """A C-SMA per site, per-SCI entries: 0.2 s looks, 1 s heartbeat, 5 % CT threshold."""
    return {
        "name": site.csma,
        "site": site.site,
        "cps": {"url": cps_url, "username": site.csma, "password": password, "timeout-ms": 5000},
        "reporting": {
            "interval-ms": 200,
            "heartbeat-ms": 1000,
            "aggregation": "per-sci",
            "thresholds": {"computing-time-relative": 5},
        },
        "users": [
            {"name": s.user, "password": password, "role": "sci", "csci-id": [csci_ids[s.label]]}
            for s in SCIS
            if s.site == site.site
        ],
    }


def cnma_config(cps_url: str, password: str, delays: dict[str, str] | None = None) -> Json:
    """The 7.1 topology of docs/examples/cnma-7.1.toml with 0.2 s recomputation, a 2 s
    heartbeat, every delay change reported, and the P1 -> egress link delays as given (ms);
    its candidates (MSG-7 only) keep the draft's CSCI-IDs."""
    document = tomllib.loads(CNMA_EXAMPLE.read_text(encoding="utf-8"))
    document["cps"] = {"url": cps_url, "username": "cnma", "password": password, "timeout-ms": 5000}
    document["reporting"] |= {"interval-ms": 200, "heartbeat-ms": 2000}
    document["reporting"]["thresholds"] |= {"delay": 0, "delay-relative": 0}
    return with_link_delays(document, delays or {})


def with_link_delays(document: Json, delays: dict[str, str]) -> Json:
    """A copy with the P1 -> egress links' delays replaced (min/max delay dropped there)."""
    changed = copy.deepcopy(document)
    for link in changed["topology"]["links"]:
        if link["from"] == "P1" and link["to"] in delays:
            link["delay"] = delays[link["to"]]
            link.pop("min-delay", None)
            link.pop("max-delay", None)
    return changed


#: The 7.1 access delays: ingress -> P1 is 2 ms, so CF-2 is reached in 8 ms and CF-3 in 6 ms.
ACCESS_MS = 2
P1_LINK_MS = {CF2: "6", CF3: "4"}


def link_delay_for(path_ms: str) -> str:
    """The P1 -> egress link delay that gives a path delay of ``path_ms`` from the ingress."""
    return str(Decimal(path_ms) - ACCESS_MS)


def write_json(path: Path, document: Json) -> Path:
    """Write a document as JSON; returns the path."""
    import json  # noqa: PLC0415

    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path
