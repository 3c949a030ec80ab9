"""``catsctl sci`` with real ``catsctl service-instance`` processes, reporting to a real
``catsctl serve`` that stands in for the C-SMA (tests/functional/plugins/sci_report_plugin.py).

The server validates every report against ietf-cats-sci before the plugin records it, so each
recorded report is a valid Table 1 message. Intervals are 1 s, hysteresis N = M = 2.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests

from tests.conftest import ROOT
from tests.functional.restconf_server import ADMIN, Server, admin_users, free_port, seeded_server
from tools.bench.common import stop

pytestmark = pytest.mark.functional
PLUGIN = "tests.functional.plugins.sci_report_plugin"
LOG_ENV = "CATS_SCI_REPORT_LOG"
START_S = 120.0  # a bound under load for a process or a condition, not a speed
CAPACITY = {"a": 4, "b": 4, "c": 2}
MARGIN, FACTOR, SLOW_MS, THRESHOLD_MS = 0.8, 0.5, 300, 150
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = START_S) -> T:
    """Poll ``probe`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Instance:
    """A running ``catsctl service-instance``."""

    name: str
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [
            sys.executable,
            "-m",
            "controller.cli",
            "service-instance",
            "--listen",
            f"127.0.0.1:{self.port}",
            "--name",
            self.name,
            "--capacity",
            str(CAPACITY[self.name]),
            "--mean-ms",
            "20",
        ]
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)

    def ready(self) -> bool:
        with contextlib.suppress(requests.RequestException):
            return requests.get(f"{self.url}/health", timeout=1).ok
        return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=5)

    def admin(self, **switches: object) -> dict[str, Any]:
        body = {key.replace("_", "-"): value for key, value in switches.items()}
        reply = requests.post(f"{self.url}/admin", json=body, timeout=5)
        assert reply.ok, reply.text
        state: dict[str, Any] = reply.json()
        return state

    def served(self) -> int:
        return int(self.admin()["requests"])


def sci_command(config: Path, state_dir: Path, login: tuple[str, str], manage: int) -> list[str]:
    """``catsctl sci`` with this configuration, state directory, C-SMA login and management
    port."""
    return [
        *(sys.executable, "-m", "controller.cli", "sci"),
        *("--config", str(config), "--state-dir", str(state_dir)),
        *("--username", login[0], "--password", login[1]),
        *("--manage", f"127.0.0.1:{manage}"),
    ]


def sci_config(port: int, restconf: str, instances: list[Instance]) -> dict[str, object]:
    """The SCI's configuration: short intervals, 80 % margin, 50 % degradation."""
    return {
        "ietf-cats-sci:sci": {
            "csci-id": f"127.0.0.1:{port}",
            "cs-id": "ARS",
            "client-interface": {"address": "127.0.0.1", "port": port},
            "c-sma": {"restconf-uri": restconf},
            "service-instance": [
                {
                    "si-id": i.name,
                    "address": "127.0.0.1",
                    "port": i.port,
                    "metrics-uri": f"{i.url}/metrics",
                    "health-uri": f"{i.url}/health",
                    "readiness-uri": f"{i.url}/ready",
                    "max-capacity": CAPACITY[i.name],
                }
                for i in instances
            ],
            "metric-collection": {"sampling-interval-ms": 1000},
            "health-monitoring": {
                "liveness": {"method": "http-get", "interval-ms": 1000, "timeout-ms": 500},
                "readiness": {"interval-ms": 1000, "timeout-ms": 500},
                "performance": {
                    "interval-ms": 1000,
                    "response-time-threshold": f"{THRESHOLD_MS}.000",
                },
                "hysteresis": {"failures-to-down": 2, "passes-to-up": 2},
            },
            "aggregation": {
                "safety-margin": "80.000",
                "degradation-factor": "50.000",
                "measurement-window-ms": 2000,
                "health-batch-window-ms": 0,
            },
            "dispatch": {"algorithm": "ietf-cats-sci:round-robin"},
            "affinity": {"session-affinity": {"header-name": "X-Cats-Session"}},
            "reporting": {
                "heartbeat-interval-ms": 2000,
                "rate-limit": {"min-interval-ms": 100},
                "include-instance-details": True,
            },
        }
    }


@dataclass
class Site:
    """The C-SMA stand-in, three instances and the SCI (restartable)."""

    cps: Server
    reports: Path
    instances: dict[str, Instance]
    folder: Path
    port: int
    manage: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start_sci(self) -> None:
        config = self.folder / "sci.json"
        restconf = f"http://127.0.0.1:{self.cps.port}/restconf"
        config.write_text(
            json.dumps(sci_config(self.port, restconf, list(self.instances.values())))
        )
        command = sci_command(config, self.folder / "sci-state", ADMIN, self.manage)
        with (self.folder / "sci.log").open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
        wait_for("the SCI", self._up, timeout=30)

    def _up(self) -> bool:
        with contextlib.suppress(requests.RequestException):
            return requests.get(f"http://127.0.0.1:{self.manage}/state", timeout=1).ok
        return False

    def stop_sci(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=10)

    def state(self) -> dict[str, Any]:
        reply = requests.get(f"http://127.0.0.1:{self.manage}/state", timeout=5)
        document: dict[str, Any] = reply.json()["ietf-cats-sci:sci"]
        return document

    def health(self) -> dict[str, str]:
        return {i["si-id"]: i["state"]["health"] for i in self.state()["service-instance"]}

    def notifications(self) -> list[dict[str, Any]]:
        reply = requests.get(f"http://127.0.0.1:{self.manage}/notifications", timeout=5)
        return [n["ietf-cats-sci:instance-health-changed"] for n in reply.json()["notifications"]]

    def recorded(self) -> list[dict[str, Any]]:
        if not self.reports.exists():
            return []
        return [json.loads(line) for line in self.reports.read_text().splitlines() if line]

    def report_after(self, at: float, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first report generated after ``at`` (Unix time) that passes ``check``."""

        def probe() -> dict[str, Any] | None:
            for report in self.recorded():
                if _epoch(report["timestamp"]) >= at and check(report):
                    return report
            return None

        return wait_for("a matching report", probe)

    def wait_health(self, expected: dict[str, str], timeout: float = 60.0) -> None:
        wait_for(f"health {expected}", lambda: self.health() == expected, timeout)


def _epoch(text: str) -> float:
    from datetime import datetime  # noqa: PLC0415

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def gas(free: dict[str, float]) -> int:
    return math.floor(MARGIN * sum(free.values()))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("sci")
    reports = folder / "reports.jsonl"
    instances = {name: Instance(name, free_port(), folder / f"si-{name}.log") for name in CAPACITY}
    for instance in instances.values():
        instance.start()
    os.environ[LOG_ENV] = str(reports)
    try:
        with seeded_server(folder, admin_users(), "--plugin", PLUGIN) as cps:
            wait_for("the instances", lambda: all(i.ready() for i in instances.values()), START_S)
            running = Site(cps, reports, instances, folder, free_port(), free_port())
            running.start_sci()
            try:
                running.wait_health(dict.fromkeys(CAPACITY, "healthy"))
                yield running
            finally:
                running.stop_sci()
    finally:
        del os.environ[LOG_ENV]
        for instance in instances.values():
            instance.stop()


def _send(site: Site, count: int, **headers: str) -> list[requests.Response]:
    return [requests.get(f"{site.url}/work", headers=headers, timeout=10) for _ in range(count)]


def test_reports_carry_gas_of_the_real_instances(site: Site) -> None:
    """4.3: GAS = floor(80 % x SUM(max_capacity - active)) = floor(0.8 x 10) = 8."""
    report = site.report_after(time.time(), lambda r: r["health-summary"]["healthy"] == 3)
    assert report["gas"] == gas({"a": 4, "b": 4, "c": 2}) == 8
    assert report["csci-id"] == f"127.0.0.1:{site.port}"
    details = {i["si-id"]: i for i in report["instance"]}
    assert {k: v["available-slots"] for k, v in details.items()} == CAPACITY
    assert details["a"]["status"]["active-sessions"] == 0
    assert "cpu-utilization" in details["a"]["resource"]


def test_computing_time_is_the_observed_response_time(site: Site) -> None:
    began = time.time()
    replies = _send(site, 12)
    assert all(r.status_code == 200 for r in replies)
    report = site.report_after(began, lambda r: "computing-time" in r)
    ct = report["computing-time"]
    value, stats = float(ct["value"]), ct["statistics"]
    low, high = float(stats["min"]), float(stats["max"])
    assert 20.0 <= low <= float(stats["mean"]) <= high  # 20 ms of service plus the forwarding
    assert low <= value <= high  # a mean of what was observed, however loaded the machine
    slowest = max(r.elapsed.total_seconds() for r in replies) * 1000
    assert low <= slowest  # what the SCI measured, the client waited for at least
    assert ct["estimator"] == "ietf-cats-sci:load-weighted-mean"


def test_responses_do_not_reveal_the_instance(site: Site) -> None:
    reply = requests.get(f"{site.url}/work", timeout=10)
    assert reply.status_code == 200
    assert "X-Instance-Id" not in reply.headers
    assert "si/" not in reply.headers.get("Server", "")
    assert str(site.instances["a"].port) not in json.dumps(dict(reply.headers))


def test_session_affinity_holds_and_sessions_count_into_gas(site: Site) -> None:
    before = {name: i.served() for name, i in site.instances.items()}
    replies = _send(site, 6, **{"X-Cats-Session": "alice"})
    assert all(r.status_code == 200 for r in replies)
    _send(site, 1, **{"X-Cats-Session": "bob"})
    after = {name: i.served() for name, i in site.instances.items()}
    deltas = sorted(after[name] - before[name] for name in after)
    assert deltas in ([0, 1, 6], [0, 0, 7])  # alice's six on one instance
    began = time.time()
    report = site.report_after(began, lambda r: r["gas"] < 8)
    assert report["gas"] == gas({"all": 10 - 2})  # two sessions hold a slot each
    _send(site, 1, **{"X-Cats-Session": "alice", "CATS-Session-End": "1"})
    _send(site, 1, **{"X-Cats-Session": "bob", "CATS-Session-End": "1"})
    assert site.report_after(time.time(), lambda r: r["gas"] == 8)


def test_active_sessions_are_the_session_managers_not_the_scraped_gauge(site: Site) -> None:
    """4.3, 6.3: a request c serves that did not pass the SCI shows in c's scraped in-flight
    gauge; GAS and the slots stay the Session Manager's (nothing of the SCI is in flight), so
    a scrape taken while it ran does not hold a slot until the next scrape."""
    c = site.instances["c"]
    c.admin(slow_ms=2500)
    began = time.time()
    direct = threading.Thread(target=lambda: requests.get(f"{c.url}/work", timeout=10), daemon=True)
    direct.start()
    try:

        def scraped_in_flight(report: dict[str, Any]) -> bool:
            details = {i["si-id"]: i for i in report["instance"]}
            collected = _epoch(details["c"].get("collected-at", "1970-01-01T00:00:00Z"))
            return began + 0.2 < collected < began + 2.3

        report = site.report_after(began, scraped_in_flight)
    finally:
        direct.join(timeout=10)
        c.admin(slow_ms=0)
    details = {i["si-id"]: i for i in report["instance"]}
    assert details["c"]["status"]["active-sessions"] == 0  # it was the gauge's 1
    assert details["c"]["available-slots"] == CAPACITY["c"]
    assert report["gas"] == 8  # floor(0.8 x 9) = 7 before


def test_failed_health_is_unhealthy_after_n_checks_and_gets_nothing(site: Site) -> None:
    """5.2: N = 2 failed checks down, M = 2 passes up; GAS drops c's 2 slots and returns."""
    c = site.instances["c"]
    c.admin(health=False)
    switched = time.time()
    site.wait_health({"a": "healthy", "b": "healthy", "c": "unhealthy"})
    down = next(n for n in reversed(site.notifications()) if n["si-id"] == "c")
    assert (down["old-health"], down["new-health"], down["consecutive-results"]) == (
        "healthy",
        "unhealthy",
        2,
    )
    assert time.time() - switched >= 0.9  # not on the first failure
    report = site.report_after(switched, lambda r: r["health-summary"]["unhealthy"] == 1)
    assert "ietf-cats-sci:instance-health-change" in report["trigger"]
    assert report["gas"] == gas({"a": 4, "b": 4}) == 6
    served = c.served()
    assert all(r.status_code == 200 for r in _send(site, 12))
    assert c.served() == served  # never dispatched to the UNHEALTHY instance
    c.admin(health=True)
    back = time.time()
    site.wait_health(dict.fromkeys(CAPACITY, "healthy"))
    event = "ietf-cats-sci:instance-recovered"
    recovered = site.report_after(back, lambda r: event in r["trigger"])
    assert recovered["report-kind"] == "event"
    assert recovered["gas"] == 8


def test_a_slow_instance_is_degraded_and_weighted_lower(site: Site) -> None:
    """5.3: DEGRADED halves a's capacity in GAS; it gets requests only as a last resort."""
    a = site.instances["a"]
    a.admin(slow_ms=SLOW_MS)
    began = time.time()
    _send(site, 6)  # round-robin: a answers in more than the 150 ms threshold
    site.wait_health({"a": "degraded", "b": "healthy", "c": "healthy"})
    report = site.report_after(began, lambda r: r["health-summary"]["degraded"] == 1)
    assert report["gas"] == gas({"a": 4 * FACTOR, "b": 4, "c": 2}) == 6
    served = a.served()
    assert all(r.status_code == 200 for r in _send(site, 6))
    assert a.served() == served  # HEALTHY ones first
    a.admin(slow_ms=0)
    site.wait_health(dict.fromkeys(CAPACITY, "healthy"), timeout=10)


def test_a_killed_instance_goes_and_comes_back(site: Site) -> None:
    b = site.instances["b"]
    b.stop()
    killed = time.time()
    assert all(r.status_code == 200 for r in _send(site, 6))  # retried on the others
    site.wait_health({"a": "healthy", "b": "unhealthy", "c": "healthy"})
    report = site.report_after(killed, lambda r: r["health-summary"]["unhealthy"] == 1)
    assert report["gas"] == gas({"a": 4, "c": 2}) == 4
    b.start()
    wait_for("b", b.ready, START_S)
    site.wait_health(dict.fromkeys(CAPACITY, "healthy"))


def test_503_when_no_instance_can_serve(site: Site) -> None:
    for instance in site.instances.values():
        instance.admin(health=False)
    began = time.time()
    site.wait_health(dict.fromkeys(CAPACITY, "unhealthy"))
    reply = requests.get(f"{site.url}/work", timeout=10)
    assert reply.status_code == 503
    assert set(reply.json()) == {"error", "reason"}
    assert not any(str(i.port) in reply.text for i in site.instances.values())
    event = "ietf-cats-sci:all-instances-unhealthy"
    report = site.report_after(began, lambda r: event in r["trigger"])
    assert report["report-kind"] == "event"
    assert (report["gas"], report["health-summary"]["unhealthy"]) == (0, 3)
    for instance in site.instances.values():
        instance.admin(health=True)
    site.wait_health(dict.fromkeys(CAPACITY, "healthy"))


def test_pushed_metrics_are_checked(site: Site) -> None:
    push = f"http://127.0.0.1:{site.manage}/push"
    bad = requests.post(f"{push}/a", data=b"cats_si_active_sessions one\n", timeout=5)
    assert bad.status_code == 400
    assert "malformed" in bad.json()["error"]
    assert requests.post(f"{push}/nobody", data=b"", timeout=5).status_code == 404
    good = requests.post(f"{push}/a", data=b"cats_si_cpu_utilization_percent 12\n", timeout=5)
    assert good.status_code == 204
    assert site.state()["state"]["gas"] >= 0  # still running


def test_report_kinds_are_counted(site: Site) -> None:
    before = site.state()["state"]["reporting"]
    kinds = [r["report-kind"] for r in site.recorded()]
    # a report can be recorded at the C-PS before its counter moves (counted on the answer),
    # and more can be sent meanwhile: every recorded one is counted once its answer is back

    def counted() -> dict[str, Any] | None:
        after: dict[str, Any] = site.state()["state"]["reporting"]
        failed = int(after["failed-reports"])  # timed out: under load, some may have arrived
        kinds_counted = all(
            kinds.count(kind) <= int(after[f"{kind}-reports"]) + failed
            for kind in ("heartbeat", "threshold", "event")
        )
        return after if kinds_counted else None

    wait_for("every recorded report counted", counted)
    for kind in ("heartbeat", "threshold", "event"):
        sent = int(before[f"{kind}-reports"])
        assert 0 < sent <= kinds.count(kind), (kind, before, kinds)


def test_a_restarted_sci_resumes_with_a_higher_sequence_number(site: Site) -> None:
    last = max(int(r["sequence-number"]) for r in site.recorded())
    site.stop_sci()
    restarted = time.time()
    site.start_sci()
    first = site.report_after(restarted, lambda r: True)
    assert int(first["sequence-number"]) > last
    log = (site.folder / f"serve-{site.cps.port}.log").read_text(errors="replace")
    assert "sequence-number-regressed" not in log


def test_a_malformed_configuration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"ietf-cats-sci:sci": {"csci-id": "x", "cs-id": "ARS"}}))
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli", "sci", "--config", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert str(path) in result.stderr
    assert "client-interface" in result.stderr or "c-sma" in result.stderr
