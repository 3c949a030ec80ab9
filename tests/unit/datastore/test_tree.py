"""controller.datastore.tree and bulk: the top-level key index and the linear whole parse."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Edit, EditOperation
from controller.datastore.bulk import CHUNK, parse_document
from controller.datastore.tree import Tree
from controller.errors import CatsError
from controller.model import Schema, nodes
from controller.model.schema import Encoding
from controller.types import DataPath
from tests.unit.datastore.conftest import RUNNING

M = "shapes-test"
SEED = 20261202


def _hosts(keys: list[int]) -> list[dict[str, object]]:
    return [{"name": f"h{k}", "label": "L", "addr": f"a{k}"} for k in keys]


@pytest.fixture
def tree(test_schema: Schema) -> Iterator[Tree]:
    """A tree holding pools, hosts and a leaf, parsed by libyang."""
    made = Tree(test_schema.context.cdata)
    document = {
        f"{M}:motd": "hi",
        f"{M}:host": _hosts(list(range(20))),
        f"{M}:pools": {"pool": [{"name": "p1"}]},
    }
    made.replace(nodes.parse_data(made.ctx, json.dumps(document), Encoding.JSON))
    yield made
    nodes.free_all(made.replace(nodes.ffi.NULL))


def _runs(tree: Tree) -> list[str]:
    """The schema names of the top-level siblings, one per run of instances."""
    names: list[str] = []
    for node in nodes.siblings(tree.first[0]):
        if not names or names[-1] != nodes.name_of(node):
            names.append(nodes.name_of(node))
    return names


def test_index_follows_inserts_unlinks_and_merges(tree: Tree) -> None:
    rng = random.Random(SEED)
    present = set(range(20))
    for _ in range(300):
        key = rng.randrange(30)
        path = DataPath(f"/{M}:host[name='h{key}']")
        found = tree.find(path)
        assert (found is not None) == (key in present)
        assert found == nodes.find(tree.ctx, tree.first[0], path)
        if found is not None and rng.random() < 0.5:
            tree.free(found)
            present.discard(key)
            continue
        value = json.dumps({f"{M}:host": [{"name": f"h{key}", "label": f"L{rng.randrange(3)}"}]})
        tree.merge(nodes.parse_data(tree.ctx, value, Encoding.JSON))
        present.add(key)
        label = tree.find(DataPath(f"{path}/label"))
        assert label is not None
        assert nodes.value_of(label) == json.loads(value)[f"{M}:host"][0]["label"]
    assert sorted(_runs(tree)) == sorted(set(_runs(tree)))  # instances stay adjacent
    assert tree.find(DataPath(f"/{M}:pools/pool[name='p1']")) is not None
    assert tree.find(DataPath(f"/{M}:motd")) is not None
    tree.invalidate()
    assert {k for k in range(30) if tree.find(DataPath(f"/{M}:host[name='h{k}']"))} == present
    nodes.validate_all(tree.ctx, tree.first)


def test_unknown_paths_are_still_refused(tree: Tree) -> None:
    with pytest.raises(CatsError) as caught:
        tree.find(DataPath(f"/{M}:host[name='h1']/no-such"))
    assert caught.value.items[0].tag == "unknown-element"
    with pytest.raises(CatsError):
        tree.find(DataPath(f"/{M}:no-such[name='x']"))


def test_a_large_document_parses_in_pieces_to_the_same_tree(test_schema: Schema) -> None:
    ctx = test_schema.context.cdata
    keys = list(range(3 * CHUNK + 7))
    random.Random(SEED).shuffle(keys)
    document = json.dumps(
        {
            f"{M}:host": _hosts(keys),
            f"{M}:motd": "hi",
            f"{M}:pools": {"pool": [{"name": "p1"}]},
            "bench-list:bench": {"target": [{"name": "t"}]},
        }
    )
    flags = nodes.lib.LYD_PRINT_WITHSIBLINGS
    pieces, whole = (
        parse_document(ctx, document, Encoding.JSON),
        nodes.parse_data(ctx, document, Encoding.JSON),
    )
    try:
        assert nodes.print_tree(pieces, Encoding.JSON, flags) == nodes.print_tree(
            whole, Encoding.JSON, flags
        )
    finally:
        nodes.free_all(pieces)
        nodes.free_all(whole)


@pytest.mark.parametrize("incremental", [True, False], ids=["local", "full"])
def test_duplicate_top_level_entries_are_refused(
    test_schema: Schema, tmp_path: Path, *, incremental: bool
) -> None:
    hosts = _hosts(list(range(2 * CHUNK))) + _hosts([3])
    document = json.dumps({f"{M}:host": hosts})
    settings = CoreSettings(incremental=incremental)
    with Core(test_schema, tmp_path, settings=settings) as core:
        with pytest.raises(CatsError) as caught:
            core.edit(RUNNING, [Edit(EditOperation.REPLACE, DataPath("/"), document)], SYSTEM)
        assert "Duplicate instance" in caught.value.items[0].message
        hosts.pop()
        core.edit(
            RUNNING,
            [Edit(EditOperation.REPLACE, DataPath("/"), json.dumps({f"{M}:host": hosts}))],
            SYSTEM,
        )
        core.validate(RUNNING)
