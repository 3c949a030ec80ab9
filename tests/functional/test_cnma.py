"""A real ``catsctl cnma`` reporting the section 7.1 NST to a real ``catsctl serve``
(service-metrics-op 6.2.2, 8).

The C-NMA runs as a subprocess with the example configuration of docs/examples (10.0.0.1 to
CF-2 in 8 ms and to CF-3 in 6 ms through P1), short intervals and its own user. The tests run
in file order against one C-PS: the full report at start, a delta after a SIGHUP reload that
changes one path, the heartbeat's full report and nothing in between (service-metrics-op 8),
a refused reload, a restart that resumes above the last sequence number, and probes against a
UDP echo responder reported in microseconds.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agents.cnma.echo import EchoResponder
from controller.auth import hash_password
from tests.conftest import ROOT
from tests.functional.restconf_server import Server, admin_users
from tools.bench.common import stop

pytestmark = pytest.mark.functional

SM = "ietf-cats-service-metrics"
AS = "ietf-cats-agent-selection"
CANDIDATES = ("188.3.67.3:67", "188.3.67.3:68", "188.3.67.4:69", "188.3.67.4:70")
CNMA = ("cnma", "cnma-secret")
EXAMPLE = ROOT / "docs" / "examples" / "cnma-7.1.toml"
CF2, CF3 = "188.3.67.3", "188.3.67.4"
INTERVAL, HEARTBEAT = 0.2, 3.0
WAIT_S = 120.0  # a bound under load, not a speed


def seed() -> dict[str, Any]:
    """The admin, the C-NMA's own user, and the example's instances as agent-selection
    candidates of the C-PS (so that it accepts their forwarding view, MSG-7)."""
    document = admin_users()
    users: Any = document["ietf-system:system"]
    users["authentication"]["user"].append({"name": CNMA[0], "password": hash_password(CNMA[1])})
    candidates = [{"csci-id": csci, "cs-id": "ARS"} for csci in CANDIDATES]
    document[f"{AS}:agent-selection"] = {"candidates": {"candidate": candidates}}
    return document


def toml_value(value: Any) -> str:
    """A TOML literal of a scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def to_toml(document: dict[str, Any]) -> str:
    """The example's shape back as TOML: scalars, tables, and arrays of tables."""
    lines: list[str] = []

    def emit(prefix: str, table: dict[str, Any]) -> None:
        nested = []
        for key, value in table.items():
            if isinstance(value, dict | list):
                nested.append((key, value))
            else:
                lines.append(f"{key} = {toml_value(value)}")
        for key, value in nested:
            name = f"{prefix}{key}"
            for item in value if isinstance(value, list) else [value]:
                lines.append(f"[[{name}]]" if isinstance(value, list) else f"[{name}]")
                emit(f"{name}.", item)

    emit("", document)
    return "\n".join(lines) + "\n"


def configuration(
    server: Server, folder: Path, change: Callable[[dict[str, Any]], None] | None = None
) -> Path:
    """The example with fast intervals, this C-PS and the C-NMA's password file."""
    document = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    (folder / "cnma.password").write_text(CNMA[1] + "\n")
    document["cps"] = {
        "url": f"{server.root}/restconf",
        "username": CNMA[0],
        "password-file": "cnma.password",
    }
    document["reporting"] |= {
        "interval-ms": int(INTERVAL * 1000),
        "heartbeat-ms": int(HEARTBEAT * 1000),
        "forwarding-view": True,
    }
    if change is not None:
        change(document)
    path = folder / "cnma.toml"
    path.write_text(to_toml(document))
    return path


@dataclass
class Cnma:
    """A running ``catsctl cnma`` and its log."""

    process: subprocess.Popen[bytes]
    log: Path

    def stderr(self) -> str:
        """What it logged."""
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def running_cnma(config: Path, state_dir: Path) -> Iterator[Cnma]:
    """Start ``catsctl cnma``; SIGTERM it when the block ends."""
    log = config.parent / f"cnma-{time.monotonic_ns()}.log"
    command = [
        sys.executable,
        "-m",
        "controller.cli",
        "cnma",
        "--config",
        str(config),
        "--state-dir",
        str(state_dir),
    ]
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink, env=os.environ)
    try:
        yield Cnma(process, log)
    finally:
        if process.poll() is None:
            stop(process, timeout=10)


def ms(value: str) -> Decimal:
    """A cats-t:milliseconds value as read (libyang's canonical decimal64: ``8.0``)."""
    return Decimal(value)


def delay(server: Server, egress: str) -> Decimal:
    """The network delay of (10.0.0.1, egress), -1 while there is no entry."""
    entry = nst(server).get(egress)
    return Decimal(-1) if entry is None else ms(entry["network-delay"])


def nst(server: Server) -> dict[str, dict[str, Any]]:
    """The NST entries by egress."""
    found = server.get_json(f"data/{SM}:network-service-table")
    entries = found.get(f"{SM}:network-service-table", {}).get("entry", [])
    return {entry["egress"]: entry for entry in entries}


def sender(server: Server) -> dict[str, Any]:
    """The C-NMA's report-senders entry (empty before its first report)."""
    found = server.get_json(f"data/{SM}:report-senders")
    senders = found.get(f"{SM}:report-senders", {}).get("sender", [])
    return next((s for s in senders if s["source"] == CNMA[0]), {})


def counts(server: Server) -> tuple[int, int]:
    """(reports-accepted, entries-accepted) of the C-NMA."""
    counters = sender(server).get("counters", {})
    return int(counters.get("reports-accepted", 0)), int(counters.get("entries-accepted", 0))


def wait_for(what: Callable[[], bool], cnma: Cnma, timeout: float = WAIT_S) -> None:
    """Poll until ``what()`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return
        if cnma.process.poll() is not None:
            pytest.fail(f"catsctl cnma exited:\n{cnma.stderr()}")
        time.sleep(0.05)
    pytest.fail(f"timed out; catsctl cnma logged:\n{cnma.stderr()}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C-NMA's folder: configuration, password file, state directory, logs."""
    return tmp_path_factory.mktemp("cnma")


def slower_cf2(document: dict[str, Any]) -> None:
    """CF-2's access link from 6 to 7 ms: the path becomes 9 ms."""
    link = next(x for x in document["topology"]["links"] if x["to"] == CF2 and x["from"] == "P1")
    link["delay"] = 7


def test_reports_section_7_1_then_delta_then_heartbeat(server: Server, folder: Path) -> None:
    config = configuration(server, folder)
    with running_cnma(config, folder / "state") as cnma:
        wait_for(lambda: counts(server)[0] >= 1, cnma)
        assert counts(server) == (1, 2)  # one full report of both paths
        table = nst(server)
        cf2, cf3 = table[CF2], table[CF3]
        assert (cf2["ingress"], ms(cf2["network-delay"]), ms(cf3["network-delay"])) == (
            "10.0.0.1",
            Decimal("8.000"),
            Decimal("6.000"),
        )
        assert (ms(cf2["jitter"]), ms(cf3["jitter"])) == (Decimal("0.4"), Decimal("0.3"))
        assert (cf2["bandwidth"], cf2["loss-rate"], cf3["bandwidth"], cf3["loss-rate"]) == (
            1000,
            110,
            2500,
            60,
        )
        attributes = cf2["path-attributes"]
        low, high = ms(attributes.pop("min-delay")), ms(attributes.pop("max-delay"))
        assert (low, high) == (Decimal("7.5"), Decimal(9))
        assert attributes == {
            "admin-group": "00:00:00:05",
            "color": 100,
            "te-metric": 30,
            "igp-metric": 20,
            "hop-count": 2,
        }
        assert (cf2["source"], cf2["confidence"], cf2["delay-reported-in"]) == (
            "cnma",
            "derived",
            "milliseconds",
        )
        first = cf3["sequence"]

        configuration(server, folder, change=slower_cf2)
        cnma.process.send_signal(signal.SIGHUP)
        wait_for(lambda: delay(server, CF2) == 9, cnma)
        assert counts(server) == (2, 3)  # a delta of the one changed path
        table = nst(server)
        assert table[CF3]["sequence"] == first  # CF-3 was not in the delta
        assert int(table[CF2]["sequence"]) > int(first)

        wait_for(lambda: counts(server)[0] == 3, cnma)
        assert counts(server) == (3, 5)  # the heartbeat: a full report of both paths
        assert int(nst(server)[CF3]["sequence"]) > int(first)
        # Many intervals without a change: nothing is sent until the next heartbeat, which
        # is again a full report of both paths.
        wait_for(lambda: counts(server)[0] == 4, cnma)
        assert counts(server) == (4, 7)
        log = cnma.stderr()
        assert re.search(rf"forwarding view \d+: {len(CANDIDATES)} candidates", log)  # MSG-7
        assert "advertise-forwarding-view refused" not in log
        assert "does not serve advertise-forwarding-view" not in log


def test_bad_reload_is_refused_and_the_agent_keeps_reporting(server: Server, folder: Path) -> None:
    config = configuration(server, folder)
    with running_cnma(config, folder / "state") as cnma:
        wait_for(lambda: delay(server, CF2) == 8, cnma)
        config.write_text(config.read_text().replace("delay = 2\n", "delay = -2\n", 1))
        cnma.process.send_signal(signal.SIGHUP)
        wait_for(lambda: "reload refused" in cnma.stderr(), cnma)
        refusal = "/cats-cnma-config:cnma/topology/links[from='10.0.0.1'][to='P1']/delay"
        assert refusal in cnma.stderr()
        assert "Unsatisfied range" in cnma.stderr()
        before = counts(server)[0]
        wait_for(lambda: counts(server)[0] > before, cnma, timeout=HEARTBEAT + 2)
        assert ms(nst(server)[CF2]["network-delay"]) == 8


def test_restart_resumes_above_the_last_sequence(server: Server, folder: Path) -> None:
    config = configuration(server, folder)
    for _ in range(2):  # run, stop, run again on the same state directory
        before = sender(server)
        reports = counts(server)[0]
        with running_cnma(config, folder / "state") as cnma:
            wait_for(lambda n=reports: counts(server)[0] > n, cnma)  # type: ignore[misc]
        record = sender(server)
        assert int(record["last-sequence"]) > int(before.get("last-sequence", 0))
        assert record["counters"]["refused-sequence"] == "0"


def test_an_old_state_directory_is_refused_once_then_resumes(server: Server, folder: Path) -> None:
    config = configuration(server, folder)
    if not sender(server):  # run alone: give the C-PS a last sequence number first
        with running_cnma(config, folder / "state") as cnma:
            wait_for(lambda: counts(server)[0] > 0, cnma)
    old = folder / "old-state"
    old.mkdir()
    (old / "sequence").write_text("41\n")  # a backup from long ago
    reports = counts(server)[0]
    with running_cnma(config, old) as cnma:
        wait_for(lambda: counts(server)[0] > reports, cnma)
        assert "report-network-metrics 42 refused" in cnma.stderr()
    assert sender(server)["counters"]["refused-sequence"] == "1"
    last = int(sender(server)["last-sequence"])
    assert int((old / "sequence").read_text()) >= last > 10**12  # continued from the clock


def delay_us(document: dict[str, Any]) -> None:
    """Report delay-us and suppress probe noise below 2 ms."""
    document["reporting"]["delay-unit"] = "us"
    document["reporting"]["thresholds"] |= {"delay": 2, "jitter": 2, "delay-relative": 0}


def test_probe_measures_and_a_change_is_a_delta(server: Server, folder: Path) -> None:
    with EchoResponder(delay=0.010) as echo:  # ~10 ms round trip: ~5 ms one way
        probe = {
            "ingress": "10.0.0.1",
            "egress": CF3,
            "target": f"127.0.0.1:{echo.address[1]}",
            "count": 3,
            "timeout-ms": 500,
            "use": "replace",
        }

        def with_probe(document: dict[str, Any]) -> None:
            delay_us(document)
            document["probes"] = [probe]

        config = configuration(server, folder, change=with_probe)
        with running_cnma(config, folder / "state") as cnma:

            def measured() -> bool:
                return nst(server).get(CF3, {}).get("confidence") == "asserted"

            wait_for(measured, cnma)
            entry = nst(server)[CF3]
            assert entry["delay-reported-in"] == "microseconds"
            first = ms(entry["network-delay"])
            assert first >= Decimal("4.5")  # half the echo's 10 ms round trip, at least
            cf2_sequence = nst(server)[CF2]["sequence"]
            reports = counts(server)
            echo.delay = 0.030  # the path slows down to ~15 ms one way (more under load)
            wait_for(lambda: delay(server, CF3) != first and delay(server, CF3) > 14, cnma)
            after = counts(server)
            assert (after[0] - reports[0], after[1] - reports[1]) == (1, 1)  # one delta path
            assert nst(server)[CF2]["sequence"] == cf2_sequence
            assert ms(nst(server)[CF2]["network-delay"]) == 8


def test_bad_probe_replies_are_refused_and_the_model_kept(server: Server, folder: Path) -> None:
    with EchoResponder() as echo:
        echo.mangle = True
        probe = {
            "ingress": "10.0.0.1",
            "egress": CF3,
            "target": f"127.0.0.1:{echo.address[1]}",
            "count": 2,
            "timeout-ms": 100,
        }

        def with_probe(document: dict[str, Any]) -> None:
            document["probes"] = [probe]

        config = configuration(server, folder, change=with_probe)
        with running_cnma(config, folder / "state") as cnma:
            wait_for(lambda: "no valid reply, modelled values kept" in cnma.stderr(), cnma)
            wait_for(lambda: nst(server).get(CF3, {}).get("confidence") == "derived", cnma)
            assert "probe reply refused" in cnma.stderr()
            assert ms(nst(server)[CF3]["network-delay"]) == 6
            assert cnma.process.poll() is None


def test_reports_over_netconf(server: Server, folder: Path) -> None:
    def over_netconf(document: dict[str, Any]) -> None:
        document["cps"]["netconf"] = f"127.0.0.1:{server.netconf_port}"
        slower_cf2(document)

    reports = counts(server)[0]
    config = configuration(server, folder, change=over_netconf)
    with running_cnma(config, folder / "state") as cnma:
        wait_for(lambda: counts(server)[0] > reports, cnma)
        wait_for(lambda: delay(server, CF2) == 9, cnma)
        assert ms(nst(server)[CF3]["network-delay"]) == 6
        accepted = rf"forwarding view \d+: {len(CANDIDATES)} candidates"
        wait_for(lambda: re.search(accepted, cnma.stderr()) is not None, cnma)


def test_a_refused_forwarding_view_is_logged_and_the_reports_go_on(
    server: Server, folder: Path
) -> None:
    """An instance the C-PS has not configured as a candidate: MSG-7 is refused naming it,
    the C-NMA logs the refusal, keeps running and keeps reporting the NST."""

    def unknown_candidate(document: dict[str, Any]) -> None:
        document["topology"]["candidates"].append({"csci-id": "188.3.67.4:71", "egress": CF3})

    reports = counts(server)[0]
    config = configuration(server, folder, change=unknown_candidate)
    with running_cnma(config, folder / "state") as cnma:
        wait_for(lambda: "advertise-forwarding-view refused" in cnma.stderr(), cnma)
        assert "188.3.67.4:71" in cnma.stderr()
        wait_for(lambda: counts(server)[0] > reports + 1, cnma, timeout=HEARTBEAT + 2)
        assert cnma.process.poll() is None


def test_wrong_password_is_logged_and_retried(server: Server, folder: Path) -> None:
    def wrong(document: dict[str, Any]) -> None:
        document["cps"]["password"] = "wrong"
        del document["cps"]["password-file"]

    config = configuration(server, folder, change=wrong)
    with running_cnma(config, folder / "state") as cnma:
        wait_for(lambda: "refused: access-denied" in cnma.stderr(), cnma)
        assert cnma.process.poll() is None


def test_malformed_configuration_is_refused_at_start(folder: Path) -> None:
    bad = folder / "bad.toml"
    bad.write_text('[topology]\nnodes = [{ id = "10.0.0.1", role = "core" }]\n')
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "cnma", "--config", str(bad), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "/cats-cnma-config:cnma/topology/nodes[id='10.0.0.1']/role" in done.stderr
    assert 'Invalid enumeration value "core"' in done.stderr
