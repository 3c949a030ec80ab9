"""controller.netconf.confirmed over a real core: the rollback is the server's own action."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    ReadRequest,
)
from controller.model import Schema
from controller.netconf.confirmed import Actor, CommitParams, ConfirmedCommits
from controller.types import DataPath

TEST_YANG = Path(__file__).resolve().parents[2] / "yang"
OWNER = Actor(3, "alice")
OTHER_SESSION = "4"


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    with Schema.for_server([TEST_YANG]) as compiled:
        yield compiled


@pytest.fixture
def core(schema: Schema, tmp_path: Path) -> Iterator[Core]:
    with Core(schema, tmp_path / "state") as opened:
        opened.edit(DatastoreName.RUNNING, [label("before")], SYSTEM)
        yield opened


def label(value: str) -> Edit:
    document = json.dumps({"core-test:top": {"label": value}})
    return Edit(EditOperation.MERGE, DataPath("/core-test:top"), document)


def running_label(core: Core) -> str:
    request = ReadRequest(
        DatastoreName.RUNNING, DataPath("/core-test:top/label"), content=Content.CONFIG
    )
    document = core.read(request, SYSTEM).document or "{}"
    return str(json.loads(document).get("core-test:label"))


def confirmed_commit(core: Core, events: list[str], timeout: int) -> ConfirmedCommits:
    """A confirmed commit of ``label = after`` by OWNER, then OTHER_SESSION locks running."""
    commits = ConfirmedCommits(core, events.append)
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session=str(OWNER.session_id))
    commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, timeout=timeout))
    assert running_label(core) == "after"
    core.lock(DatastoreName.RUNNING, OTHER_SESSION)
    return commits


def test_cancel_rolls_back_past_another_sessions_lock(core: Core) -> None:
    events: list[str] = []
    commits = confirmed_commit(core, events, timeout=600)
    commits.cancel(OWNER, None)
    assert running_label(core) == "before"
    assert not commits.pending
    assert core.lock_holders() == {DatastoreName.RUNNING: OTHER_SESSION}
    assert ['"confirm-event": "cancel"' in event for event in events] == [False, True]


def test_timeout_rolls_back_past_another_sessions_lock(core: Core) -> None:
    events: list[str] = []
    commits = confirmed_commit(core, events, timeout=1)
    deadline = time.monotonic() + 60
    while commits.pending and time.monotonic() < deadline:
        time.sleep(0.05)
    commits.close()
    assert running_label(core) == "before"
    assert '"confirm-event": "timeout"' in events[-1]
    assert core.lock_holders() == {DatastoreName.RUNNING: OTHER_SESSION}


def restarted(schema: Schema, core: Core, tmp_path: Path) -> Core:
    """The core closed (as a stop, or a crash, leaves it) and opened again on its state."""
    core.close()
    return Core(schema, tmp_path / "state")


def test_a_pending_commit_with_persist_is_resumed_and_confirmed_by_its_persist_id(
    schema: Schema, core: Core, tmp_path: Path
) -> None:
    events: list[str] = []
    commits = ConfirmedCommits(core, events.append)
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session="3")
    commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, timeout=600, persist="p-1"))
    commits.close()  # the server stops with the commit pending
    with restarted(schema, core, tmp_path) as again:
        assert running_label(again) == "after"
        resumed = ConfirmedCommits(again, events.append)
        resumed.resume()
        assert resumed.pending
        assert running_label(again) == "after"
        stranger = Actor(1, "bob")  # a new session; the id of the old one means nothing now
        resumed.commit(stranger, SYSTEM, CommitParams(persist_id="p-1"))
        assert not resumed.pending
        assert running_label(again) == "after"
        assert again.kept("confirmed-commit") is None


def test_a_pending_commit_without_persist_is_rolled_back_at_the_restart(
    schema: Schema, core: Core, tmp_path: Path
) -> None:
    events: list[str] = []
    commits = ConfirmedCommits(core, events.append)
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session="3")
    commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, timeout=600))
    commits.close()
    with restarted(schema, core, tmp_path) as again:
        resumed = ConfirmedCommits(again, events.append)
        resumed.resume()
        assert not resumed.pending
        assert running_label(again) == "before"
        assert '"confirm-event": "cancel"' in events[-1]
    with Core(schema, tmp_path / "state") as third:  # and it stays rolled back
        resumed = ConfirmedCommits(third, events.append)
        resumed.resume()
        assert running_label(third) == "before"
        assert not resumed.pending


def test_a_pending_commit_whose_deadline_passed_is_rolled_back_at_the_restart(
    schema: Schema, core: Core, tmp_path: Path
) -> None:
    events: list[str] = []
    commits = ConfirmedCommits(core, events.append)
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session="3")
    commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, timeout=1, persist="p-2"))
    commits.close()
    kept = json.loads(core.kept("confirmed-commit") or "{}")
    kept["deadline"] = "2020-01-01T00:00:00+00:00"  # the server was down past the timeout
    core.keep("confirmed-commit", json.dumps(kept))
    with restarted(schema, core, tmp_path) as again:
        resumed = ConfirmedCommits(again, events.append)
        resumed.resume()
        assert not resumed.pending
        assert running_label(again) == "before"
        assert '"confirm-event": "timeout"' in events[-1]


def test_the_remaining_timeout_runs_on_after_the_restart(
    schema: Schema, core: Core, tmp_path: Path
) -> None:
    events: list[str] = []
    commits = ConfirmedCommits(core, events.append)
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session="3")
    commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, timeout=2, persist="p-3"))
    commits.close()
    with restarted(schema, core, tmp_path) as again:
        resumed = ConfirmedCommits(again, events.append)
        resumed.resume()
        deadline = time.monotonic() + 60
        while resumed.pending and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running_label(again) == "before"
        assert again.kept("confirmed-commit") is None
