"""Metric Collector: the Prometheus exposition of a real service instance app, parsed (4.1, 4.2)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agents.sci.collector import derive, histogram_quantile, parse_exposition
from agents.sci.errors import SciError
from agents.service_instance.app import InstanceSettings, ServiceInstance, ServiceTime


def _call(
    app: ServiceInstance, path: str, method: str = "GET", body: bytes = b""
) -> tuple[str, bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen["status"] = status

    environ = {
        "PATH_INFO": path,
        "REQUEST_METHOD": method,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    out = b"".join(app(environ, start_response))
    return seen["status"], out


def test_the_service_instance_exposition_gives_every_41_metric() -> None:
    app = ServiceInstance(InstanceSettings("a", 4, ServiceTime("fixed", 1.0)))
    _, first = _call(app, "/metrics")
    before = parse_exposition(first.decode(), at=100.0)
    for _ in range(10):
        assert _call(app, "/work")[0] == "200 OK"
    _, second = _call(app, "/metrics")
    after = parse_exposition(second.decode(), at=102.0)
    metrics = derive(before, after)
    assert metrics.max_capacity == 4
    assert metrics.active_sessions == 0
    assert metrics.queue_depth == 0
    assert metrics.cpu == 0.0
    assert metrics.throughput == pytest.approx(5.0)  # 10 requests in 2 s
    assert metrics.error_rate == 0.0
    assert metrics.response_time_ms is not None
    assert 1.0 <= metrics.response_time_ms < 50.0
    assert metrics.response_time_p95_ms is not None


def test_rates_are_unknown_without_traffic() -> None:
    text = "cats_si_requests_total 5\ncats_si_active_sessions 2\n"
    metrics = derive(parse_exposition(text, 1.0), parse_exposition(text, 2.0))
    assert (metrics.throughput, metrics.error_rate, metrics.response_time_ms) == (0.0, None, None)
    assert metrics.active_sessions == 2
    assert metrics.cpu is None  # not exposed: unknown, not zero


@pytest.mark.parametrize(
    "text",
    ['cats_si_active_sessions{le="1" 3\n', "cats_si_active_sessions one\n", "\x00\x01"],
)
def test_a_malformed_exposition_is_refused(text: str) -> None:
    with pytest.raises(SciError, match="malformed"):
        parse_exposition(text, 0.0)


def test_histogram_quantile_interpolates() -> None:
    buckets = ((0.01, 50.0), (0.02, 100.0), (float("inf"), 100.0))
    assert histogram_quantile(buckets, 0.5) == pytest.approx(0.01)
    assert histogram_quantile(buckets, 0.95) == pytest.approx(0.019)
    assert histogram_quantile((), 0.95) is None


def test_admin_switches_fail_health_and_slow_down() -> None:
    app = ServiceInstance(InstanceSettings("a", 1, ServiceTime("fixed", 0.0)))
    assert _call(app, "/health")[0] == "200 OK"
    assert _call(app, "/admin", "POST", b'{"health": false, "slow-ms": 2}')[0] == "200 OK"
    assert _call(app, "/health")[0].startswith("503")
    assert _call(app, "/ready")[0].startswith("503")
    assert _call(app, "/admin", "POST", b'{"health": "no"}')[0].startswith("400")
    assert _call(app, "/admin", "POST", b"[1]")[0].startswith("400")
    assert app.admin_state()["slow-ms"] == 2.0


def test_service_time_distributions() -> None:
    import random  # noqa: PLC0415

    rng = random.Random(1)
    assert ServiceTime("fixed", 7.0).draw(rng) == 7.0
    uniform = [ServiceTime("uniform", 10.0, 5.0).draw(rng) for _ in range(200)]
    assert all(5.0 <= x <= 15.0 for x in uniform)
    exponential = [ServiceTime("exponential", 10.0).draw(rng) for _ in range(4000)]
    assert 9.0 < sum(exponential) / len(exponential) < 11.0
