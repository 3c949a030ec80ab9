"""controller.datastore.local and plan: the fast path agrees with whole-tree validation."""

from __future__ import annotations

import json
import random
from pathlib import Path

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Edit, EditOperation
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
