"""The presence cache of the C-PS (M40, M42): what is relied on, what is asked again."""

from __future__ import annotations

from controller.agent_selection.presence import PresenceCache
from controller.selection.mapping.vocabulary import Presence
from controller.southbound import Target
from controller.types import CsciId, Json, ReuseKey, TenantId
from tests.unit.agent_selection import drafts

CSMA = Target("csma-1", "127.0.0.1", 830)
TENANT = TenantId("tenant-1")
A, B = CsciId("A"), CsciId("B")
KV, DOCS = ReuseKey("kv"), ReuseKey("docs")
T0 = 1_800_000_000.0


def _element(key: str, presence: str, at: float) -> Json:
    return {
        "reuse-key": key,
        "presence": presence,
        "residency": f"{drafts.AS}:accelerator-memory" if presence == "present" else None,
        "collected-at": drafts.iso(at),
        "freshness-bound": "5000",
        "source": "csma-1",
        "confidence": "asserted",
    }


def _answer(at: float, **by_candidate: list[tuple[str, str]]) -> Json:
    candidates = []
    for csci, elements in by_candidate.items():
        docs = [
            {k: v for k, v in _element(key, p, at).items() if v is not None} for key, p in elements
        ]
        candidates.append({"csci-id": csci, "element": docs})
    return {"tenant": TENANT, "candidate": candidates}


def test_without_a_subscription_everything_is_asked_and_nothing_kept() -> None:
    cache = PresenceCache()
    plan = cache.plan(CSMA, [A, B], TENANT, [KV, DOCS], T0)
    assert (plan.cached, plan.ask, plan.keys) == ({}, [A, B], [KV, DOCS])
    assert cache.answered(CSMA, TENANT, _answer(T0, A=[("kv", "present")]), T0, T0) is None


def test_m42_under_a_subscription_only_what_is_unknown_or_old_is_asked() -> None:
    cache = PresenceCache(lifetime=60.0)
    cache.up(CSMA, T0)
    answer = _answer(T0 + 1, A=[("kv", "present"), ("docs", "absent")], B=[("kv", "unknown")])
    kept = cache.answered(CSMA, TENANT, answer, T0 + 1, T0 + 1)
    assert kept is not None
    assert set(kept[A]) == {(TENANT, KV)}  # absent left out: the core reads it as absent
    assert kept[B][(TENANT, KV)].presence is Presence.UNKNOWN  # this decision sees unknown
    plan = cache.plan(CSMA, [A, B], TENANT, [KV, DOCS], T0 + 10)
    assert list(plan.cached) == [A]
    assert (plan.ask, plan.keys) == ([B], [KV, DOCS])  # unknown is asked again (MSG-6)
    assert cache.plan(CSMA, [A], TENANT, [KV], T0 + 40).ask == [A]  # past half its lifetime
    meta = kept[A][(TENANT, KV)].meta
    assert (meta.collected_at, meta.freshness_bound, meta.source) == (T0 + 1, 60.0, "csma-1")


def test_m42_a_notification_changes_the_map_and_an_older_answer_does_not_undo_it() -> None:
    cache = PresenceCache()
    cache.up(CSMA, T0)
    cache.answered(CSMA, TENANT, _answer(T0 + 1, A=[("kv", "absent")]), T0 + 1, T0 + 1)
    notice = {"csci-id": "A", "tenant": TENANT, "element": [_element("kv", "present", T0 + 3)]}
    cache.notified(CSMA, notice, T0 + 3)
    stale = cache.answered(CSMA, TENANT, _answer(T0 + 2, A=[("kv", "absent")]), T0 + 2, T0 + 4)
    assert stale is not None
    assert stale[A][(TENANT, KV)].presence is Presence.PRESENT


def test_a_lost_subscription_forgets_and_an_answer_asked_before_it_stood_is_not_kept() -> None:
    cache = PresenceCache()
    cache.up(CSMA, T0)
    cache.answered(CSMA, TENANT, _answer(T0 + 1, A=[("kv", "present")]), T0 + 1, T0 + 1)
    cache.down(CSMA)
    assert cache.plan(CSMA, [A], TENANT, [KV], T0 + 2).ask == [A]
    cache.up(CSMA, T0 + 5)
    early = cache.answered(CSMA, TENANT, _answer(T0 + 4, A=[("kv", "present")]), T0 + 4, T0 + 6)
    assert early is None  # asked at T0+4, before the subscription stood at T0+5
    assert cache.plan(CSMA, [A], TENANT, [KV], T0 + 6).ask == [A]


def test_m42_a_candidate_relied_on_is_asked_again_once_a_notice_makes_a_key_unknown() -> None:
    """The plan remembers, per candidate, when its keys were learned; every change of its
    facts makes it look again (a decision must never rely on what was notified unknown)."""
    cache = PresenceCache(lifetime=60.0)
    cache.up(CSMA, T0)
    answer = _answer(T0 + 1, A=[("kv", "present"), ("docs", "absent")])
    cache.answered(CSMA, TENANT, answer, T0 + 1, T0 + 1)
    first = cache.plan(CSMA, [A], TENANT, [KV, DOCS], T0 + 2)
    assert list(first.cached) == [A]
    assert cache.plan(CSMA, [A], TENANT, [KV, DOCS], T0 + 3) is first  # nothing changed
    assert cache.plan(CSMA, [A], TENANT, [KV], T0 + 3) is not first  # other keys
    notice = {"csci-id": "A", "tenant": TENANT, "element": [_element("docs", "unknown", T0 + 4)]}
    cache.notified(CSMA, notice, T0 + 4)
    plan = cache.plan(CSMA, [A], TENANT, [KV, DOCS], T0 + 5)
    assert (plan.cached, plan.ask, plan.keys) == ({}, [A], [DOCS])
    cache.answered(CSMA, TENANT, _answer(T0 + 6, A=[("docs", "present")]), T0 + 6, T0 + 6)
    assert list(cache.plan(CSMA, [A], TENANT, [KV, DOCS], T0 + 7).cached) == [A]
    assert cache.plan(CSMA, [A], TENANT, [KV, DOCS], T0 + 31.5).ask == [A]  # kv: 30.5 s old
