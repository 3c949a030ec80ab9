"""Readings of the agent draft through a real C-PS and a real C-SMA, with cases of our own.

``catsctl serve`` is the C-PS (its selection context left to the module's defaults), one
``catsctl csma`` answers query-state, reserve-state and release-state for every candidate over
NETCONF, its state view seeded from its configuration. Each case has its own service and
candidates. What is checked is what a gateway, an operator or the C-SMA sees: the RPC replies,
the sessions' decision records and accounting over RESTCONF, the C-SMA's exchange log.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from controller.auth import hash_password
from controller.southbound import Credentials, NetconfStateAgents
from controller.types import Json
from tests.conftest import ROOT
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    Server,
    admin_policy,
    free_port,
    running_server,
    write_init,
)
from tests.functional.test_agent_selection import Csma, call, csma_process, session
from tests.functional.test_sci import wait_for
from tests.unit.agent_selection import drafts
from tools.bench.common import stop

pytestmark = pytest.mark.functional
AS = drafts.AS
TOOL = drafts.element("tr", "tool-result", 1e5, 0, role="constraint")

# 1: Y's C-SMA does not know whether Y holds the tool result; X holds it.
UNKNOWN = [
    drafts.Spec("u-X", delay=0.9, holds=("tr",), service="s-unknown"),
    drafts.Spec("u-Y", delay=0.1, service="s-unknown"),
]
# 1: Y lacks the tool result X holds: a first placement at Y needs it transferred.
TRANSFER = [
    drafts.Spec("t-X", delay=0.9, holds=("tr",), service="s-transfer"),
    drafts.Spec("t-Y", delay=0.1, service="s-transfer"),
]
# 2: 8.4 with C's step latency reported as a mean only.
MEAN = drafts.renamed(drafts.example_84(0.5), "m-", "s-mean")
# 3: both hold the context; C's suitability is -2.0, B's -1.8 (10 %) or -1.81 (9.5 %).
IMPROVE = {
    best: [
        drafts.Spec(f"i{tag}-B", delay=1.4, holds=("ctx",), service=f"s-improve{tag}"),
        drafts.Spec(f"i{tag}-C", delay=1.4, holds=("ctx",), service=f"s-improve{tag}"),
    ]
    for best, tag in ((-1.8, "a"), (-1.81, "b"))
}
# 4, 6: 6.8 with B's C-SMA unable to hold the context (no room): the move is refused.
REFUSED = drafts.renamed(drafts.example_68(0.6), "r-", "s-refused")
# 5: 6.8 at step 30 with the context no longer needed.
REVISED = drafts.renamed(drafts.example_68(0.6), "v-", "s-revised")
# 7: any admitted session.
ACCOUNTED = drafts.renamed(drafts.example_84(0.5), "a-", "s-accounted")
# 8: a candidate whose computing view only its C-SMA advertises (nobody else does).
ADVERTISED = drafts.Spec("adv-X", service="s-advertised")
CAPABILITY = {
    "tier": "capable",
    "context-window": 200000,
    "modes": ["request-response", "tool-call"],
    "precisions": ["bf16", "fp8"],
    "prefill-rate": 10000,
    "memory-free": 40 * 10**9,
    "weights": 15_230_000_000,
    "load-rate": 2000,
}
# 9: presence learned by subscription: sb-A holds ka, sb-B does not (until reserved there).
SUBSCRIBED = [
    drafts.Spec("sb-A", delay=0.2, holds=("ka",), service="s-subscribed"),
    drafts.Spec("sb-B", delay=0.1, service="s-subscribed"),
]
KA = drafts.element("ka", "retrieved-material", 2e9, 50_000)
ALL = [
    *UNKNOWN,
    *TRANSFER,
    *MEAN,
    *IMPROVE[-1.8],
    *IMPROVE[-1.81],
    *REFUSED,
    *REVISED,
    *ACCOUNTED,
    ADVERTISED,
    *SUBSCRIBED,
]


def _instance(spec: drafts.Spec) -> Json:
    state: list[Json] = [
        {"tenant": drafts.TENANT, "reuse-key": key, "residency": "accelerator-memory"}
        for key in spec.holds
    ]
    if spec.csci_id == "u-Y":
        state.append({"tenant": drafts.TENANT, "reuse-key": "tr", "presence": "unknown"})
    capacity = 1000 if spec.csci_id == "r-B" else 10**12
    found: Json = {
        "csci-id": spec.csci_id,
        "cs-id": spec.service,
        "capacity": capacity,
        "state": state,
    }
    if spec is ADVERTISED:
        found["capability"] = CAPABILITY
    return found


@dataclass
class Bed:
    """The C-PS and its C-SMA (its configuration and state in ``folder``)."""

    cps: Server
    csma: Csma
    folder: Path


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """One C-SMA for every candidate, the C-PS configured to call it and nothing else: the
    selection context is the module's defaults."""
    folder = tmp_path_factory.mktemp("readings")
    cps_port = free_port()
    login = ("cps-r", "cps-r-secret")
    report = {
        "url": f"http://127.0.0.1:{cps_port}/restconf",
        "username": "csma-r",
        "password": "csma-r-report",
    }
    instances = [_instance(s) for s in ALL]
    with contextlib.ExitStack() as stack:
        csma = stack.enter_context(
            csma_process(
                folder, "csma-r", instances, login, report, advertising={"interval-ms": 1000}
            )
        )
        csma.wait()
        document = drafts.config(ALL, lambda _: csma.c_sma())
        del document["selection-context"]  # the module's defaults
        users = [
            {"name": "csma-r", "password": hash_password("csma-r-report")},
            {"name": ADMIN[0], "password": hash_password(ADMIN[1])},
        ]
        seed: dict[str, object] = {
            "ietf-system:system": {"authentication": {"user": users}},
            f"{AS}:agent-selection": document,
            **admin_policy(csma=["csma-r"]),  # the C-SMA's user may advertise (MSG-4)
        }
        (folder / "cps").mkdir()
        init = write_init(folder / "cps", seed)
        cps = stack.enter_context(
            running_server(folder / "cps" / "state", init, port=cps_port, netconf_port=free_port())
        )
        now = time.time()
        others = [s for s in ALL if s is not ADVERTISED]
        call(cps, "advertise-capability", drafts.capability(others, now, source="test-c-sma"))
        call(cps, "advertise-forwarding-view", drafts.forwarding(ALL, now))
        yield Bed(cps, csma, folder)


def _error(server: Server, operation: str, members: Json) -> tuple[int, Json]:
    reply = server.request(
        "POST",
        f"operations/{AS}:{operation}",
        json={f"{AS}:input": members},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code >= 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    return reply.status_code, error


def _sequence() -> int:
    """A C-NMA sequence number above every earlier one (the advertiser is shared)."""
    return time.time_ns() // 1000


def _time_line(entry: Json) -> Json:
    lines = entry["accounting"].get("budget", [])
    found = [line for line in lines if line["dimension"] == f"{AS}:time"]
    return found[0] if found else {}


def test_1_unknown_presence_of_a_required_tool_result_excludes_the_candidate(bed: Bed) -> None:
    desc = drafts.descriptor("r-unknown", 1, [TOOL], "s-unknown")
    reply = call(bed.cps, "submit-descriptor", {"descriptor": desc})
    assert reply["selected"] == "u-X"  # u-Y was chosen, valued with a transfer from u-X
    (excluded,) = reply["excluded"]
    assert excluded["csci-id"] == "u-Y"
    assert excluded["reason"] == "ietf-cats-types:value-unknown"
    (query,) = bed.csma.exchanges("query-state", "r-unknown")
    assert "u-Y" in query["csci-id"]


def test_1_a_first_placement_that_assumes_a_transfer_reserves_then_commits(bed: Bed) -> None:
    desc = drafts.descriptor("r-transfer", 1, [TOOL], "s-transfer")
    reply = call(bed.cps, "submit-descriptor", {"descriptor": desc})
    assert reply["selected"] == "t-Y"
    assert "commitment" not in reply  # committed at once before, with no reservation
    (reserve,) = bed.csma.exchanges("reserve-state", "r-transfer")  # MSG-11 at the target
    assert (reserve["csci-id"], reserve["status"]) == (["t-Y"], "accepted")
    entry = session(bed.cps, "r-transfer")
    (handoff,) = entry["handoff"]
    assert (handoff["source"], handoff["target"], handoff["state"]) == ("t-X", "t-Y", "reserved")
    assert "commitment" not in entry
    notice = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "target",
        "status": "completed",
        "usable-key": ["tr"],
        "at": drafts.iso(time.time()),
    }
    call(bed.cps, "state-transfer-notice", notice)
    (commitment,) = session(bed.cps, "r-transfer")["commitment"]
    assert (commitment["csci-id"], commitment["state"]) == ("t-Y", "active")


def test_2_a_mean_for_a_p95_objective_is_reported_unverified(bed: Bed) -> None:
    advert = drafts.capability(MEAN, time.time(), sequence=2)
    c = next(x for x in advert["candidate"] if x["csci-id"] == "m-C")
    latency = c["computing"]["step-latency"]
    latency["mean"] = latency.pop("p95")
    del latency["median"]
    call(bed.cps, "advertise-capability", advert)
    desc = drafts.descriptor_84("r-mean", "s-mean")
    call(bed.cps, "submit-descriptor", {"descriptor": desc})
    (record,) = session(bed.cps, "r-mean")["decision-record"]
    c_value = next(x for x in record["candidate"] if x["csci-id"] == "m-C")["valuation"]
    assert "tail-ok" not in c_value  # it said tail-ok true
    assert c_value["tail-verified"] is False
    named = [
        (q["element"], q["condition"], q["used-in"], q["effect"])
        for q in record["qualified-value"]
        if q.get("csci-id") == "m-C"
    ]
    assert (f"{AS}:step-latency", "mean-for-tail", "preference", "preference-reported") in named


@pytest.mark.parametrize(("best", "moved"), [(-1.8, True), (-1.81, False)])
def test_3_min_improvement_is_a_fraction_of_the_current_suitability(
    bed: Bed,
    best: float,
    moved: bool,  # noqa: FBT001
) -> None:
    """The module's default 0.1 at C's -2.0: B at -1.8 (10 %) moves, at -1.81 (9.5 %) not,
    although 0.19 is above 0.1 (the absolute reading). The record's horizon is the module's
    default look-ahead of 5 steps (it was the code's 1)."""
    specs = IMPROVE[best]
    tag = specs[0].service[-1]
    session_id = f"r-improve{tag}"
    slower = [replace(specs[0], delay=2.0), specs[1]]  # admission at C
    call(bed.cps, "advertise-forwarding-view", drafts.forwarding(slower, time.time(), _sequence()))
    desc = drafts.descriptor(
        session_id, 29, [drafts.CTX], specs[0].service, **{"remaining-horizon": 40}
    )
    assert call(bed.cps, "submit-descriptor", {"descriptor": desc})["selected"] == specs[1].csci_id
    faster = [replace(specs[0], delay=1.4 - (best + 2.0)), specs[1]]
    call(bed.cps, "advertise-forwarding-view", drafts.forwarding(faster, time.time(), _sequence()))
    call(bed.cps, "step-boundary", {"session-id": session_id, "turn-id": 1, "step-id": 30})
    last = session(bed.cps, session_id)["decision-record"][-1]
    assert float(last["suitability"]) == pytest.approx(best if moved else -2.0)
    assert last["stability"]["min-improvement-met"] is moved
    assert last["outcome"] == (f"{AS}:move" if moved else f"{AS}:keep")
    assert last["change"]["horizon-steps"] == 5


def test_4_6_a_refused_move_is_not_charged_and_a_late_notice_is_refused(bed: Bed) -> None:
    call(
        bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_68("r-ref", 29, "s-refused")}
    )
    faster = drafts.renamed(drafts.example_68(0.3), "r-", "s-refused")
    call(bed.cps, "advertise-forwarding-view", drafts.forwarding(faster, time.time(), _sequence()))
    call(bed.cps, "step-boundary", {"session-id": "r-ref", "turn-id": 1, "step-id": 30})
    entry = session(bed.cps, "r-ref")
    (handoff,) = entry["handoff"]
    assert (handoff["state"], handoff["abort-reason"]) == ("aborted", f"{AS}:reservation-refused")
    (reserve,) = bed.csma.exchanges("reserve-state", "r-ref")
    assert reserve["status"] == "refused"
    assert "change-cost" not in _time_line(entry)  # 3008 ms charged before, nothing moved
    notice = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "target",
        "status": "completed",
        "usable-key": ["ctx"],
        "at": drafts.iso(time.time()),
    }
    status, error = _error(bed.cps, "state-transfer-notice", notice)  # 204 before
    assert (error["error-tag"], error["error-app-tag"]) == ("operation-failed", "handoff-aborted")
    assert error["error-path"].endswith("state-transfer-notice/handoff-id")
    assert status in (409, 412, 500)
    assert session(bed.cps, "r-ref") == entry  # nothing changed


def test_5_a_revised_descriptor_of_the_running_step_is_evaluated(bed: Bed) -> None:
    desc = drafts.descriptor_68("r-rev", 29, "s-revised")
    call(bed.cps, "submit-descriptor", {"descriptor": desc})
    call(bed.cps, "step-boundary", {"session-id": "r-rev", "turn-id": 1, "step-id": 30})
    entry = session(bed.cps, "r-rev")
    assert entry["step-in-flight"] is True
    assert entry["decision-record"][-1]["selected"] == "v-C"
    revised = drafts.descriptor_68("r-rev", 30, "s-revised")
    revised["working-set"]["element"] = [drafts.DOC_SET]  # the context is no longer needed
    reply = call(bed.cps, "submit-descriptor", {"descriptor": revised})
    assert reply["evaluation"] == "completed"  # hold-and-watch (in flight) before
    assert (reply["outcome"], reply["selected"]) == (f"{AS}:move", "v-B")


def test_7_a_turn_report_does_not_count_its_steps_twice(bed: Bed) -> None:
    call(bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("r-acc", "s-accounted")})

    def report(report_id: str, amount: str, scope: str, step: int | None = None) -> None:
        attribution: Json = {"session-id": "r-acc", "turn-id": 1}
        if step is not None:
            attribution["step-id"] = step
        members: Json = {
            "report-id": report_id,
            "attribution": attribution,
            "scope": scope,
            "consumption": [{"dimension": f"{AS}:time", "amount": amount}],
        }
        call(bed.cps, "accounting-feedback", members)

    report("acc-1", "2000", "step", 1)
    report("acc-2", "3000", "step", 2)
    report("acc-t", "5500", "turn")  # the whole turn: 500 ms beyond its steps
    line = _time_line(session(bed.cps, "r-acc"))
    assert float(line["consumed"]) == pytest.approx(5500.0)  # 10500 before


def test_8_the_csma_advertises_its_instances_capability_itself(bed: Bed) -> None:
    """MSG-4 from ``catsctl csma``: nobody else advertises adv-X, whose tier the descriptor
    requires; once the C-SMA's own advertisement arrived (it refreshes every second) adv-X is
    eligible. Before, it stayed excluded, its tier unknown."""
    attempt = iter(range(1000))

    def selected() -> Json | None:
        session_id = f"r-adv-{next(attempt)}"
        desc = drafts.descriptor(session_id, 1, [drafts.DOCS], "s-advertised")
        reply = call(bed.cps, "submit-descriptor", {"descriptor": desc})
        return reply if reply.get("selected") == "adv-X" else None

    reply = wait_for("adv-X selected on its C-SMA's advertisement", selected, timeout=30)
    assert "excluded" not in reply
    record = session(bed.cps, reply["session-id"])["decision-record"][0]
    (candidate,) = record["candidate"]
    computing = candidate["valuation"]
    assert computing["forwarding"]["expected-time"]  # the test's C-NMA view


def test_9_presence_comes_by_subscription_and_only_the_unknown_is_asked(bed: Bed) -> None:
    """Once the C-PS's subscription to the C-SMA stands, a decision asks query-state nothing
    it knows; a change at the C-SMA (ka reserved at sb-B) reaches the next decision through
    state-presence-changed, without a query."""
    desc = drafts.descriptor("r-sub", 1, [KA], "s-subscribed")
    call(bed.cps, "submit-descriptor", {"descriptor": desc})

    def asked() -> int:
        return len(bed.csma.exchanges("query-state", "r-sub"))

    def evaluate() -> Json:
        call(bed.cps, "evaluate", {"session-id": "r-sub", "trigger": f"{AS}:t2-turn-start"})
        record: Json = session(bed.cps, "r-sub")["decision-record"][-1]
        return record

    def quiet() -> bool:  # a decision that asked nothing: the cache stands
        before = asked()
        evaluate()
        return asked() == before

    wait_for("a decision without query-state", quiet, timeout=30)
    before = asked()
    for _ in range(3):
        evaluate()
    assert asked() == before  # it asked every time before
    first = evaluate()
    b = next(c for c in first["candidate"] if c["csci-id"] == "sb-B")["valuation"]
    assert float(b["state-cost"]) > 0  # sb-B lacks ka
    agents = NetconfStateAgents(Credentials(*bed.csma.login))
    try:
        reply = agents.reserve_state(
            bed.csma.target,
            {
                "reservation-id": "rsv-sub",
                "session-id": "x-operator",
                "tenant": drafts.TENANT,
                "handoff-id": "ho-sub",
                "csci-id": "sb-B",
                "element": [
                    {
                        "reuse-key": "ka",
                        "element-class": f"{AS}:retrieved-material",
                        "residency": f"{AS}:accelerator-memory",
                    }
                ],
                "size": "2000000000",
                "needed-by": drafts.iso(time.time() + 30),
            },
        )
        assert reply["status"] == "accepted"

        def held_at_b() -> Json | None:
            record = evaluate()
            valued = next(c for c in record["candidate"] if c["csci-id"] == "sb-B")
            return record if float(valued["valuation"]["state-cost"]) == 0.0 else None

        wait_for("sb-B holding ka at the C-PS", held_at_b, timeout=30)
        assert asked() == before  # learned from the notification, not asked
    finally:
        agents.close()


def test_9_a_lost_subscription_is_not_trusted_and_is_taken_up_again(bed: Bed) -> None:
    """The C-SMA restarts (its reservation of ka at sb-B is gone with it): the C-PS drops what
    it learned from it, asks again (sb-B lacks ka once more), resubscribes (with replay from
    the loss) and relies on the subscription again."""
    csma = bed.csma
    stop(csma.process, timeout=10)
    command = [
        *(sys.executable, "-m", "controller.cli", "csma"),
        *("--config", str(bed.folder / "csma-r.json")),
        *("--state-dir", str(bed.folder / "csma-r-state")),
        *("--restconf-port", str(csma.restconf), "--netconf-port", str(csma.netconf)),
    ]
    with csma.log.open("ab") as sink:
        csma.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
    csma.wait()

    def evaluate() -> Json:
        call(bed.cps, "evaluate", {"session-id": "r-sub", "trigger": f"{AS}:t2-turn-start"})
        record: Json = session(bed.cps, "r-sub")["decision-record"][-1]
        return record

    def lacking_again() -> bool:
        valued = next(c for c in evaluate()["candidate"] if c["csci-id"] == "sb-B")
        return float(valued["valuation"]["state-cost"]) > 0

    wait_for("sb-B without ka at the C-PS", lacking_again, timeout=60)
    assert csma.exchanges("query-state", "r-sub")  # asked the restarted C-SMA

    def quiet() -> bool:
        before = len(csma.exchanges("query-state", "r-sub"))
        evaluate()
        return len(csma.exchanges("query-state", "r-sub")) == before

    wait_for("the subscription taken up again", quiet, timeout=60)
