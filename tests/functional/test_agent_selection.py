"""Agent selection through a real C-PS and a C-SMA over NETCONF: the draft's worked examples.

Two ``catsctl serve`` processes on loopback: the C-PS with the agent-selection plugin
(tests/functional/plugins/agent_selection_plugin.py; controller.app does not wire it yet) and
a C-SMA stand-in serving query-state, reserve-state and release-state from a table
(csma_double_plugin.py). The C-PS calls the C-SMA over NETCONF (controller.southbound); the
tests drive the C-PS over RESTCONF and read its sessions over RESTCONF and NETCONF. Each
example has its own service and candidates, so one pair of servers serves them all. The last
test speaks to a real ``catsctl csma`` (agents/csma) through the same southbound.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from controller.southbound import Credentials, NetconfStateAgents, PeerUnreachableError, Target
from tests.conftest import ROOT
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    Server,
    admin_users,
    free_port,
    seeded_server,
)
from tests.unit.agent_selection import drafts
from tools.bench.common import stop

pytestmark = pytest.mark.functional
AS = "ietf-cats-agent-selection"
AS_NS = f"urn:ietf:params:xml:ns:yang:{AS}"
Json = dict[str, Any]
CPS_USER = ("cps", "cps-secret")

TAG = {0.5: "p5", 0.7: "p7"}
EX84 = {c: drafts.renamed(drafts.example_84(c), f"x84{t}-", f"ex84{t}") for c, t in TAG.items()}
EX68_KEEP = drafts.renamed(drafts.example_68(0.6), "x68k-", "ex68k")
EX68_MOVE = drafts.renamed(drafts.example_68(0.6), "x68m-", "ex68m")
EPISODE = drafts.renamed(drafts.episode(), "xep-", "episode")
ALL = [s for specs in (*EX84.values(), EX68_KEEP, EX68_MOVE, EPISODE) for s in specs]


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """The C-SMA stand-in, then the C-PS pointing at it; the C-SMA's call log."""
    folder = tmp_path_factory.mktemp("agent_selection")
    (folder / "csma").mkdir()
    (folder / "cps").mkdir()
    table = folder / "table.json"
    holds = [[s.csci_id, drafts.TENANT, key] for s in ALL for key in s.holds]
    table.write_text(json.dumps({"held": holds}))
    log = folder / "csma-calls.jsonl"
    log.touch()
    csma_env = {"CATS_CSMA_TABLE": str(table), "CATS_CSMA_LOG": str(log)}
    plugin = "tests.functional.plugins.csma_double_plugin"
    with (
        _environment(**csma_env),
        seeded_server(folder / "csma", admin_users(), "--plugin", plugin) as csma,
    ):
        document = drafts.config(ALL, csma.netconf_port)
        config = folder / "agent-selection.json"
        config.write_text(json.dumps(document))
        seed = {**admin_users(), f"{AS}:agent-selection": document}
        cps_env = {"CATS_AS_CONFIG": str(config), "CATS_AS_CSMA_USER": ADMIN[0],
                   "CATS_AS_CSMA_PASSWORD": ADMIN[1],
                   "CATS_AS_STATE_DIR": str(folder / "cps" / "state")}  # fmt: skip
        cps_plugin = "tests.functional.plugins.agent_selection_plugin"
        with (
            _environment(**cps_env),
            seeded_server(folder / "cps", seed, "--plugin", cps_plugin) as cps,
        ):
            now = time.time()
            call(cps, "advertise-capability", drafts.capability(ALL, now))
            call(cps, "advertise-forwarding-view", drafts.forwarding(ALL, now))
            yield cps, log


def call(server: Server, operation: str, members: Json) -> Json:
    """POST an RPC of ietf-cats-agent-selection; its output (asserts 200 or 204)."""
    reply = server.request("POST", f"operations/{AS}:{operation}",
                           json={f"{AS}:input": members},
                           headers={"Content-Type": JSON, "Accept": JSON})  # fmt: skip
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


def csma_calls(log: Path, operation: str, session_id: str) -> list[Json]:
    """What the C-SMA was asked for one session."""
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return [m for name, m, _ in calls if name == operation and m["session-id"] == session_id]


@pytest.mark.parametrize(("extra", "chosen"), [(0.5, "C"), (0.7, "B")])
def test_84_a_excluded_on_capability_c_preferred_unless_its_forwarding_exceeds_06_s(
    servers: tuple[Server, Path], extra: float, chosen: str
) -> None:
    cps, log = servers
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
    (query,) = csma_calls(log, "query-state", session_id)  # MSG-5 over NETCONF
    assert sorted(query["reuse-key"]) == ["docs", "kv"]
    (record,) = session(cps, session_id)["decision-record"]
    b = next(c for c in record["candidate"] if c["csci-id"] == f"x84{tag}-B")
    assert float(b["valuation"]["state-cost"]) == 600.0  # the 0.6 s recompute


def test_68_step30_keeps_c_transfer_3_s_against_recompute_128_s(
    servers: tuple[Server, Path],
) -> None:
    cps, _ = servers
    admitted = call(cps, "submit-descriptor",
                    {"descriptor": drafts.descriptor_68("s-68k", 29, "ex68k")})  # fmt: skip
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


def test_68_step30_moves_to_b_through_reserve_transfer_and_commit(
    servers: tuple[Server, Path],
) -> None:
    cps, log = servers
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
    (reserve,) = csma_calls(log, "reserve-state", "s-68m")  # MSG-11 over NETCONF
    assert reserve["csci-id"] == "x68m-B"
    notice = {"handoff-id": handoff["handoff-id"], "reporter": "target", "status": "completed",
              "usable-key": ["ctx"], "at": drafts.iso(time.time())}  # fmt: skip
    call(cps, "state-transfer-notice", notice)
    call(cps, "state-transfer-notice", notice)  # repeated: one commit
    entry = session(cps, "s-68m")
    assert entry["handoff"][0]["state"] == "committed"
    assert [(c["csci-id"], c["state"]) for c in entry["commitment"]] == [
        ("x68m-C", "superseded"), ("x68m-B", "active")]  # fmt: skip
    assert len(csma_calls(log, "reserve-state", "s-68m")) == 1


def test_84_step30_episode_c_kept_tail_event_reduces_the_retrieval_set_no_migration(
    servers: tuple[Server, Path],
) -> None:
    cps, log = servers
    desc = drafts.descriptor_episode("s-ep", 29, "episode")
    call(cps, "submit-descriptor", {"descriptor": desc})
    call(cps, "step-boundary", {"session-id": "s-ep", "turn-id": 1, "step-id": 30})
    last = session(cps, "s-ep")["decision-record"][-1]
    assert (last["outcome"], last["selected"]) == (f"{AS}:keep", "xep-C")
    reply = call(cps, "invalidation-notice", drafts.overrun("s-ep", time.time()))
    assert reply["acted-on"] is True
    result = reply["re-evaluation"]
    assert (result["selected"], result["outcome"]) == ("xep-C", f"{AS}:keep")
    assert result["degradation-applied"] == [f"{AS}:truncated-working-set"]
    assert "handoff-id" not in result
    entry = session(cps, "s-ep")
    assert "handoff" not in entry
    assert len(entry["descriptor"]["working-set"]["element"]) == 3  # docs-extra left behind
    assert csma_calls(log, "reserve-state", "s-ep") == []


def test_unknown_session_is_an_rpc_error_naming_the_path(servers: tuple[Server, Path]) -> None:
    cps, _ = servers
    reply = cps.request("POST", f"operations/{AS}:close-session",
                        json={f"{AS}:input": {"session-id": "nobody"}},
                        headers={"Content-Type": JSON, "Accept": JSON})  # fmt: skip
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert (error["error-tag"], error["error-app-tag"]) == ("invalid-value", "unknown-session")
    assert error["error-path"].endswith("close-session/session-id")


def test_sessions_are_readable_over_netconf_and_close_releases_at_the_csma(
    servers: tuple[Server, Path],
) -> None:
    cps, log = servers
    call(cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-nc", "ex84p5")})
    subtree = (f'<agent-selection xmlns="{AS_NS}"><sessions><session>'
               "<session-id>s-nc</session-id></session></sessions></agent-selection>")  # fmt: skip
    with connect_nc(cps.netconf_port, *ADMIN) as manager:
        reply = etree.fromstring(manager.get(filter=("subtree", subtree)).xml.encode())
    records = list(reply.iter(f"{{{AS_NS}}}decision-record"))
    assert len(records) == 1
    assert records[0].findtext(f"{{{AS_NS}}}selected") == "x84p5-C"
    call(cps, "close-session", {"session-id": "s-nc", "reason": "completed"})
    (release,) = csma_calls(log, "release-state", "s-nc")  # MSG-16 over NETCONF
    assert release["csci-id"] == ["x84p5-C"]
    assert session(cps, "s-nc")["state"] == "closed"
    contradicted = {"reporter": "ietf-cats-types:c-ps", "condition": f"{AS}:value-contradicted",
                    "source": "c-sma-1", "at": drafts.iso(time.time())}  # fmt: skip
    assert call(cps, "invalidation-notice", contradicted) == {"acted-on": False}
    found = cps.get_json(f"data/{AS}:agent-selection/candidates/candidate=xep-C")
    (entry,) = found[f"{AS}:candidate"]
    assert entry["cs-id"] == "episode"  # configuration and state in one resource
    assert int(entry["source-accuracy"]["contradicted-values"]) >= 1  # section 14


@pytest.fixture(scope="module")
def real_csma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A real ``catsctl csma`` (agents/csma) answering for two instances of the 8.4 example;
    its reports to a C-PS go nowhere (no C-PS listens there), which it only logs."""
    folder = tmp_path_factory.mktemp("real_csma")
    port, netconf = free_port(), free_port()
    element = {"tenant": drafts.TENANT, "residency": "accelerator-memory"}
    config = {
        "name": "csma-1", "site": "SS1",
        "cps": {"url": f"http://127.0.0.1:{free_port()}/restconf", "username": "csma-1",
                "password": "unused"},
        "users": [{"name": CPS_USER[0], "password": CPS_USER[1], "role": "cps"}],
        "reservations": {"validity": 30, "max-rate": 10, "window": 60},
        "instances": [
            {"csci-id": "B", "cs-id": "agent", "capacity": 10**11, "state": [
                {**element, "reuse-key": "docs", "size": 2_000_000,
                 "element-class": "retrieved-material"}]},
            {"csci-id": "C", "cs-id": "agent", "capacity": 10**11, "state": [
                {**element, "reuse-key": "kv", "size": 330_000_000,
                 "element-class": "model-context-state"}]},
        ],
    }  # fmt: skip
    path = folder / "csma.json"
    path.write_text(json.dumps(config))
    command = [sys.executable, "-m", "controller.cli", "csma", "--config", str(path),
               "--state-dir", str(folder / "state"), "--restconf-port", str(port),
               "--netconf-port", str(netconf)]  # fmt: skip
    with (folder / "csma.log").open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 60
        while not _listening(netconf):
            assert process.poll() is None, (folder / "csma.log").read_text()
            assert time.monotonic() < deadline, "catsctl csma did not start"
            time.sleep(0.2)
        yield Target("csma-1", "127.0.0.1", netconf)
    finally:
        stop(process, timeout=10)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


def test_the_southbound_speaks_to_a_real_csma(real_csma: Target) -> None:
    """MSG-5/6, MSG-11/12 and MSG-16 through controller.southbound to agents/csma."""
    agents = NetconfStateAgents(Credentials(*CPS_USER))
    try:
        found = agents.query_state(real_csma, {
            "tenant": drafts.TENANT, "session-id": "s-real", "csci-id": ["B", "C"],
            "reuse-key": ["kv", "docs"]})  # fmt: skip
        presence = {
            (c["csci-id"], e["reuse-key"]): e["presence"]
            for c in found["candidate"] for e in c["element"]
        }  # fmt: skip
        assert presence == {("B", "kv"): "absent", ("B", "docs"): "present",
                            ("C", "kv"): "present", ("C", "docs"): "absent"}  # fmt: skip
        reserve = {"reservation-id": "rsv-real", "session-id": "s-real",
                   "tenant": drafts.TENANT, "handoff-id": "ho-real", "csci-id": "B",
                   "element": [{"reuse-key": "kv",
                                "element-class": f"{AS}:model-context-state"}],
                   "size": "330000000", "needed-by": drafts.iso(time.time() + 30)}  # fmt: skip
        first = agents.reserve_state(real_csma, reserve)
        assert first["status"] == "accepted"
        assert agents.reserve_state(real_csma, reserve) == first  # idempotent (M43)
        release = {"session-id": "s-real", "tenant": drafts.TENANT,
                   "reservation-id": "rsv-real", "csci-id": ["B"]}  # fmt: skip
        assert agents.release_state(real_csma, release) == {}
        gone = Target("gone", "127.0.0.1", free_port())
        with pytest.raises(PeerUnreachableError):
            agents.query_state(gone, {"tenant": "t"})
        with pytest.raises(PeerUnreachableError) as backing_off:  # no second connect at once
            agents.query_state(gone, {"tenant": "t"})
        assert "backing off" in backing_off.value.items[0].message
    finally:
        agents.close()
