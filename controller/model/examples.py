"""The instance examples of ``yang/examples/``: valid documents and the invalid ones with the
reason each must be refused for (docs/yang-conventions.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from controller.model.errors import ModelError
from controller.model.schema import InstanceKind, Schema

EXPECTED_FILE = "expected.json"


@dataclass(frozen=True, slots=True)
class ExpectedError:
    """Why an invalid example must be refused: a message and a data-path fragment."""

    reason: str
    message: str
    path: str


@dataclass(frozen=True, slots=True)
class Example:
    """One instance document; ``expected`` is set for the ones that must be refused."""

    path: Path
    kind: InstanceKind
    expected: ExpectedError | None = None

    @property
    def name(self) -> str:
        """The file name, e.g. ``scenario-a-tables.data.json``."""
        return self.path.name

    def text(self) -> str:
        """The document as written."""
        return self.path.read_text(encoding="utf-8")


def _kind(path: Path) -> InstanceKind:
    """``NAME.KIND.json`` -> KIND."""
    parts = path.name.split(".")
    if len(parts) < 3:  # noqa: PLR2004 - NAME, KIND and the extension
        raise ValueError(f"{path.name}: examples are named NAME.KIND.json")
    return InstanceKind(parts[-2])


def load_examples(directory: Path) -> list[Example]:
    """Every example under ``directory``, valid ones first, each with its instance kind."""
    valid = [Example(path, _kind(path)) for path in sorted(directory.glob("*.json"))]
    invalid_dir = directory / "invalid"
    expected_file = invalid_dir / EXPECTED_FILE
    table: dict[str, dict[str, str]] = (
        json.loads(expected_file.read_text(encoding="utf-8")) if expected_file.exists() else {}
    )
    invalid = []
    for path in sorted(invalid_dir.glob("*.json")):
        if path.name == EXPECTED_FILE:
            continue
        if path.name not in table:
            raise ValueError(f"{path.name}: no entry in {EXPECTED_FILE}")
        entry = table[path.name]
        expected = ExpectedError(entry["reason"], entry["message"], entry["path"])
        invalid.append(Example(path, _kind(path), expected))
    return valid + invalid


def check_example(schema: Schema, example: Example) -> str | None:
    """Validate one example as its kind requires; return what is wrong, or None if it holds.

    A valid example must validate; an invalid one must be refused with its expected message
    and path.
    """
    try:
        schema.validate(example.text(), example.kind)
    except ModelError as exc:
        if example.expected is None:
            return f"refused: {exc}"
        for item in exc.items:
            if example.expected.message in item.message and example.expected.path in (
                item.path or ""
            ):
                return None
        return f"refused for another reason than {example.expected.reason!r}: {exc}"
    if example.expected is not None:
        return f"accepted, but must be refused ({example.expected.reason})"
    return None
