"""Agent selection through a real C-PS and real C-SMAs over NETCONF: the draft's worked examples.

``catsctl serve`` is the C-PS with agent selection built in (controller.app): its
``agent-selection`` configuration, with the credentials it logs in with at each C-SMA, is
seeded into running. Two ``catsctl csma`` processes (agents/csma) answer query-state,
reserve-state and release-state: csma-1 for the A and B candidates of every example, csma-2
for the C candidates, each holding the example's reuse keys in its state view (its
configuration file) and each admitting the C-PS under its own user. What a C-SMA was asked is
read from its ``agent-selection/c-sma/exchange`` log over RESTCONF. The tests drive the C-PS
over RESTCONF, read its sessions over RESTCONF and NETCONF and subscribe to its notifications
over NETCONF. Each example has its own service and candidates, so one C-PS and one pair of
C-SMAs serve them all.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree
from prometheus_client.parser import text_string_to_metric_families

from controller.auth import hash_password
from controller.demo.drafts import stated_capability
from controller.southbound import Credentials, NetconfStateAgents, PeerUnreachableError, Target
from controller.types import Json
from tests.conftest import ROOT
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    Server,
    free_port,
    running_server,
    write_init,
)
from tests.unit.agent_selection import drafts
from tools.bench.common import stop

pytestmark = pytest.mark.functional
AS = "ietf-cats-agent-selection"
AS_NS = f"urn:ietf:params:xml:ns:yang:{AS}"
CPS_USER = ("cps", "cps-secret")

TAG = {0.5: "p5", 0.7: "p7"}
EX84 = {c: drafts.renamed(drafts.example_84(c), f"x84{t}-", f"ex84{t}") for c, t in TAG.items()}
EX68_KEEP = drafts.renamed(drafts.example_68(0.6), "x68k-", "ex68k")
EX68_MOVE = drafts.renamed(drafts.example_68(0.6), "x68m-", "ex68m")
EPISODE = drafts.renamed(drafts.episode(), "xep-", "episode")
ALL = [s for specs in (*EX84.values(), EX68_KEEP, EX68_MOVE, EPISODE) for s in specs]
START_S = 180.0  # a bound under load (load 25 on 2 cores took more than 60 s)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


@dataclass
class Csma:
    """A ``catsctl csma`` process: its NETCONF target, RESTCONF root and the C-PS's login."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    restconf: int
    netconf: int
    login: tuple[str, str]
    metrics: int = 0  # the management listener (/metrics)

    @property
    def target(self) -> Target:
        """How a C-PS reaches it."""
        return Target(self.name, "127.0.0.1", self.netconf)

    def c_sma(self) -> Json:
        """The ``c-sma`` container of a candidate it answers for."""
        return drafts.c_sma(self.netconf, self.name, self.login)

    def wait(self) -> None:
        """Until both its servers listen (or it has exited: the test fails with its log)."""
        deadline = time.monotonic() + START_S
        while not (_listening(self.restconf) and _listening(self.netconf)):
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            assert time.monotonic() < deadline, f"{self.name} did not start"
            time.sleep(0.2)

    def exchanges(self, operation: str, session_id: str) -> list[Json]:
        """What the C-SMA answered of ``operation`` for one session (its exchange log)."""
        reply = requests.get(
            f"http://127.0.0.1:{self.restconf}/restconf/data/{AS}:agent-selection/c-sma",
            headers={"Accept": JSON},
            auth=self.login,
            timeout=30,
        )
        if reply.status_code == 404:  # nothing answered yet
            return []
        assert reply.status_code == 200, reply.text
        found = reply.json()[f"{AS}:c-sma"].get("exchange", [])
        return [e for e in found if e["operation"] == operation and e["session-id"] == session_id]


@contextlib.contextmanager
def csma_process(  # noqa: PLR0913 - the C-SMA's configuration in parts
    folder: Path,
    name: str,
    instances: list[Json],
    login: tuple[str, str],
    cps: Json,
    *,
    advertising: Json | None = None,
) -> Iterator[Csma]:
    """Start ``catsctl csma`` answering for ``instances`` and admitting the C-PS as ``login``
    (started, not waited for: see :meth:`Csma.wait`); stopped when the block ends."""
    restconf, netconf, metrics = free_port(), free_port(), free_port()
    config = {
        "name": name,
        "site": f"site-{name}",
        "cps": cps,
        "users": [{"name": login[0], "password": login[1], "role": "cps"}],
        "reservations": {"validity-ms": 30_000, "max-rate": 10, "window-ms": 60_000},
        "instances": instances,
    }
    if advertising is not None:
        config["advertising"] = advertising
    path = folder / f"{name}.json"
    path.write_text(json.dumps(config))
    command = [
        sys.executable,
        "-m",
        "controller.cli",
        "csma",
        "--config",
        str(path),
        "--state-dir",
        str(folder / f"{name}-state"),
        "--restconf-port",
        str(restconf),
        "--netconf-port",
        str(netconf),
        "--metrics-address",
        f"127.0.0.1:{metrics}",
    ]
    log = folder / f"{name}.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
    running = Csma(name, process, log, restconf, netconf, login, metrics)
    try:
        yield running
    finally:
        stop(running.process, timeout=10)  # the one running now (a test may restart it)


def _instances(specs: list[drafts.Spec], *, advertised: bool = False) -> list[Json]:
    """The C-SMA's instances: each candidate holding its example's reuse keys in accelerator
    memory for the tenant (as the draft's examples say), with room for the 7.5 GB context;
    ``advertised``: with the capability the C-SMA advertises itself (MSG-4, the draft's
    numbers)."""
    return [
        {
            "csci-id": s.csci_id,
            "cs-id": s.service,
            "capacity": 10**12,
            **({"capability": stated_capability(s)} if advertised else {}),
            "state": [
                {"tenant": drafts.TENANT, "reuse-key": key, "residency": "accelerator-memory"}
                for key in s.holds
            ],
        }
        for s in specs
    ]


# The C-SMA's own MSG-4: every 30 s (a freshness bound of 90 s, beyond any stall of a loaded
# machine); the first goes when the C-SMA is woken once the C-PS listens (SIGHUP).
ADVERTISING = {"interval-ms": 30_000}


def advertised_by(csma: Csma) -> None:
    """Wake ``catsctl csma`` (a reload advertises at once: it started before the C-PS, so its
    first advertisement found nobody) and wait until the C-PS accepted one advertisement of
    every instance it has (its ``cats_csma_advertisements_total{result="sent"}``)."""
    csma.process.send_signal(signal.SIGHUP)
    url = f"http://127.0.0.1:{csma.metrics}/metrics"
    deadline = time.monotonic() + START_S
    while True:
        with contextlib.suppress(requests.RequestException):
            for family in text_string_to_metric_families(requests.get(url, timeout=10).text):
                sent = [s for s in family.samples if s.labels.get("result") == "sent"]
                if family.name == "cats_csma_advertisements" and sent and sent[0].value >= 1:
                    return
        assert csma.process.poll() is None, csma.log.read_text(errors="replace")
        assert time.monotonic() < deadline, csma.log.read_text(errors="replace")
        time.sleep(0.2)


@dataclass
class Bed:
    """The C-PS and the two C-SMAs."""

    cps: Server
    csma: dict[str, Csma]  # by candidate letter: A and B -> csma-1, C -> csma-2


def _letter(spec: drafts.Spec) -> str:
    return "C" if spec.csci_id.endswith("C") else "AB"


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """Two C-SMAs reporting to the C-PS, the C-PS configured to call them."""
    folder = tmp_path_factory.mktemp("agent_selection")
    cps_port, cps_netconf = free_port(), free_port()
    agents = {
        "AB": ("csma-1", ("cps-1", "cps-1-secret")),
        "C": ("csma-2", ("cps-2", "cps-2-secret")),
    }
    with contextlib.ExitStack() as stack:
        started: dict[str, Csma] = {}
        for letters, (name, login) in agents.items():
            specs = [s for s in ALL if _letter(s) == letters]
            report = {
                "url": f"http://127.0.0.1:{cps_port}/restconf",
                "username": name,
                "password": f"{name}-report",
            }
            started[letters] = stack.enter_context(
                csma_process(folder, name, _instances(specs), login, report)
            )
        for each in started.values():
            each.wait()
        document = drafts.config(ALL, lambda s: started[_letter(s)].c_sma())
        users = [{"name": n, "password": hash_password(f"{n}-report")} for n, _ in agents.values()]
        users.append({"name": ADMIN[0], "password": hash_password(ADMIN[1])})
        seed: dict[str, object] = {
            "ietf-system:system": {"authentication": {"user": users}},
            f"{AS}:agent-selection": document,
        }
        (folder / "cps").mkdir()
        init = write_init(folder / "cps", seed)
        cps = stack.enter_context(
            running_server(folder / "cps" / "state", init, port=cps_port, netconf_port=cps_netconf)
        )
        now = time.time()
        call(cps, "advertise-capability", drafts.capability(ALL, now))
        call(cps, "advertise-forwarding-view", drafts.forwarding(ALL, now))
        yield Bed(cps, {"A": started["AB"], "B": started["AB"], "C": started["C"]})


def call(server: Server, operation: str, members: Json) -> Json:
    """POST an RPC of ietf-cats-agent-selection; its output (asserts 200 or 204)."""
    reply = server.request(
        "POST",
        f"operations/{AS}:{operation}",
        json={f"{AS}:input": members},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code in (200, 204), reply.text
    if reply.status_code == 204:
        return {}
    found: Json = reply.json()[f"{AS}:output"]
    return found


def session(server: Server, session_id: str) -> Json:
    """One session of the C-PS state over RESTCONF."""
    found = server.get_json(f"data/{AS}:agent-selection/sessions/session={session_id}")
    (entry,) = found[f"{AS}:session"]
    result: Json = entry
    return result


@pytest.mark.parametrize(("extra", "chosen"), [(0.5, "C"), (0.7, "B")])
def test_84_a_excluded_on_capability_c_preferred_unless_its_forwarding_exceeds_06_s(
    bed: Bed, extra: float, chosen: str
) -> None:
    cps = bed.cps
    tag = TAG[extra]
    session_id = f"s-84{tag}"
    desc = drafts.descriptor_84(session_id, f"ex84{tag}")
    reply = call(cps, "submit-descriptor", {"descriptor": desc})
    assert reply["evaluation"] == "completed"
    assert reply["selected"] == f"x84{tag}-{chosen}"
    (excluded,) = reply["excluded"]
    assert excluded["csci-id"] == f"x84{tag}-A"
    assert excluded["reason"] == f"{AS}:capability-tier-below-required"
    expected = -1.15 if chosen == "C" else -1.25
    assert float(reply["suitability"]) == pytest.approx(expected)
    for letter, named in (("B", ["A", "B"]), ("C", ["C"])):  # MSG-5 to each C-SMA
        csma = bed.csma[letter]
        (query,) = csma.exchanges("query-state", session_id)
        assert sorted(query["reuse-key"]) == ["docs", "kv"]
        assert query["csci-id"] == [f"x84{tag}-{n}" for n in named]
        assert query["user"] == csma.login[0]  # the credentials configured for this C-SMA
    (record,) = session(cps, session_id)["decision-record"]
    b = next(c for c in record["candidate"] if c["csci-id"] == f"x84{tag}-B")
    assert float(b["valuation"]["state-cost"]) == 600.0  # the 0.6 s recompute


def test_68_step30_keeps_c_transfer_3_s_against_recompute_128_s(bed: Bed) -> None:
    cps = bed.cps
    admitted = call(
        cps, "submit-descriptor", {"descriptor": drafts.descriptor_68("s-68k", 29, "ex68k")}
    )
    assert admitted["selected"] == "x68k-C"
    call(cps, "step-boundary", {"session-id": "s-68k", "turn-id": 1, "step-id": 30})
    entry = session(cps, "s-68k")
    last = entry["decision-record"][-1]
    assert (last["step-id"], last["outcome"], last["selected"]) == (30, f"{AS}:keep", "x68k-C")
    b = next(c for c in last["candidate"] if c["csci-id"] == "x68k-B")["valuation"]
    assert (float(b["transfer-time"]), float(b["recompute-time"])) == (3008.0, 128000.0)
    c = next(c for c in last["candidate"] if c["csci-id"] == "x68k-C")["valuation"]
    assert c["state-bytes"] == "0"  # state_fits at C: nothing left to place
    (commitment,) = entry["commitment"]
    assert commitment["steps"] == {"first": 29, "last": 30}
    assert bed.csma["B"].exchanges("reserve-state", "s-68k") == []


def test_68_step30_moves_to_b_through_reserve_transfer_and_commit(bed: Bed) -> None:
    cps = bed.cps
    call(cps, "submit-descriptor", {"descriptor": drafts.descriptor_68("s-68m", 29, "ex68m")})
    faster = drafts.renamed(drafts.example_68(0.3), "x68m-", "ex68m")
    call(cps, "advertise-forwarding-view", drafts.forwarding(faster, time.time(), sequence=2))
    call(cps, "step-boundary", {"session-id": "s-68m", "turn-id": 1, "step-id": 30})
    entry = session(cps, "s-68m")
    (handoff,) = entry["handoff"]
    assert (handoff["state"], handoff["target"]) == ("reserved", "x68m-B"), handoff.get(
        "abort-detail"
    )
    assert entry["current-commitment"] == "cm-s-68m-1"  # still at the source
    (reserve,) = bed.csma["B"].exchanges("reserve-state", "s-68m")  # MSG-11 over NETCONF
    assert (reserve["csci-id"], reserve["status"]) == (["x68m-B"], "accepted")
    assert "ctx" in reserve["reuse-key"]
    notice = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "target",
        "status": "completed",
        "usable-key": ["ctx"],
        "at": drafts.iso(time.time()),
    }
    call(cps, "state-transfer-notice", notice)
    call(cps, "state-transfer-notice", notice)  # repeated: one commit
    entry = session(cps, "s-68m")
    assert entry["handoff"][0]["state"] == "committed"
    assert [(c["csci-id"], c["state"]) for c in entry["commitment"]] == [
        ("x68m-C", "superseded"),
        ("x68m-B", "active"),
    ]
    assert len(bed.csma["B"].exchanges("reserve-state", "s-68m")) == 1
    assert bed.csma["C"].exchanges("reserve-state", "s-68m") == []


def test_84_step30_episode_c_kept_tail_event_reduces_the_retrieval_set_no_migration(
    bed: Bed,
) -> None:
    cps = bed.cps
    desc = drafts.descriptor_episode("s-ep", 29, "episode")
    call(cps, "submit-descriptor", {"descriptor": desc})
    call(cps, "step-boundary", {"session-id": "s-ep", "turn-id": 1, "step-id": 30})
    last = session(cps, "s-ep")["decision-record"][-1]
    assert (last["outcome"], last["selected"]) == (f"{AS}:keep", "xep-C")
    b, c = (
        next(x["valuation"] for x in last["candidate"] if x["csci-id"] == f"xep-{n}") for n in "BC"
    )
    assert float(b["computing"]["expected-time"]) < float(c["computing"]["expected-time"])
    assert (c["state-bytes"], float(c["state-cost"])) == ("0", 0.0)  # csma-2: C holds it all
    assert float(b["state-cost"]) == pytest.approx(3008.4)  # csma-1: B lacks the context
    reply = call(cps, "invalidation-notice", drafts.overrun("s-ep", time.time()))
    assert reply["acted-on"] is True
    result = reply["re-evaluation"]
    assert (result["selected"], result["outcome"]) == ("xep-C", f"{AS}:keep")
    assert result["degradation-applied"] == [f"{AS}:truncated-working-set"]
    assert "handoff-id" not in result
    entry = session(cps, "s-ep")
    assert "handoff" not in entry
    assert len(entry["descriptor"]["working-set"]["element"]) == 3  # docs-extra left behind
    assert bed.csma["B"].exchanges("query-state", "s-ep")  # B was asked, and its capacity seen
    for letter in "BC":
        assert bed.csma[letter].exchanges("reserve-state", "s-ep") == []


def test_unknown_session_is_an_rpc_error_naming_the_path(bed: Bed) -> None:
    reply = bed.cps.request(
        "POST",
        f"operations/{AS}:close-session",
        json={f"{AS}:input": {"session-id": "nobody"}},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert (error["error-tag"], error["error-app-tag"]) == ("invalid-value", "unknown-session")
    assert error["error-path"].endswith("close-session/session-id")


def test_a_csma_without_a_username_is_refused_and_running_is_unchanged(bed: Bed) -> None:
    """The C-PS cannot log in at a C-SMA nobody named a user for: the schema's must."""
    path = f"data/{AS}:agent-selection/candidates"
    candidate = {
        "csci-id": "x-nologin",
        "cs-id": "ex84p5",
        "c-sma": {"name": "csma-9", "address": "127.0.0.1", "port": 830},
    }
    before = bed.cps.get_json(path, content="config")
    reply = bed.cps.request(
        "PATCH",
        path,
        json={f"{AS}:candidates": {"candidate": [candidate]}},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code == 412, reply.text  # operation-failed (RFC 7950 15.4, 8040 7)
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert (error["error-tag"], error["error-app-tag"]) == (
        "operation-failed",
        "c-sma-without-username",
    )
    assert "c-sma/address" in error["error-path"]
    assert bed.cps.get_json(path, content="config") == before


def test_sessions_are_readable_over_netconf_and_close_releases_at_the_csma(bed: Bed) -> None:
    cps = bed.cps
    call(cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-nc", "ex84p5")})
    subtree = (
        f'<agent-selection xmlns="{AS_NS}"><sessions><session>'
        "<session-id>s-nc</session-id></session></sessions></agent-selection>"
    )
    with connect_nc(cps.netconf_port, *ADMIN) as manager:
        reply = etree.fromstring(manager.get(filter=("subtree", subtree)).xml.encode())
    records = list(reply.iter(f"{{{AS_NS}}}decision-record"))
    assert len(records) == 1
    assert records[0].findtext(f"{{{AS_NS}}}selected") == "x84p5-C"
    call(cps, "close-session", {"session-id": "s-nc", "reason": "completed"})
    (release,) = bed.csma["C"].exchanges("release-state", "s-nc")  # MSG-16 over NETCONF
    assert release["csci-id"] == ["x84p5-C"]
    assert bed.csma["B"].exchanges("release-state", "s-nc") == []  # nothing held there
    assert session(cps, "s-nc")["state"] == "closed"
    contradicted = {
        "reporter": "ietf-cats-types:c-ps",
        "condition": f"{AS}:value-contradicted",
        "source": "c-sma-1",
        "at": drafts.iso(time.time()),
    }
    assert call(cps, "invalidation-notice", contradicted) == {"acted-on": False}
    found = cps.get_json(f"data/{AS}:agent-selection/candidates/candidate=xep-C")
    (entry,) = found[f"{AS}:candidate"]
    assert entry["cs-id"] == "episode"  # configuration and state in one resource
    assert int(entry["source-accuracy"]["contradicted-values"]) >= 1  # section 14
    view = entry["resource-view"]  # the view the C-PS decides on, as advertised (6.3)
    assert view["computing"]["capability"]["tier-offered"] == "capable"  # MSG-4
    assert view["forwarding"]["path-set"]["path"][0]["path-id"] == "p1"  # MSG-7
    assert view["last-update"].startswith(time.strftime("%Y-", time.gmtime()))


def _notifications(manager: Any, *wanted: str) -> dict[str, Any]:
    """The first notification of each ``wanted`` name of ietf-cats-agent-selection, by name
    (waiting at most 10 s for each next one)."""
    found: dict[str, Any] = {}
    while not set(wanted) <= set(found):
        note = manager.take_notification(timeout=30)
        if note is None:
            break
        root = etree.fromstring(note.notification_xml.encode())
        for event in root:
            name = etree.QName(event)
            if name.namespace == AS_NS:
                found.setdefault(name.localname, event)
    return found


def test_the_csps_notifications_reach_a_netconf_subscriber(bed: Bed) -> None:
    """MSG-3 and the decision record of an admission, on the C-PS's NETCONF stream."""
    desc = drafts.descriptor_84("s-note", "ex84p5")
    del desc["capability-tier"]  # the network cannot derive it: MSG-3 asks for it
    with connect_nc(bed.cps.netconf_port, *ADMIN) as manager:
        manager.create_subscription()
        reply = call(bed.cps, "submit-descriptor", {"descriptor": desc})
        notes = _notifications(manager, "descriptor-refinement-request", "decision-recorded")
    refinement = notes["descriptor-refinement-request"]
    assert refinement.findtext(f"{{{AS_NS}}}session-id") == "s-note"
    element = str(refinement.findtext(f"{{{AS_NS}}}element"))
    assert element.rpartition(":")[2] == "capability-tier"
    recorded = notes["decision-recorded"]
    assert recorded.findtext(f"{{{AS_NS}}}session-id") == "s-note"
    assert recorded.findtext(f"{{{AS_NS}}}selected") == reply["selected"]
    assert recorded.findtext(f"{{{AS_NS}}}record-id") == reply["record-id"]


@pytest.fixture(scope="module")
def real_csma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A ``catsctl csma`` answering for two instances of the 8.4 example; its reports to a
    C-PS go nowhere (no C-PS listens there), which it only logs."""
    folder = tmp_path_factory.mktemp("real_csma")
    element = {"tenant": drafts.TENANT, "residency": "accelerator-memory"}
    instances = [
        {
            "csci-id": "B",
            "cs-id": "agent",
            "capacity": 10**11,
            "state": [
                {
                    **element,
                    "reuse-key": "docs",
                    "size": 2_000_000,
                    "element-class": "retrieved-material",
                }
            ],
        },
        {
            "csci-id": "C",
            "cs-id": "agent",
            "capacity": 10**11,
            "state": [
                {
                    **element,
                    "reuse-key": "kv",
                    "size": 330_000_000,
                    "element-class": "model-context-state",
                }
            ],
        },
    ]
    report = {
        "url": f"http://127.0.0.1:{free_port()}/restconf",
        "username": "csma-1",
        "password": "unused",
    }
    with csma_process(folder, "csma-1", instances, CPS_USER, report) as csma:
        csma.wait()
        yield csma.target


def test_the_southbound_speaks_to_a_real_csma(real_csma: Target) -> None:
    """MSG-5/6, MSG-11/12 and MSG-16 through controller.southbound to agents/csma."""
    agents = NetconfStateAgents(Credentials(*CPS_USER))
    try:
        found = agents.query_state(
            real_csma,
            {
                "tenant": drafts.TENANT,
                "session-id": "s-real",
                "csci-id": ["B", "C"],
                "reuse-key": ["kv", "docs"],
            },
        )
        presence = {
            (c["csci-id"], e["reuse-key"]): e["presence"]
            for c in found["candidate"]
            for e in c["element"]
        }
        assert presence == {
            ("B", "kv"): "absent",
            ("B", "docs"): "present",
            ("C", "kv"): "present",
            ("C", "docs"): "absent",
        }
        reserve = {
            "reservation-id": "rsv-real",
            "session-id": "s-real",
            "tenant": drafts.TENANT,
            "handoff-id": "ho-real",
            "csci-id": "B",
            "element": [{"reuse-key": "kv", "element-class": f"{AS}:model-context-state"}],
            "size": "330000000",
            "needed-by": drafts.iso(time.time() + 30),
        }
        first = agents.reserve_state(real_csma, reserve)
        assert first["status"] == "accepted"
        assert agents.reserve_state(real_csma, reserve) == first  # idempotent (M43)
        release = {
            "session-id": "s-real",
            "tenant": drafts.TENANT,
            "reservation-id": "rsv-real",
            "csci-id": ["B"],
        }
        assert agents.release_state(real_csma, release) == {}
        gone = Target("gone", "127.0.0.1", free_port())
        with pytest.raises(PeerUnreachableError):
            agents.query_state(gone, {"tenant": "t"})
        with pytest.raises(PeerUnreachableError) as backing_off:  # no second connect at once
            agents.query_state(gone, {"tenant": "t"})
        assert "backing off" in backing_off.value.items[0].message
    finally:
        agents.close()
