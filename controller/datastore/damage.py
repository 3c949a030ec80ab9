"""Damage found in a state file at load, and the error that stops the server from starting."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.datastore.errors import DatastoreError
from controller.errors import ErrorItem, ErrorType


@dataclass(frozen=True, slots=True)
class Damage:
    """Where a state file is damaged and how; ``intact_after`` counts the intact journal
    records found after the damage (acknowledged edits that a truncation would lose)."""

    path: Path
    offset: int
    reason: str
    records_before: int = 0
    intact_after: int = 0

    def describe(self) -> str:
        """One line naming the file, the offset and what follows."""
        text = f"{self.path} is damaged at offset {self.offset}: {self.reason}"
        if self.intact_after:
            text += (
                f"; {self.records_before} intact records precede it and "
                f"{self.intact_after} follow it"
            )
        return text


class StateDamagedError(DatastoreError):
    """A state file is damaged: the server does not start on it (an operator decides)."""

    def __init__(self, damage: Damage) -> None:
        folder = damage.path.parent
        message = (
            f"{damage.describe()}; not starting: see `catsctl state check --state-dir {folder}`"
            f", and `catsctl state repair --state-dir {folder} --to-last-good` to keep what "
            "precedes the damage"
        )
        super().__init__(ErrorItem(ErrorType.APPLICATION, "operation-failed", message))
        self.damage = damage
