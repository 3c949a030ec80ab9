"""controller.datastore.local and plan: the fast path agrees with whole-tree validation."""

from __future__ import annotations

import json
import random
from pathlib import Path

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Edit, EditOperation
from controller.datastore.local import LocalValidation
from controller.datastore.plan import plan
from controller.errors import CatsError
from controller.model import Schema
from controller.types import DataPath, SchemaPath
from tests.unit.datastore.conftest import RUNNING, read_json

BENCH = "/bench-list:bench"
SEED = 20261130
STEPS = 150


def test_the_plan_is_derived_from_the_schema(test_schema: Schema) -> None:
    derived = plan(test_schema.context.cdata)
    entry = derived.units[SchemaPath(f"{BENCH}/entry")]
    assert entry.uniques == (("addr",),)
    assert [ref.leaf for ref in entry.out_refs] == ["target"]
    assert derived.units[SchemaPath(f"{BENCH}/target")].incoming
    assert "/core-test:top/limited" in derived.refused  # count() over the list: not local
    assert "/core-test:top/item" in derived.units  # its must reads only the entry


def random_edit(rng: random.Random) -> Edit:
    key = rng.randrange(12)
    path = DataPath(f"{BENCH}/entry[id='{key}']")
    kind = rng.random()
    if kind < 0.2:
        return Edit(EditOperation.REMOVE, path)
    if kind < 0.3:
        name = f"t{rng.randrange(4)}"
        target = DataPath(f"{BENCH}/target[name='{name}']")
        if rng.random() < 0.5:
            return Edit(EditOperation.REMOVE, target)
        return Edit(
            EditOperation.MERGE,
            target,
            json.dumps({"bench-list:target": [{"name": name}]}),
        )
    entry: dict[str, object] = {"id": key}
    if rng.random() < 0.85:
        entry["name"] = f"n{key}"
    if rng.random() < 0.8:
        entry["addr"] = f"a{rng.randrange(8)}"
    if rng.random() < 0.8:
        entry["target"] = f"t{rng.randrange(5)}"
    if rng.random() < 0.5:
        entry["weight"] = rng.choice([1, 5, 1000, 1001])
    operation = rng.choice([EditOperation.MERGE, EditOperation.REPLACE, EditOperation.CREATE])
    return Edit(operation, path, json.dumps({"bench-list:entry": [entry]}))


def verdict(core: Core, edits: list[Edit]) -> str:
    try:
        core.edit(RUNNING, edits, SYSTEM)
    except CatsError as exc:
        return f"{exc.items[0].tag}: {exc.items[0].message}"
    return "ok"


def contents(core: Core) -> list[str]:
    """The bench data, order aside (system-ordered lists keep insertion order in libyang)."""
    found = read_json(core, BENCH)
    if not isinstance(found, dict):
        return []
    bench = found.get("bench-list:bench", {})
    return sorted(json.dumps(item, sort_keys=True) for items in bench.values() for item in items)


def test_fast_path_verdicts_match_full_validation(test_schema: Schema, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    local = Core(test_schema, tmp_path / "local", settings=CoreSettings(incremental=True))
    full = Core(test_schema, tmp_path / "full", settings=CoreSettings(incremental=False))
    with local, full:
        agreed = 0
        for _ in range(STEPS):
            edits = [random_edit(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
            fast, slow = verdict(local, edits), verdict(full, edits)
            assert (fast == "ok") == (slow == "ok"), (edits, fast, slow)
            assert contents(local) == contents(full)
            agreed += fast == "ok"
        local.validate(RUNNING)  # the incrementally built tree is valid as a whole
        assert agreed > STEPS // 5
        assert local.validation_stats().local > STEPS // 2


def test_verdicts_match_across_restarts_and_dry_runs(test_schema: Schema, tmp_path: Path) -> None:
    """The local core is reopened every few steps, so its indexes are often not built yet (an
    edit that changes what they keep builds them first), and it runs every third edit as a
    dry run first (a trial is undone: it must leave no trace in the indexes either)."""
    rng = random.Random(SEED + 1)
    folder = tmp_path / "local"
    full = Core(test_schema, tmp_path / "full", settings=CoreSettings(incremental=False))
    local = Core(test_schema, folder)
    try:
        for step in range(STEPS):
            if step % 5 == 4:
                local.close()
                local = Core(test_schema, folder)
            edits = [random_edit(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
            if step % 3 == 0:
                tried = "ok"
                try:
                    local.trial(edits, SYSTEM, validate=True)
                except CatsError as exc:
                    tried = f"{exc.items[0].tag}: {exc.items[0].message}"
            fast, slow = verdict(local, edits), verdict(full, edits)
            assert (fast == "ok") == (slow == "ok"), (edits, fast, slow)
            if step % 3 == 0:
                assert (tried == "ok") == (fast == "ok"), (edits, tried, fast)
            assert contents(local) == contents(full)
        local.validate(RUNNING)
    finally:
        local.close()
        full.close()


def test_an_edit_that_changes_nothing_the_indexes_keep_does_not_build_them(
    test_schema: Schema, tmp_path: Path
) -> None:
    with Core(test_schema, tmp_path) as core:
        core.edit(RUNNING, [_entries({"name": "t1"}, kind="target")], SYSTEM)
        for key in range(3):
            entry = {"id": key, "name": f"n{key}", "addr": f"a{key}", "target": "t1"}
            core.edit(RUNNING, [_entries(entry)], SYSTEM)
    with Core(test_schema, tmp_path) as core:
        validator = core.validator
        assert isinstance(validator, LocalValidation)
        assert not validator.built
        core.edit(RUNNING, [_entries({"id": 1, "name": "renamed", "weight": 7})], SYSTEM)
        same = {"id": 2, "name": "again", "addr": "a2", "target": "t1"}
        core.edit(RUNNING, [_entries(same, operation=EditOperation.REPLACE)], SYSTEM)
        assert not validator.built  # a name, a weight; an entry replaced with its own addr
        before = contents(core)
        taken = {"id": 2, "addr": "a0"}
        assert verdict(core, [_entries(taken)]).startswith("operation-failed: Unique data")
        assert validator.built  # built on the tree as committed, then the edit ran again
        assert contents(core) == before
        gone = Edit(EditOperation.REMOVE, DataPath(f"{BENCH}/target[name='t1']"))
        assert verdict(core, [gone]).startswith("data-missing")


def _entries(
    entry: dict[str, object], *, kind: str = "entry", operation: EditOperation = EditOperation.MERGE
) -> Edit:
    key = "name" if kind == "target" else "id"
    path = DataPath(f"{BENCH}/{kind}[{key}='{entry[key]}']")
    return Edit(operation, path, json.dumps({f"bench-list:{kind}": [entry]}))
