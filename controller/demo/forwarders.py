"""The demo's CATS-Forwarders: the ingress forwarder 10.0.0.1 and the egress forwarders CF-2
(188.3.67.3) and CF-3 (188.3.67.4) of service-metrics-op 7.1, each a ``catsctl forwarder`` on
loopback, and the C-PS's forwarder inventory that names them.

The ingress tunnels to each egress forwarder's data-plane port; the egress forwarders deliver
to the CSCI-ID the ingress names (6.2.3 step 7). The C-PS logs in at each forwarder as
:data:`USER` and writes ``ietf-cats-steering:steering`` over NETCONF; the demo reads what a
forwarder holds, and its counters, over the forwarder's RESTCONF.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import requests

from controller.demo.client import Restconf, RestconfError
from controller.demo.launch import Child, Launcher, free_port, listening
from controller.demo.topology import CF2, CF3, INGRESS, write_json
from controller.types import Json

ST = "ietf-cats-steering"
USER = "cps"  # the C-PS's user at the forwarders
INGRESS_NAME = "ingress"
CS_IDS = ("ARS",)  # the services whose traffic enters at the ingress
AGENT_CS_ID = "agent"  # the agent sessions' service, handled there too when stage G plays
RECONCILE_S = 5  # the C-PS compares each forwarder's configuration this often


@dataclass(frozen=True)
class ForwarderSpec:
    """A forwarder of 7.1: its name at the C-PS, its identifier and its role."""

    name: str
    forwarder_id: str
    role: str


FORWARDERS = (
    ForwarderSpec(INGRESS_NAME, INGRESS, "ingress"),
    ForwarderSpec("CF-2", CF2, "egress"),
    ForwarderSpec("CF-3", CF3, "egress"),
)


@dataclass
class RunningForwarder:
    """A forwarder: its spec, data-plane, NETCONF and RESTCONF ports, and its process."""

    spec: ForwarderSpec
    data: int
    netconf: int
    restconf: int
    child: Child | None = None

    @property
    def url(self) -> str:
        """The data-plane address clients send requests to."""
        return f"http://127.0.0.1:{self.data}"

    def client(self, password: str) -> Restconf:
        """A RESTCONF client of the forwarder, as the C-PS's user."""
        return Restconf(f"http://127.0.0.1:{self.restconf}/restconf", USER, password)


def forwarder_config(spec: ForwarderSpec, tunnels: dict[str, int], password: str) -> Json:
    """The ``catsctl forwarder --config`` document: identity, role, tunnels, the C-PS user."""
    return {
        "forwarder-id": spec.forwarder_id,
        "role": [spec.role],
        "egress": [{"forwarder-id": k, "address": f"127.0.0.1:{p}"} for k, p in tunnels.items()],
        "users": [{"name": USER, "password": password}],
    }


def start_forwarders(
    launcher: Launcher, folder: Path, password: str
) -> dict[str, RunningForwarder]:
    """Start the three forwarders (not waiting for them); by name."""
    running = {
        s.name: RunningForwarder(s, free_port(), free_port(), free_port()) for s in FORWARDERS
    }
    egresses = {f.spec.forwarder_id: f.data for f in running.values() if f.spec.role == "egress"}
    for forwarder in running.values():
        spec = forwarder.spec
        tunnels = egresses if spec.role == "ingress" else {}
        path = write_json(
            folder / f"forwarder-{spec.name}.json", forwarder_config(spec, tunnels, password)
        )
        forwarder.child = launcher.start(
            f"forwarder-{spec.name}",
            [
                "forwarder",
                "--config",
                str(path),
                "--state-dir",
                str(folder / f"forwarder-{spec.name}"),
                "--clean",
                "--listen",
                f"127.0.0.1:{forwarder.data}",
                "--netconf-port",
                str(forwarder.netconf),
                "--restconf-port",
                str(forwarder.restconf),
            ],
        )
    return running


def inventory(forwarders: dict[str, RunningForwarder], password: str, *, agents: bool) -> Json:
    """The C-PS's ``ietf-cats-steering:forwarders``: every forwarder with its credentials,
    the ingress with its NST identifier and the CS-IDs it handles (the agent service too
    with ``agents``: its sessions' commitments become rules there)."""
    cs_ids = [*CS_IDS, AGENT_CS_ID] if agents else list(CS_IDS)
    items = []
    for forwarder in forwarders.values():
        spec = forwarder.spec
        item: Json = {
            "name": spec.name,
            "address": "127.0.0.1",
            "port": forwarder.netconf,
            "username": USER,
            "password": password,
            "role": [spec.role],
        }
        if spec.role == "ingress":
            item |= {"ingress-id": spec.forwarder_id, "cs-id": cs_ids}
        items.append(item)
    return {
        f"{ST}:forwarders": {
            "reconcile-interval": RECONCILE_S,
            "confirm-timeout": 30,
            "forwarder": items,
        }
    }


def steering(forwarder: RunningForwarder, password: str) -> Json:
    """The forwarder's ``steering`` (configuration and counters), RFC 7951."""
    client = forwarder.client(password)
    try:
        found: Json = client.get(f"{ST}:steering").get(f"{ST}:steering", {})
    finally:
        client.close()
    return found


def forwarder_up(forwarder: RunningForwarder, password: str) -> bool:
    """Whether the forwarder serves its steering over RESTCONF and its data plane listens
    (the data plane opens after the management servers)."""
    with contextlib.suppress(requests.RequestException, RestconfError):
        steering(forwarder, password)
        return listening(forwarder.data)
    return False


def rules(document: Json, session_id: str) -> list[Json]:
    """The ``rule`` entries of a ``steering`` read that match a session (agent draft MSG-10)."""
    return [
        r for r in document.get("rule", []) if r.get("match", {}).get("session-id") == session_id
    ]


def service(document: Json, cs_id: str) -> Json:
    """The ``service`` entry of a CS-ID in a ``steering`` read (empty when absent)."""
    return next((s for s in document.get("service", []) if str(s.get("cs-id")) == cs_id), {})


def session_state(cps: Restconf, name: str) -> Json:
    """The C-PS's state of its session to one forwarder of its inventory (empty: none yet)."""
    document = cps.get(f"{ST}:forwarders")
    for item in document.get(f"{ST}:forwarders", {}).get("forwarder", []):
        if item.get("name") == name:
            state: Json = item.get("state", {})
            return state
    return {}
