"""Sequence numbers that survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.common.sequence import FILE_NAME, SequenceStore


def test_new_state_starts_from_the_clock_and_persists(tmp_path: Path) -> None:
    store = SequenceStore(tmp_path / "state", clock=lambda: 1_700_000_000.5)
    assert store.next() == 1_700_000_000_500
    assert store.next() == 1_700_000_000_501
    again = SequenceStore(tmp_path / "state", clock=lambda: 0.0)
    assert again.last == 1_700_000_000_501
    assert again.next() == 1_700_000_000_502
    assert (tmp_path / "state" / FILE_NAME).read_text() == "1700000000502\n"


def test_advance_moves_up_to_the_clock_never_down(tmp_path: Path) -> None:
    now = [1_700_000_000.0]
    (tmp_path / FILE_NAME).write_text("5\n")
    store = SequenceStore(tmp_path, clock=lambda: now[0])
    assert store.next() == 6
    store.advance()
    assert store.next() == 1_700_000_000_000
    now[0] = 1.0
    store.advance()
    assert store.next() == 1_700_000_000_001


def test_corrupt_state_is_refused(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("seven")
    with pytest.raises(ValueError, match="does not hold a sequence number"):
        SequenceStore(tmp_path)
