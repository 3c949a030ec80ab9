"""Committed state is safe, against real ``catsctl serve`` processes: one server per state
directory (a second one exits at once naming the holder's pid), a clean one-line error when a
port is taken, and a damaged journal stops the start with its file and offset until an
operator checks and repairs it (``catsctl state check``, ``catsctl state repair``)."""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    TEST_YANG,
    Server,
    admin_users,
    free_port,
    running_server,
    seeded_server,
)

pytestmark = pytest.mark.functional
EXIT_TIMEOUT_S = 60.0
EDITS = 12


def seed() -> dict[str, object]:
    """The admin and a target the entries point at."""
    document = admin_users()
    document["bench-list:bench"] = {"target": [{"name": "t1"}]}
    return document


def catsctl(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``catsctl ARGS`` to its end (bounded), capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=EXIT_TIMEOUT_S,
        check=False,
    )


def serve(state_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A ``catsctl serve`` that is expected to exit by itself."""
    return catsctl(
        "serve",
        *("--state-dir", str(state_dir), "--yang-dir", str(TEST_YANG)),
        *extra,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The process failed with one ``catsctl serve:`` line and no traceback; that line."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("catsctl serve:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def put_entry(server: Server, key: int) -> None:
    """Create entry ``key``; asserts it was acknowledged."""
    body = {"bench-list:entry": [{"id": key, "name": f"n{key}", "target": "t1"}]}
    reply = server.request(
        "PUT", f"data/bench-list:bench/entry={key}", json=body, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 201, reply.text


def entry_ids(server: Server) -> set[int]:
    """The ids of the bench entries in running."""
    found = server.get_json("data/bench-list:bench", content="config")["bench-list:bench"]
    return {entry["id"] for entry in found.get("entry", [])}


def test_a_second_server_on_a_state_directory_exits_at_once_naming_the_holder(
    tmp_path: Path,
) -> None:
    with seeded_server(tmp_path, seed()) as first:
        other_ports = ("--restconf-port", str(free_port()), "--netconf-port", str(free_port()))
        line = one_error_line(serve(first.state_dir, *other_ports))
        assert f"locked by pid {first.process.pid}" in line
        assert "use another --state-dir" in line
        put_entry(first, 1)  # the first one serves on, its state untouched
        assert entry_ids(first) == {1}
        check = catsctl("state", "check", "--state-dir", str(first.state_dir))  # beside it
        assert check.returncode == 0, check.stdout
        assert "intact records" in check.stdout
        repair = catsctl("state", "repair", "--state-dir", str(first.state_dir), "--to-last-good")
        assert repair.returncode == 1
        assert f"locked by pid {first.process.pid}" in repair.stderr


def test_a_port_taken_is_one_clean_line(tmp_path: Path) -> None:
    with seeded_server(tmp_path, seed()) as first:
        restconf = serve(
            tmp_path / "other-1",
            *("--restconf-port", str(first.port), "--netconf-port", str(free_port())),
        )
        line = one_error_line(restconf)
        assert f"RESTCONF cannot listen on 127.0.0.1:{first.port}" in line
        assert "--restconf-port" in line
        netconf = serve(
            tmp_path / "other-2",
            *("--restconf-port", str(free_port()), "--netconf-port", str(first.netconf_port)),
        )
        line = one_error_line(netconf)
        assert f"NETCONF cannot listen on 127.0.0.1:{first.netconf_port}" in line
        # the lock of the failed start was released: its state directory serves now
        with running_server(tmp_path / "other-2") as again:
            assert again.request("GET", "/.well-known/host-meta").status_code == 200


def test_a_damaged_journal_stops_the_start_until_checked_and_repaired(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with seeded_server(tmp_path, seed()) as server:
        for key in range(1, EDITS + 1):
            put_entry(server, key)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    journal = state / "running.journal"
    good = journal.read_bytes()
    draw = random.Random(214)
    offset = draw.randrange(len(good) // 3, len(good) - 1)
    damaged = bytearray(good)
    damaged[offset] ^= 0x5A
    journal.write_bytes(bytes(damaged))

    line = one_error_line(serve(state, "--restconf-port", str(free_port())))
    assert f"{journal} is damaged at offset" in line
    assert "catsctl state check" in line
    assert journal.read_bytes() == bytes(damaged)  # nothing was cut

    check = catsctl("state", "check", "--state-dir", str(state))
    assert check.returncode == 1
    assert f"DAMAGED {journal} is damaged at offset" in check.stdout
    repair = catsctl("state", "repair", "--state-dir", str(state), "--to-last-good")
    assert repair.returncode == 0, repair.stderr
    assert "losing" in repair.stdout
    assert catsctl("state", "check", "--state-dir", str(state)).returncode == 0

    with running_server(state) as restarted:
        kept = entry_ids(restarted)
        # the edits before the damage, in order, and none after it
        assert kept == set(range(1, len(kept) + 1))
        assert len(kept) < EDITS
        put_entry(restarted, 100)
    with running_server(state) as again:
        assert entry_ids(again) == {*kept, 100}


BL = "urn:example:bench-list"


def nc_entry(key: int) -> str:
    """A ``<config>`` creating bench entry ``key``."""
    return (
        f'<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><bench xmlns="{BL}">'
        f"<entry><id>{key}</id><name>c{key}</name></entry></bench></config>"
    )


def wait_until(what: str, condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``condition`` (bounded)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_confirmed_commit_outlives_restarts_with_its_timeout(tmp_path: Path) -> None:
    state = tmp_path / "state"
    kept = state / "confirmed-commit.kept"
    with seeded_server(tmp_path, seed()) as server:
        with connect_nc(server.netconf_port, *ADMIN) as m:
            m.edit_config(target="candidate", config=nc_entry(80))
            m.commit(confirmed=True, timeout="600", persist="keep-80")
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)
    assert kept.exists()
    with running_server(state) as restarted:
        assert 80 in entry_ids(restarted)  # still pending: neither confirmed nor rolled back
        with connect_nc(restarted.netconf_port, *ADMIN) as m:  # a new session confirms it
            m.commit(persist_id="keep-80")
        assert not kept.exists()
        # without persist, and the session still open when the server is killed
        m = connect_nc(restarted.netconf_port, *ADMIN)
        m.edit_config(target="candidate", config=nc_entry(81))
        m.commit(confirmed=True, timeout="600")
        assert 81 in entry_ids(restarted)
        restarted.process.send_signal(signal.SIGKILL)
        restarted.process.wait()
        with contextlib.suppress(Exception):
            m.close_session()
    with running_server(state) as again:
        assert entry_ids(again) == {80}  # 80 confirmed; 81 rolled back at the start
        assert not kept.exists()
        with connect_nc(again.netconf_port, *ADMIN) as m:
            m.edit_config(target="candidate", config=nc_entry(82))
            m.commit(confirmed=True, timeout="2", persist="short")
        again.process.send_signal(signal.SIGKILL)
        again.process.wait()
    with running_server(state) as third:  # its timeout ran out while it was down, or soon
        wait_until("the rollback of 82", lambda: 82 not in entry_ids(third))
        assert entry_ids(third) == {80}
        wait_until("the backup forgotten", lambda: not kept.exists())
