"""controller.datastore.journal and snapshot: damage is found and named, never read as an end.

Bytes are flipped at seeded random offsets: every flip either stops the load with the file and
the offset of the damaged frame, or (never, as it turns out) leaves every record readable; a
journal is never silently cut short. Only a last record cut short by the end of the file (a
torn write) is dropped, and that is logged.
"""

from __future__ import annotations

import logging
import random
import struct
import zlib
from pathlib import Path
from typing import IO

import pytest

from controller.datastore import snapshot
from controller.datastore.damage import StateDamagedError
from controller.datastore.journal import HEADER_SIZE, Journal, Loaded, frame, scan

RECORDS = 200
FLIPS = 300


def _journal(folder: Path, count: int = RECORDS) -> tuple[Journal, list[int]]:
    """A journal of ``count`` records; the offset where each frame starts."""
    journal = Journal(folder, "running")
    starts = []
    for txid in range(1, count + 1):
        starts.append(journal.journal_bytes)
        journal.append({"txid": txid, "edits": [{"op": "merge", "path": f"/x[k='{txid}']"}]})
    journal.close()
    return journal, starts


def _load(folder: Path) -> Loaded | StateDamagedError:
    """The journal as loaded, or the damage that stopped the load."""
    try:
        return Journal(folder, "running").load()
    except StateDamagedError as exc:
        return exc


def _frame_of(starts: list[int], offset: int) -> int:
    """The index of the frame holding byte ``offset``."""
    return max(index for index, start in enumerate(starts) if start <= offset)


def test_every_flipped_byte_is_damage_at_its_frame_never_a_shorter_journal(
    tmp_path: Path,
) -> None:
    journal, starts = _journal(tmp_path)
    good = journal.journal_path.read_bytes()
    draw = random.Random(14)
    for _ in range(FLIPS):
        offset = draw.randrange(len(good))
        damaged = bytearray(good)
        damaged[offset] ^= draw.randrange(1, 256)
        journal.journal_path.write_bytes(bytes(damaged))
        outcome = _load(tmp_path)
        if isinstance(outcome, StateDamagedError):
            index = _frame_of(starts, offset)
            assert outcome.damage.path == journal.journal_path
            assert outcome.damage.offset == starts[index], offset
            assert outcome.damage.records_before == index
            assert outcome.damage.intact_after == RECORDS - index - 1
            assert str(journal.journal_path) in str(outcome)
            assert f"offset {starts[index]}" in str(outcome)
            assert journal.journal_path.read_bytes() == bytes(damaged)  # nothing cut away
        else:
            assert len(outcome.records) == RECORDS, f"silently fewer records after {offset}"


def test_a_record_cut_short_by_the_end_is_a_torn_tail_dropped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal, starts = _journal(tmp_path, 20)
    good = journal.journal_path.read_bytes()
    draw = random.Random(7)
    for _ in range(30):
        cut = draw.randrange(starts[-1] + 1, len(good))
        journal.journal_path.write_bytes(good[:cut])
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            loaded = Journal(tmp_path, "running").load()
        assert [record["txid"] for record in loaded.records] == list(range(1, 20))
        assert "torn last record" in caplog.text
        assert f"offset {starts[-1]}" in caplog.text
        assert journal.journal_path.stat().st_size == starts[-1]


def test_a_complete_last_record_with_a_bad_checksum_is_damage_not_a_tear(
    tmp_path: Path,
) -> None:
    journal, starts = _journal(tmp_path, 5)
    data = bytearray(journal.journal_path.read_bytes())
    data[-1] ^= 0x01
    journal.journal_path.write_bytes(bytes(data))
    with pytest.raises(StateDamagedError) as raised:
        Journal(tmp_path, "running").load()
    assert raised.value.damage.offset == starts[-1]
    assert "record checksum mismatch" in str(raised.value)


def test_a_damaged_length_is_damage_not_a_record_running_past_the_end(tmp_path: Path) -> None:
    journal, starts = _journal(tmp_path, 5)
    data = bytearray(journal.journal_path.read_bytes())
    data[starts[2] + 4 : starts[2] + 8] = struct.pack(">I", 1 << 30)
    journal.journal_path.write_bytes(bytes(data))
    with pytest.raises(StateDamagedError) as raised:
        Journal(tmp_path, "running").load()
    assert raised.value.damage.offset == starts[2]
    assert raised.value.damage.intact_after == 2


def test_every_flipped_byte_of_a_snapshot_is_found(tmp_path: Path) -> None:
    journal = Journal(tmp_path, "running")
    document = '{"core-test:top": {"item": [{"id": 1, "name": "one"}]}}'
    journal.write_snapshot(document, 41, "2026-12-02T00:00:00+00:00")
    good = journal.snapshot_path.read_bytes()
    assert Journal(tmp_path, "running").load().txid == 41
    for offset in range(len(good)):
        for change in (0x01, 0x20):
            damaged = bytearray(good)
            damaged[offset] ^= change
            journal.snapshot_path.write_bytes(bytes(damaged))
            with pytest.raises(StateDamagedError) as raised:
                Journal(tmp_path, "running").load()
            assert raised.value.damage.path == journal.snapshot_path


def test_a_changed_digit_of_the_transaction_id_is_found(tmp_path: Path) -> None:
    journal = Journal(tmp_path, "running")
    journal.write_snapshot("{}", 41, "2026-12-02T00:00:00+00:00")
    text = journal.snapshot_path.read_bytes()
    journal.snapshot_path.write_bytes(text.replace(b'"txid": 41', b'"txid": 42', 1))
    with pytest.raises(StateDamagedError, match="checksum mismatch"):
        Journal(tmp_path, "running").load()


def _legacy_frame(record: bytes) -> bytes:
    return struct.pack(">II", len(record), zlib.crc32(record)) + record


def test_files_of_an_older_version_are_read_and_marked_for_rewriting(tmp_path: Path) -> None:
    (tmp_path / "running.json").write_text('{"txid": 1, "time": "2026-11-30T00:00:00+00:00"}\n{}')
    (tmp_path / "running.journal").write_bytes(
        _legacy_frame(b'{"txid":1,"edits":[]}') + _legacy_frame(b'{"txid":2,"edits":[]}')
    )
    loaded = Journal(tmp_path, "running").load()
    assert loaded.legacy
    assert [record["txid"] for record in loaded.records] == [2]


def test_a_failed_append_leaves_nothing_and_the_next_one_follows_the_last_good(
    tmp_path: Path,
) -> None:
    journal, _ = _journal(tmp_path, 3)
    size = journal.journal_path.stat().st_size

    class Failing:
        def write(self, handle: IO[bytes], data: bytes) -> None:
            handle.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")

        def sync(self, handle: IO[bytes]) -> None:
            raise AssertionError("not reached")

    failing = Journal(tmp_path, "running", Failing())
    failing.load()
    with pytest.raises(OSError, match="No space"):
        failing.append({"txid": 4, "edits": []})
    assert journal.journal_path.stat().st_size == size
    failing.close()
    healthy = Journal(tmp_path, "running")
    healthy.load()
    healthy.append({"txid": 4, "edits": []})
    healthy.close()
    records = scan(journal.journal_path.read_bytes(), journal.journal_path).records
    assert [record["txid"] for _, record in records] == [1, 2, 3, 4]


def test_retract_takes_back_the_last_record(tmp_path: Path) -> None:
    journal, _ = _journal(tmp_path, 2)
    reopened = Journal(tmp_path, "running")
    reopened.load()
    reopened.append({"txid": 3, "edits": []})
    reopened.retract()
    reopened.append({"txid": 3, "edits": ["again"]})
    reopened.close()
    records = [r for _, r in scan(journal.journal_path.read_bytes(), journal.journal_path).records]
    assert [r["txid"] for r in records] == [1, 2, 3]
    assert records[-1]["edits"] == ["again"]


def test_frames_carry_a_checked_header() -> None:
    data = frame({"txid": 1})
    assert len(data) > HEADER_SIZE
    assert [r["txid"] for _, r in scan(data, Path("j")).records] == [1]
    assert snapshot.decode(Path("s"), snapshot.encode("{}", 3, "t")).txid == 3
