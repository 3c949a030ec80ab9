"""Operating ``catsctl serve`` as a process: the management listener (Prometheus metrics that
parse and move with the operations, /healthz, /readyz through start-up and shutdown), graceful
SIGTERM, the version where a client reads it, and the progress of a large start-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from controller import __version__
from tests.conftest import ROOT
from tests.functional.admin_client import HEADERS, users_and_top
from tests.functional.metrics import samples, value
from tests.functional.netconf_client import admin_session, ok, operation
from tests.functional.restconf_server import (
    TEST_YANG,
    Server,
    free_port,
    running_server,
    write_init,
)

pytestmark = pytest.mark.functional
WAIT_S = 60.0


def seed() -> dict[str, object]:
    """The admin, olga and lena, and rc-test's top."""
    return users_and_top()


def test_metrics_parse_and_the_counters_move_with_the_operations(server: Server) -> None:
    before = samples(server.metrics_port)
    assert value(before, "cats_build_info", version=__version__) == 1.0
    body = json.dumps({"rc-test:name": "metered"})
    assert server.request("PUT", "data/rc-test:top/name", data=body, headers=HEADERS).ok
    assert server.request("GET", "data/rc-test:top").ok
    assert (
        requests.get(server.url("data/rc-test:top"), auth=("nobody", "x"), timeout=10).status_code
        == 401
    )
    with admin_session(server) as session:
        ok(session.rpc(operation("get")))
        during = samples(server.metrics_port)
    after = samples(server.metrics_port)
    put = ("cats_restconf_requests_total", {"method": "PUT", "resource": "data", "status": "2xx"})
    assert value(after, put[0], **put[1]) == value(before, put[0], **put[1]) + 1
    commits = ("cats_datastore_commits_total", {"result": "committed"})
    assert value(after, commits[0], **commits[1]) >= value(before, commits[0], **commits[1]) + 1
    assert value(after, "cats_datastore_commit_duration_seconds_count") > value(
        before, "cats_datastore_commit_duration_seconds_count"
    )
    assert value(after, "cats_datastore_journal_fsync_duration_seconds_count") > value(
        before, "cats_datastore_journal_fsync_duration_seconds_count"
    )
    rpcs = ("cats_netconf_rpcs_total", {"operation": "get", "result": "ok"})
    assert value(after, rpcs[0], **rpcs[1]) == value(before, rpcs[0], **rpcs[1]) + 1
    assert value(during, "cats_netconf_sessions") >= 1
    failed = ("cats_northbound_logins_failed_total", {"transport": "restconf"})
    assert value(after, failed[0], **failed[1]) == value(before, failed[0], **failed[1]) + 1
    audited = ("cats_audit_records_total", {"event": "commit"})
    assert value(after, audited[0], **audited[1]) > value(before, audited[0], **audited[1])
    assert requests.get(f"http://127.0.0.1:{server.metrics_port}/healthz", timeout=10).ok
    ready = requests.get(f"http://127.0.0.1:{server.metrics_port}/readyz", timeout=10)
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"datastore": True, "northbound": True, "southbound": True}


def test_a_refused_report_is_counted_by_its_reason(server: Server) -> None:
    """cats_cps_reports_total counts refusals under the app-tag the reporter was answered."""
    refused = ("cats_cps_reports_total", {"kind": "service", "result": "clock-skew-exceeded"})
    before = samples(server.metrics_port)
    report = {
        "ietf-cats-service-metrics:input": {
            "sequence-number": "1",
            "timestamp": "2001-01-01T00:00:00Z",  # far outside max-clock-skew
            "entry": [
                {"cs-id": "ARS", "csci-id": "188.3.67.3:67", "gas": 400, "computing-time": "5"}
            ],
        }
    }
    reply = server.request(
        "POST",
        "operations/ietf-cats-service-metrics:report-service-metrics",
        data=json.dumps(report),
        headers=HEADERS,
    )
    assert reply.status_code == 400, reply.text
    assert "clock-skew-exceeded" in reply.text
    after = samples(server.metrics_port)
    assert value(after, refused[0], **refused[1]) == value(before, refused[0], **refused[1]) + 1
    accepted = ("cats_cps_reports_total", {"kind": "service", "result": "accepted"})
    assert value(after, accepted[0], **accepted[1]) == value(before, accepted[0], **accepted[1])


def test_the_version_is_in_yang_library_and_catsctl(server: Server) -> None:
    library = server.get_json("data/ietf-yang-library:yang-library")[
        "ietf-yang-library:yang-library"
    ]
    assert library["module-set"][0]["name"] == f"cats-controller-{__version__}"
    shown = subprocess.run(
        [sys.executable, "-m", "controller.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert shown.stdout.strip() == f"catsctl {__version__}"


def _readyz(port: int) -> int | None:
    try:
        return requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code
    except requests.ConnectionError:
        return None


def _until(what: str, condition: object) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {WAIT_S} s")


def test_readyz_fails_until_the_datastore_is_loaded_and_again_on_sigterm(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    port, metrics = free_port(), free_port()
    log = tmp_path / "serve.log"
    command = [
        *(sys.executable, "-m", "controller.cli", "serve"),
        *("--state-dir", str(tmp_path / "state"), "--yang-dir", str(TEST_YANG)),
        *("--restconf-port", str(port), "--netconf-port", "0"),
        *("--init-data", str(write_init(tmp_path, seed()))),
        *("--metrics-address", f"127.0.0.1:{metrics}"),
        *("--plugin", "tests.functional.plugins.gated_start"),
    ]
    environment = {**os.environ, "CATS_TEST_START_GATE": str(gate)}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink, env=environment)
    try:
        _until("the management listener answers", lambda: _readyz(metrics) is not None)
        assert _readyz(metrics) == 503  # the plugin holds the start-up: nothing is loaded
        health = requests.get(f"http://127.0.0.1:{metrics}/healthz", timeout=5)
        assert health.status_code == 200
        gate.write_text("go")
        _until("ready", lambda: _readyz(metrics) == 200)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert "stopping: draining requests, persisting state, closing sessions" in text
    assert text.rstrip().endswith("stopped")


def test_a_large_start_up_reports_its_progress(tmp_path: Path) -> None:
    document = users_and_top()
    document["bench-list:bench"] = {
        "target": [{"name": "t1"}],
        "entry": [{"id": i, "name": f"entry-{i}", "target": "t1"} for i in range(20_000)],
    }
    init = write_init(tmp_path, document)
    with running_server(tmp_path / "state", init):
        pass
    with running_server(tmp_path / "state") as server:
        log = server.stderr()
        assert "running: loading the snapshot (" in log
        assert "running: loaded at transaction" in log
        # closed cleanly: one snapshot of this schema, taken as it was validated, no journal
        assert "running: replaying the journal" not in log
        assert "running: validating" not in log
