"""controller.datastore.locks and the candidate: sessions, lock-denied, commit, discard."""

from __future__ import annotations

import pytest

from controller.datastore import Core
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.datastore.stores import ConfigStore
from controller.errors import CatsError
from tests.unit.datastore.conftest import RUNNING, create, item, item_path, read_json

CANDIDATE = DatastoreName.CANDIDATE


def test_a_lock_refuses_other_sessions_with_the_holder(core: Core) -> None:
    core.lock(RUNNING, "7")
    with pytest.raises(CatsError) as caught:
        core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM, session="8")
    assert caught.value.items[0].tag == "lock-denied"
    assert caught.value.items[0].info == (("session-id", "7"),)
    with pytest.raises(CatsError):
        core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)  # RESTCONF: no session
    with pytest.raises(CatsError) as again:
        core.lock(RUNNING, "8")
    assert again.value.items[0].tag == "lock-denied"
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM, session="7")
    with pytest.raises(CatsError):
        core.unlock(RUNNING, "8")
    core.release_session("7")
    core.edit(RUNNING, [create(item_path(3), item(3))], SYSTEM, session="8")


def test_candidate_commit_and_discard(core: Core) -> None:
    assert read_json(core, item_path(1), CANDIDATE) is not None
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM)
    assert read_json(core, item_path(2), CANDIDATE) is not None
    assert read_json(core, item_path(2)) is None
    core.discard_changes()
    assert read_json(core, item_path(2), CANDIDATE) is None
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM)
    core.commit(SYSTEM)
    assert read_json(core, item_path(2)) is not None


def test_candidate_may_be_invalid_until_commit(core: Core) -> None:
    core.edit(CANDIDATE, [create(item_path(2), item(2, name=None))], SYSTEM)
    with pytest.raises(CatsError):
        core.validate(CANDIDATE)
    with pytest.raises(CatsError) as caught:
        core.commit(SYSTEM)
    assert caught.value.items[0].tag == "missing-element"
    assert read_json(core, item_path(2)) is None
    core.edit(
        CANDIDATE,
        [Edit(EditOperation.MERGE, item_path(2), '{"core-test:item": [{"id": 2, "name": "ok"}]}')],
        SYSTEM,
    )
    core.commit(SYSTEM)
    assert read_json(core, item_path(2)) is not None


def test_commit_after_running_changed_replaces_running(core: Core) -> None:
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM)
    core.edit(RUNNING, [create(item_path(3), item(3))], SYSTEM)
    core.commit(SYSTEM)
    assert read_json(core, item_path(2)) is not None
    assert read_json(core, item_path(3)) is None  # the candidate is what becomes running


def test_candidate_lock_is_refused_while_modified_and_released_with_the_session(core: Core) -> None:
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM)
    with pytest.raises(CatsError):
        core.lock(CANDIDATE, "1")
    core.discard_changes()
    core.lock(CANDIDATE, "1")
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM, session="1")
    core.release_session("1")
    assert read_json(core, item_path(2), CANDIDATE) is None


def test_the_copy_kept_after_a_commit_is_the_next_base_only_while_running_is_unchanged(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a commit the candidate's copy equals running and becomes the base of the next
    edit (no second copy of running); once running changed the next edit copies it again, so
    the candidate shows what running holds."""
    copies: list[int] = []
    copy_tree = ConfigStore.copy_tree

    def counted(store: ConfigStore) -> object:
        copies.append(1)
        return copy_tree(store)

    monkeypatch.setattr(ConfigStore, "copy_tree", counted)
    core.edit(CANDIDATE, [create(item_path(2), item(2))], SYSTEM)
    core.commit(SYSTEM)
    core.edit(CANDIDATE, [create(item_path(3), item(3))], SYSTEM)
    assert read_json(core, item_path(2), CANDIDATE) is not None
    core.commit(SYSTEM)
    assert len(copies) == 1  # the second edit started from the kept copy
    assert read_json(core, item_path(3)) is not None

    core.edit(RUNNING, [create(item_path(4), item(4))], SYSTEM)  # running moves on
    core.edit(CANDIDATE, [create(item_path(5), item(5))], SYSTEM)
    assert len(copies) == 2  # a fresh copy of running
    assert read_json(core, item_path(4), CANDIDATE) is not None
    core.commit(SYSTEM)
    assert all(read_json(core, item_path(n)) is not None for n in (1, 2, 3, 4, 5))

    core.edit(CANDIDATE, [create(item_path(6), item(6))], SYSTEM)
    core.discard_changes()
    core.edit(CANDIDATE, [create(item_path(7), item(7))], SYSTEM)
    assert read_json(core, item_path(6), CANDIDATE) is None  # a discarded edit is gone
