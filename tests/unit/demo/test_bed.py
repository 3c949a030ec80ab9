"""The start-up's new attempt when a child found its port taken, without processes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.demo import bed
from controller.demo.bed import BedSettings, start_bed

TAKEN = "SCI-2 exited (1):\ncatsctl sci: [Errno 98] Address already in use"


def fake_starts(monkeypatch: pytest.MonkeyPatch, failures: list[str]) -> list[Path]:
    """``_started`` fails with each of ``failures`` in turn, then yields its folder."""
    folders: list[Path] = []

    @contextlib.contextmanager
    def started(settings: BedSettings) -> Iterator[Any]:
        folders.append(settings.folder)
        if len(folders) <= len(failures):
            raise RuntimeError(failures[len(folders) - 1])
        yield settings.folder

    monkeypatch.setattr(bed, "_started", started)
    return folders


def test_a_taken_port_starts_everything_again_in_a_fresh_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folders = fake_starts(monkeypatch, [TAKEN])
    said: list[str] = []
    with start_bed(BedSettings(tmp_path, progress=said.append)) as running:
        assert str(running) == str(tmp_path / "start-2")  # the fake yields its folder
    assert folders == [tmp_path, tmp_path / "start-2"]
    assert any("a port was taken meanwhile" in line for line in said)


def test_other_failures_and_the_last_attempt_are_not_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_starts(monkeypatch, ["cps exited (1):\nbad configuration"])
    with pytest.raises(RuntimeError, match="bad configuration"), start_bed(BedSettings(tmp_path)):
        pass
    folders = fake_starts(monkeypatch, [TAKEN] * bed.START_ATTEMPTS)
    with (
        pytest.raises(RuntimeError, match="Address already in use"),
        start_bed(BedSettings(tmp_path)),
    ):
        pass
    assert len(folders) == bed.START_ATTEMPTS
