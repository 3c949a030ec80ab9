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


def test_the_ledger_journals_each_change_and_a_restart_reads_it(tmp_path: Path) -> None:
    """A commit appends only the times it moved; snapshot plus journal give them back."""
    c1, c2 = EntryKey(Kind.RULE, "c1"), EntryKey(Kind.RULE, "c2")
    book = ledger.Ledger(tmp_path)
    assert book.replace({c1: Accepted("f1", 10.0), c2: Accepted("f2", 11.0)}) == 2
    assert book.update({c1: Accepted("f1", 10.0)}) == 0  # unchanged: nothing written
    assert book.update({c1: Accepted("f1b", 12.5), c2: None}) == 2
    lines = (tmp_path / ledger.JOURNAL_NAME).read_text().splitlines()
    assert len(lines) == 4  # two entries, then one revised and one forgotten
    assert ledger.load(tmp_path) == {c1: Accepted("f1b", 12.5)}
    with (tmp_path / ledger.JOURNAL_NAME).open("a") as sink:
        sink.write('{"k": "rule|c3", "f": "f3", ')  # a crash while appending: torn line
    assert ledger.Ledger(tmp_path).saved == {c1: Accepted("f1b", 12.5)}


def test_the_ledger_journal_is_folded_into_a_snapshot(tmp_path: Path) -> None:
    book = ledger.Ledger(tmp_path)
    times = {EntryKey(Kind.RULE, f"c{n}"): Accepted("f", float(n)) for n in range(3000)}
    book.update(times)
    assert not (tmp_path / ledger.FILE_NAME).exists()
    book.update({k: Accepted("g", a.at) for k, a in times.items()})  # 6000 lines > 4096
    assert not (tmp_path / ledger.JOURNAL_NAME).exists()
    assert ledger.load(tmp_path) == {k: Accepted("g", a.at) for k, a in times.items()}


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
