"""Dispatcher helpers: flow and session keys, header hygiene, permitted sources (6.2, 8.1, 9)."""

from __future__ import annotations

import json
from dataclasses import replace

from agents.sci.collector import parse_exposition
from agents.sci.config import AffinitySettings, parse_config
from agents.sci.dispatcher import (
    Dispatcher,
    flow_key,
    permitted,
    response_headers,
    session_value,
)
from agents.sci.runtime import Runtime
from agents.sci.values import CheckResult, CheckType, Health, SiId
from tests.conftest import EXAMPLES_DIR

CONFIG = parse_config(json.loads((EXAMPLES_DIR / "sci-config.data.json").read_text()))
ENV = {
    "REMOTE_ADDR": "192.0.2.1",
    "REMOTE_PORT": "40000",
    "SERVER_NAME": "188.3.67.4",
    "SERVER_PORT": "69",
    "HTTP_COOKIE": "ARS_SESSION=abc; other=1",
    "HTTP_X_SESSION": "s-1",
    "HTTP_CONNECTION": "keep-alive",
    "HTTP_HOST": "188.3.67.4:69",
    "CONTENT_TYPE": "text/plain",
}


def test_flow_key_is_the_configured_five_tuple() -> None:
    assert flow_key(ENV, CONFIG.affinity.flow_key) == "flow:192.0.2.1|188.3.67.4|40000|69|tcp"
    assert flow_key(ENV, ("source-address",)) == "flow:192.0.2.1"


def test_session_from_cookie_or_header() -> None:
    assert session_value(ENV, CONFIG) == "abc"
    by_header = replace(CONFIG, affinity=AffinitySettings(session_header="X-Session"))
    assert session_value(ENV, by_header) == "s-1"
    assert session_value({}, by_header) is None
    assert session_value({}, CONFIG) is None


def test_nothing_identifies_the_instance_to_the_client() -> None:
    base = "http://10.3.0.11:8080"
    kept = response_headers(
        [
            ("X-Instance-Id", "ars-1"),
            ("Server", "si/ars-1"),
            ("Via", "1.1 ars-1"),
            ("Location", f"{base}/next"),
            ("Connection", "close"),
            ("X-Result", "ok"),
        ],
        base,
    )
    assert kept == [("Location", "/next"), ("X-Result", "ok")]


def test_permitted_sources() -> None:
    assert permitted("192.0.2.1", ())
    assert permitted("192.0.2.1", ("192.0.2.0/24",))
    assert not permitted("198.51.100.1", ("192.0.2.0/24",))
    assert not permitted("not-an-address", ("192.0.2.0/24",))


def _healthy(runtime: Runtime, now: float) -> None:
    """Every instance passes each check until it is HEALTHY (5.2 hysteresis)."""
    for instance in runtime.config.instances:
        for kind in (CheckType.LIVENESS, CheckType.READINESS, CheckType.PERFORMANCE):
            for _ in range(runtime.config.health.passes_to_up):
                runtime.record_check(instance.si_id, CheckResult(kind, passed=True), now)


def _degrade(runtime: Runtime, si_id: SiId, now: float) -> None:
    for _ in range(runtime.config.health.failures_to_down):
        runtime.record_check(si_id, CheckResult(CheckType.PERFORMANCE, passed=False), now)


def test_a_flow_leaves_a_degraded_instance_but_a_session_stays() -> None:
    """DEGRADED only as a last resort (6.1): a flow binding moves to a HEALTHY instance; a
    session binding stays, as its state lives on the instance."""
    runtime = Runtime(CONFIG, 1000.0)
    _healthy(runtime, 1000.0)
    dispatcher = Dispatcher(runtime)
    first, second = (i.si_id for i in CONFIG.instances[:2])
    runtime.sessions.bind("flow:a", first, 1000.0, session=False)
    runtime.sessions.bind("session:s", first, 1000.0, session=True)
    assert dispatcher._order(("flow:a",), 1000.0)[1] == first
    _degrade(runtime, first, 1001.0)
    assert runtime.health_of()[first] is Health.DEGRADED
    order, bound = dispatcher._order(("flow:a",), 1001.0)
    assert bound is None
    assert first not in [c.si_id for c in order]
    assert second in [c.si_id for c in order]
    assert dispatcher._order(("session:s",), 1001.0)[1] == first


def test_4_3_occupancy_is_the_session_managers_count_not_a_scraped_gauge() -> None:
    """A scrape that saw requests in flight (they have since finished) takes no slot: GAS
    and least-connections see the Session Manager's count, here nothing."""
    runtime = Runtime(CONFIG, 1000.0)
    _healthy(runtime, 1000.0)
    first = CONFIG.instances[0].si_id
    seen = parse_exposition("cats_si_active_sessions 3\n", 1000.0)
    runtime.record_scrape(first, seen)
    loads = {load.si_id: load.active_sessions for load in runtime.loads(1000.5)}
    assert loads[first] == 0  # it was 3 until the next scrape
    active = {c.si_id: c.active for c in runtime.candidates(1000.5)}
    assert active[first] == 0
    runtime.sessions.bind("session:s", first, 1000.0, session=True)
    assert {load.si_id: load.active_sessions for load in runtime.loads(1000.5)}[first] == 1
