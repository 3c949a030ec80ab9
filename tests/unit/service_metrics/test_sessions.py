"""Session affinity, re-routing on failure, decisions as notifications (service-metrics-op
6.2.4, 6.2.5) on a real ServiceMetrics with an injected clock and a collecting publisher."""

from __future__ import annotations

from typing import Any

import pytest

from controller.datastore.api import Principal
from controller.selection.joint import CstEntry, Health, NstEntry, from_ms
from controller.service_metrics.policy import config
from controller.service_metrics.service import ServiceMetrics
from controller.types import CsciId, CsId, ForwarderId, Json
from tests.unit.service_metrics.test_service import T0, Clock, Config

SM = "ietf-cats-service-metrics"
ARS = CsId("ARS")
INGRESS = "10.0.0.1"
SCI1 = CsciId("188.3.67.3:67")
SCI3 = CsciId("188.3.67.4:69")
AFFINE: Json = {"session-affinity": True}


class Built:
    """A ServiceMetrics on the section 7.1 tables of ARS, its clock and what it published."""

    def __init__(self, policy: Json | None = None, plausibility: Json | None = None) -> None:
        self.clock = Clock()
        self.published: list[Json] = []
        parsed = config(policy or {}, {}, {}, plausibility or {})
        self.service = ServiceMetrics(Config(parsed), self.clock, self.published.append)
        self.put(SCI1, 400, 5)
        self.put(SCI3, 600, 6)
        self.path("188.3.67.3", 8)
        self.path("188.3.67.4", 6)

    def put(self, csci: str, gas: int, ct_ms: int | str, **extra: Any) -> None:
        egress = ForwarderId(csci.split(":", maxsplit=1)[0])
        entry = CstEntry(
            ARS, CsciId(csci), gas, from_ms(ct_ms), T0, T0 + 10**7, egress=egress, **extra
        )
        self.service.index.put_cst(entry)

    def path(self, egress: str, delay_ms: int | str) -> None:
        path = NstEntry(ForwarderId(INGRESS), ForwarderId(egress), from_ms(delay_ms), T0)
        self.service.index.put_nst(path)

    def select(self, session: str | None = None, **members: Any) -> Json:
        asked: Json = {"cs-id": "ARS", "ingress": INGRESS, **members}
        if session is not None:
            asked["session-id"] = session
            asked.setdefault("requirement", AFFINE)
        return self.service.select_service(Principal("cf-1"), asked)

    def sessions(self) -> list[Json]:
        found: list[Json] = self.service.affined_sessions_state()[f"{SM}:affined-sessions"].get(
            "session", []
        )
        return found

    def decisions(self) -> list[Json]:
        kept: list[Json] = self.service.decisions_state()[f"{SM}:selection-decisions"]["decision"]
        return kept


def stamp(offset: float) -> str:
    return {0: "2026-11-30T10:00:00.000000Z", 5: "2026-11-30T10:00:05.000000Z"}[int(offset)]


def test_a_session_is_bound_and_reuses_its_csci_while_it_is_usable() -> None:
    built = Built()
    first = built.select("s1")
    assert (first["decision-id"], first["csci-id"], first["decided-by"]) == ("1", SCI3, "score")
    built.path("188.3.67.4", 20)  # scenario B: SCI1 (13 ms) now beats SCI3 (26 ms)
    built.clock.now = T0 + 5
    again = built.select("s1")
    assert (again["csci-id"], again["decided-by"]) == (SCI3, "affinity")
    assert built.select()["csci-id"] == SCI1  # a request without a session is optimized
    (session,) = built.sessions()
    assert session == {
        "session-id": "s1",
        "cs-id": "ARS",
        "ingress": INGRESS,
        "csci-id": SCI3,
        "egress": "188.3.67.4",
        "established": stamp(0),
        "last-used": stamp(5),
        "decision-id": "1",
        "migrations": 0,
    }


def test_no_binding_without_affinity_and_none_on_a_dry_run() -> None:
    built = Built()
    built.select("s1", requirement={})
    built.select("s2", **{"dry-run": [None]})
    assert built.sessions() == []
    assert built.decisions()[1]["request"]["dry-run"] == [None]
    assert built.decisions()[1]["request"]["session-id"] == "s2"


def test_affinity_from_the_default_requirement() -> None:
    built = Built({"default-requirement": AFFINE})
    built.select("s1", requirement={})
    assert [s["csci-id"] for s in built.sessions()] == [SCI3]


def test_a_dry_run_uses_a_binding_without_refreshing_it() -> None:
    built = Built()
    built.select("s1")
    built.path("188.3.67.4", 20)
    built.clock.now = T0 + 5
    dry = built.select("s1", **{"dry-run": [None]})
    assert (dry["csci-id"], dry["decided-by"]) == (SCI3, "affinity")
    assert built.sessions()[0]["last-used"] == stamp(0)


def test_bindings_expire_after_the_affinity_timeout_without_use() -> None:
    built = Built({"affinity-timeout": 10})
    built.select("s1")
    built.path("188.3.67.4", 20)
    built.clock.now = T0 + 9
    assert built.select("s1")["decided-by"] == "affinity"  # used: lives to T0 + 19
    built.clock.now = T0 + 18.9
    assert len(built.sessions()) == 1
    built.clock.now = T0 + 19
    assert built.sessions() == []
    again = built.select("s1")
    assert (again["csci-id"], again["decided-by"]) == (SCI1, "score")
    assert built.sessions()[0]["established"] == "2026-11-30T10:00:19.000000Z"


def test_timeout_zero_never_expires() -> None:
    built = Built({"affinity-timeout": 0})
    built.select("s1")
    built.clock.now = T0 + 10**6
    assert [s["csci-id"] for s in built.sessions()] == [SCI3]


def test_the_least_recently_used_binding_goes_beyond_max_affined_sessions() -> None:
    built = Built({"max-affined-sessions": 2})
    for number, session in enumerate(("s1", "s2", "s1", "s3")):
        built.clock.now = T0 + number
        built.select(session)
    assert sorted(s["session-id"] for s in built.sessions()) == ["s1", "s3"]


def test_a_request_reselects_when_the_bound_csci_is_no_longer_usable() -> None:
    built = Built()
    built.select("s1")
    built.put(SCI3, 0, 6)  # GAS 0: out of the Candidate_Set (Step 1)
    built.clock.now = T0 + 5
    again = built.select("s1")
    assert (again["csci-id"], again["decided-by"]) == (SCI1, "only-candidate")
    (session,) = built.sessions()
    assert (session["csci-id"], session["decision-id"], session["migrations"]) == (SCI1, "2", 0)
    assert session["established"] == stamp(0)


def test_every_decision_is_published_without_its_candidates() -> None:
    built = Built()
    built.select("s1")
    built.select(**{"candidate-report": "none"})
    assert built.published == [
        {
            f"{SM}:selection-decision": {
                "decision-id": "1",
                "trigger": "request",
                "cs-id": "ARS",
                "ingress": INGRESS,
                "session-id": "s1",
                "result": "selected",
                "fallback-level": "none",
                "csci-id": SCI3,
                "egress": "188.3.67.4",
                "total-service-time": "12.000",
            }
        },
        {
            f"{SM}:selection-decision": {
                "decision-id": "2",
                "trigger": "request",
                "cs-id": "ARS",
                "ingress": INGRESS,
                "result": "selected",
                "fallback-level": "none",
                "csci-id": SCI3,
                "egress": "188.3.67.4",
                "total-service-time": "12.000",
            }
        },
    ]


MIGRATE: Json = {"rerouting": {"affined-session-action": "migrate"}}


def test_migrate_reselects_rebinds_and_records_a_rerouting_decision() -> None:
    built = Built(MIGRATE)
    built.select("s1")
    built.select("s2")
    built.published.clear()
    built.put(SCI3, 0, 6)
    built.clock.now = T0 + 5
    built.service.reroute([(ARS, SCI3)])
    sessions = {s["session-id"]: s for s in built.sessions()}
    assert {s: (b["csci-id"], b["decision-id"], b["migrations"]) for s, b in sessions.items()} == {
        "s1": (SCI1, "3", 1),
        "s2": (SCI1, "4", 1),
    }
    record = built.decisions()[2]
    assert (record["id"], record["trigger"], record["csci-id"]) == ("3", "re-routing", SCI1)
    assert record["request"] == {"cs-id": "ARS", "ingress": INGRESS, "session-id": "s1"}
    decision, rerouted = built.published[:2]
    assert decision[f"{SM}:selection-decision"]["trigger"] == "re-routing"
    assert decision[f"{SM}:selection-decision"]["session-id"] == "s1"
    assert rerouted == {
        f"{SM}:session-rerouted": {
            "session-id": "s1",
            "cs-id": "ARS",
            "previous-csci-id": SCI3,
            "action": "migrate",
            "new-csci-id": SCI1,
            "decision-id": "3",
        }
    }
    assert len(built.published) == 4
    stats = built.service.decisions_state()[f"{SM}:selection-decisions"]["statistics"]
    assert stats["decisions"] == "4"


def test_terminate_is_the_default_and_removes_the_binding() -> None:
    built = Built()
    built.select("s1")
    built.published.clear()
    built.put(SCI3, 3, 6, health=Health.UNHEALTHY)
    built.service.reroute([(ARS, SCI3)])
    assert built.sessions() == []
    assert built.published == [
        {
            f"{SM}:session-rerouted": {
                "session-id": "s1",
                "cs-id": "ARS",
                "previous-csci-id": SCI3,
                "action": "terminate",
            }
        }
    ]
    assert len(built.decisions()) == 1  # terminating takes no decision


def test_the_service_policy_action_overrides_rerouting() -> None:
    terminate = {"cs-id": "ARS", "affined-session-action": "terminate"}
    policy = {**MIGRATE, "service-policy": [terminate]}
    built = Built(policy)
    built.select("s1")
    built.service.index.remove_cst(ARS, SCI3)
    built.service.reroute([(ARS, SCI3)])
    assert built.sessions() == []
    assert built.published[-1][f"{SM}:session-rerouted"]["action"] == "terminate"


def test_a_migration_with_nothing_to_migrate_to_terminates() -> None:
    built = Built(MIGRATE)
    built.select("s1")
    built.put(SCI3, 0, 6)
    built.put(SCI1, 0, 5)
    built.service.reroute([(ARS, SCI3)])
    assert built.sessions() == []
    record = built.decisions()[1]
    assert (record["trigger"], record["result"]) == ("re-routing", "egress-only")
    assert built.published[-1] == {
        f"{SM}:session-rerouted": {
            "session-id": "s1",
            "cs-id": "ARS",
            "previous-csci-id": SCI3,
            "action": "terminate",
            "decision-id": "2",
        }
    }


def test_an_entry_usable_again_is_not_rerouted() -> None:
    built = Built(MIGRATE)
    built.select("s1")
    built.put(SCI3, 0, 6)
    built.put(SCI3, 50, 6)  # a newer report before the hook ran
    built.service.reroute([(ARS, SCI3)])
    assert [s["csci-id"] for s in built.sessions()] == [SCI3]
    assert len(built.published) == 1


def test_an_aged_out_entry_is_rerouted() -> None:
    built = Built(MIGRATE)
    built.select("s1")
    built.service.index.put_cst(
        CstEntry(ARS, SCI3, 600, from_ms(6), T0, T0 + 30, egress=ForwarderId("188.3.67.4"))
    )
    built.clock.now = T0 + 30
    built.service.reroute([(ARS, SCI3)])
    assert [(s["csci-id"], s["migrations"]) for s in built.sessions()] == [(SCI1, 1)]


@pytest.mark.parametrize("report", ["examined", "none"])
def test_examined_and_none_visit_few_of_ten_thousand_candidates(report: str) -> None:
    built = Built()
    for number in range(10_000):
        computing = f"{3 + (number * 7919) % 10_000 / 1000:.3f}"
        built.put(f"10.1.{number % 100}.1:{number}", 5, computing)
    for egress in range(100):
        built.path(f"10.1.{egress}.1", f"{1 + egress / 1000:.3f}")
    full = built.select(**{"candidate-report": "all"})
    fast = built.select(**{"candidate-report": report})
    winner = (full["csci-id"], full["egress"], full["total-service-time"])
    assert winner == ("10.1.0.1:0", "10.1.0.1", "4.000")
    assert (fast["csci-id"], fast["egress"], fast["total-service-time"]) == winner
    assert len(full["candidate"]) == 10_002
    assert len(fast.get("candidate", ())) <= 3
    assert fast["candidate-report"] == report
