"""error-option and default-operation none over a fake core (controller.netconf.apply)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    ReadRequest,
    ReadResult,
)
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.netconf.apply import ErrorOption, apply_edits, missing_ancestors, parent_path
from controller.types import DataPath

RUNNING = DatastoreName.RUNNING


class FakeCore:
    """Applies edits to a set of paths; an edit of a path in ``refused`` fails."""

    def __init__(self, refused: set[str], existing: set[str] | None = None) -> None:
        self.refused = refused
        self.paths: set[str] = set(existing or ())

    def edit(
        self, datastore: DatastoreName, edits: Sequence[Edit], principal: Any, **_: Any
    ) -> None:
        del datastore, principal
        bad = [e.path for e in edits if e.path in self.refused]
        if bad:
            raise CatsError(*(ErrorItem(ErrorType.APPLICATION, "data-exists", p) for p in bad))
        self.paths.update(e.path for e in edits)

    def read(self, request: ReadRequest, principal: Any) -> ReadResult:
        del principal
        found = request.path in self.paths
        return ReadResult("<x/>" if found else None, None)  # type: ignore[arg-type]


def merges(*paths: str) -> list[Edit]:
    return [Edit(EditOperation.MERGE, DataPath(path), "<x/>") for path in paths]


def run(core: FakeCore, option: ErrorOption) -> list[str]:
    with pytest.raises(CatsError) as raised:
        apply_edits(
            core,  # type: ignore[arg-type]
            RUNNING,
            merges("/a", "/b", "/c"),
            SYSTEM,
            session="1",
            on_error=option,
        )
    return [item.message for item in raised.value.items]


def test_stop_on_error_keeps_what_came_before() -> None:
    core = FakeCore({"/b", "/c"})
    assert run(core, ErrorOption.STOP) == ["/b"]
    assert core.paths == {"/a"}


def test_continue_on_error_reports_every_error() -> None:
    core = FakeCore({"/b", "/c"})
    assert run(core, ErrorOption.CONTINUE) == ["/b", "/c"]
    assert core.paths == {"/a"}


def test_rollback_on_error_changes_nothing() -> None:
    core = FakeCore({"/b"})
    assert run(core, ErrorOption.ROLLBACK) == ["/b"]
    assert core.paths == set()


def test_missing_ancestor_is_data_missing() -> None:
    core = FakeCore(set(), {"/m:top"})
    missing_ancestors(core, RUNNING, merges("/m:top/leaf"), SYSTEM)  # type: ignore[arg-type]
    with pytest.raises(CatsError) as raised:
        missing_ancestors(core, RUNNING, merges("/m:top/list[k='1']/leaf"), SYSTEM)  # type: ignore[arg-type]
    assert raised.value.items[0].tag == "data-missing"


def test_parent_path() -> None:
    assert parent_path(DataPath("/m:a/b[k='x/y']/c")) == "/m:a/b[k='x/y']"
    assert parent_path(DataPath("/m:a")) is None
