"""agents.forwarder.ledger and agent.clean_state_dir: what a restart keeps (files, no socket)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.forwarder import ledger
from agents.forwarder.agent import MARKER, StateDirError, clean_state_dir
from agents.forwarder.table import Accepted
from agents.forwarder.values import EntryKey, Kind


def test_acceptance_times_survive_a_restart(tmp_path: Path) -> None:
    times = {
        EntryKey(Kind.RULE, "s1/c|1"): Accepted('{"a":1}', 1000.5),
        EntryKey(Kind.SERVICE, "ARS"): Accepted("{}", 7.0),
    }
    ledger.save(tmp_path, times)
    assert ledger.load(tmp_path) == times
    assert ledger.load(tmp_path / "elsewhere") == {}
    (tmp_path / ledger.FILE_NAME).write_text("not json")
    assert ledger.load(tmp_path) == {}


def test_clean_empties_only_a_forwarder_state_dir(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / MARKER).touch()
    (state / "running.journal").write_text("x")
    clean_state_dir(state)
    assert not state.exists()
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "precious").write_text("x")
    with pytest.raises(StateDirError):
        clean_state_dir(foreign)
    assert (foreign / "precious").exists()
    clean_state_dir(tmp_path / "missing")
