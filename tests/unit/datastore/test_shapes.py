"""The fast path on shapes beyond lists under a container (tests/yang/shapes-test).

Seeded random edit sequences on a top-level list, lists nested in its entries, a list inside a
choice, top-level leaves and containers: the local verdict must equal whole-tree validation's,
the data must stay the same, and the incrementally built tree must still validate in full.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import Edit, EditOperation
from controller.datastore.plan import plan
from controller.model import Schema
from controller.types import DataPath, SchemaPath
from tests.unit.datastore.conftest import RUNNING, read_json
from tests.unit.datastore.test_local import verdict

M = "shapes-test"
SEED = 20261201
STEPS = 200
MODES = [EditOperation.MERGE, EditOperation.REPLACE, EditOperation.CREATE]


def test_the_new_shapes_are_units(test_schema: Schema) -> None:
    derived = plan(test_schema.context.cdata)
    assert f"/{M}:host" in derived.units  # top-level list
    assert derived.units[SchemaPath(f"/{M}:host")].carry == (
        "label",
    )  # copied with a referenced key
    site = derived.units[SchemaPath(f"/{M}:site")]  # nested lists belong to the outer entry
    assert {ref.leaf for ref in site.out_refs} == {"link/host", "link/pool"}
    assert derived.units[SchemaPath(f"/{M}:area/slot")].rivals  # list in a case
    assert derived.units[SchemaPath(f"/{M}:settings")].subtree
    assert derived.units[SchemaPath(f"/{M}:motd")].subtree
    assert f"/{M}:capped" in derived.refused  # aggregate over the whole list
    assert f"/{M}:quota" in derived.refused  # read by that aggregate


def _doc(name: str, value: object) -> str:
    return json.dumps({f"{M}:{name}": value})


def _host(rng: random.Random) -> Edit:
    key = f"h{rng.randrange(5)}"
    path = DataPath(f"/{M}:host[name='{key}']")
    if rng.random() < 0.2:
        return Edit(EditOperation.REMOVE, path)
    entry: dict[str, object] = {"name": key}
    if rng.random() < 0.85:
        entry["label"] = "L"
    if rng.random() < 0.7:
        entry["addr"] = f"a{rng.randrange(4)}"
    if rng.random() < 0.6:
        entry["pool"] = f"p{rng.randrange(4)}"
    if rng.random() < 0.3:
        entry["weight"] = rng.choice([1, 50, 100])
    return Edit(rng.choice(MODES), path, _doc("host", [entry]))


def _site(rng: random.Random) -> Edit:  # noqa: C901
    key = rng.randrange(4)
    path = DataPath(f"/{M}:site[id='{key}']")
    kind = rng.random()
    if kind < 0.15:
        return Edit(EditOperation.REMOVE, path)
    if kind < 0.55:  # an edit deep inside the entry
        peer = f"x{rng.randrange(5)}"
        link_path = DataPath(f"{path}/link[peer='{peer}']")
        if rng.random() < 0.2:
            return Edit(EditOperation.REMOVE, link_path)
        link: dict[str, object] = {"peer": peer}
        if rng.random() < 0.9:
            link["port"] = rng.randrange(4)
        for leaf, values in (
            ("pool", [f"p{i}" for i in range(4)]),
            ("host", [f"h{i}" for i in range(6)]),
            ("member", ["m0", "m1", "m2"]),
        ):
            if rng.random() < 0.4:
                link[leaf] = rng.choice(values)
        if rng.random() < 0.3:
            link["lo"], link["hi"] = rng.randrange(5), rng.randrange(5)
        return Edit(rng.choice(MODES), link_path, _doc("link", [link]))
    if kind < 0.65:
        member = DataPath(f"{path}/member[name='m{rng.randrange(3)}']")
        if rng.random() < 0.4:
            return Edit(EditOperation.REMOVE, member)
        return Edit(EditOperation.MERGE, member, _doc("member", [{"name": member[-4:-2]}]))
    entry: dict[str, object] = {"id": key, "code": f"c{rng.randrange(3)}"}
    if rng.random() < 0.85:
        entry["name"] = f"s{key}"
    return Edit(rng.choice(MODES), path, _doc("site", [entry]))


def _pool(rng: random.Random) -> Edit:
    path = DataPath(f"/{M}:pools/pool[name='p{rng.randrange(4)}']")
    if rng.random() < 0.4:
        return Edit(EditOperation.REMOVE, path)
    return Edit(EditOperation.MERGE, path, _doc("pool", [{"name": path[-4:-2]}]))


def _area(rng: random.Random) -> Edit:
    if rng.random() < 0.3:
        path = DataPath(f"/{M}:area/size")
        if rng.random() < 0.4:
            return Edit(EditOperation.REMOVE, path)
        return Edit(EditOperation.MERGE, path, _doc("size", rng.choice([1, 5, 11])))
    path = DataPath(f"/{M}:area/slot[n='{rng.randrange(4)}']")
    if rng.random() < 0.25:
        return Edit(EditOperation.REMOVE, path)
    slot: dict[str, object] = {"n": int(path[-3]), "label": f"l{rng.randrange(3)}"}
    if rng.random() < 0.5:
        slot["pool"] = f"p{rng.randrange(5)}"
    return Edit(rng.choice(MODES), path, _doc("slot", [slot]))


def _top(rng: random.Random) -> Edit:  # noqa: PLR0911
    kind = rng.random()
    if kind < 0.3:
        path = DataPath(f"/{M}:motd")
        if rng.random() < 0.3:
            return Edit(EditOperation.REMOVE, path)
        return Edit(EditOperation.MERGE, path, _doc("motd", rng.choice(["hi", "x" * 25])))
    if kind < 0.7:
        path = DataPath(f"/{M}:settings/{rng.choice(['level', 'retries'])}")
        if rng.random() < 0.3:
            return Edit(EditOperation.REMOVE, path)
        value = rng.choice([1, 3, 5]) if path.endswith("level") else rng.choice([5, 20, 40])
        return Edit(EditOperation.MERGE, path, _doc(path.rsplit("/", 1)[1], value))
    if kind < 0.8:
        return Edit(EditOperation.REMOVE, DataPath(f"/{M}:settings"))
    if kind < 0.9:
        path = DataPath(f"/{M}:capped[id='{rng.randrange(4)}']")
        return Edit(EditOperation.MERGE, path, _doc("capped", [{"id": int(path[-3])}]))
    return Edit(
        EditOperation.MERGE, DataPath(f"/{M}:quota"), _doc("quota", {"limit": rng.randrange(4)})
    )


SHAPES: dict[str, Callable[[random.Random], Edit]] = {
    "top-level list": _host,
    "nested list": _site,
    "list in a choice": _area,
    "top-level subtree": _top,
}


def contents(core: Core) -> str:
    """Everything of the module, order of system-ordered entries aside."""
    found = read_json(core, None)
    assert isinstance(found, dict)
    mine = {k: v for k, v in found.items() if k.startswith(f"{M}:")}
    return json.dumps(_sorted(mine), sort_keys=True)


def _sorted(value: object) -> object:
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_sorted(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


@pytest.mark.parametrize("shape", list(SHAPES))
def test_fast_path_verdicts_match_full_validation(
    test_schema: Schema, tmp_path: Path, shape: str
) -> None:
    rng = random.Random(f"{SEED}-{shape}")
    local = Core(test_schema, tmp_path / "local", settings=CoreSettings(incremental=True))
    full = Core(test_schema, tmp_path / "full", settings=CoreSettings(incremental=False))
    makers = [SHAPES[shape], SHAPES[shape], SHAPES[shape], _pool, *SHAPES.values()]
    with local, full:
        agreed = 0
        for _ in range(STEPS):
            edits = [rng.choice(makers)(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
            fast, slow = verdict(local, edits), verdict(full, edits)
            assert (fast == "ok") == (slow == "ok"), (edits, fast, slow)
            assert contents(local) == contents(full), edits
            agreed += fast == "ok"
        local.validate(RUNNING)  # the incrementally built tree is valid as a whole
        assert agreed > STEPS // 5
        assert local.validation_stats().local > STEPS // 3
