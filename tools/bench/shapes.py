"""The data shapes :mod:`tools.bench.datastore` measures, with their good and bad edits.

* ``container list``: ``/bench-list:bench/entry`` (tests/yang/bench-list), a list under a
  container with a leafref to ``target``, a ``unique`` and a mandatory leaf;
* ``top-level list``: ``/shapes-test:host`` (tests/yang/shapes-test), a list with no container
  parent, a leafref to ``/pools/pool``, ``unique addr`` and a mandatory ``label``;
* ``nested list``: ``/shapes-test:site``, entries each holding a small inner list ``link``
  (``unique port``, leafrefs to a pool outside and to a member of the same site) and
  ``member``; the site has ``unique code`` and a mandatory ``name``.

Each bad edit must be refused at every size: a dangling leafref, a duplicate unique value and a
missing mandatory leaf.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from controller.datastore.api import Edit, EditOperation
from controller.types import DataPath
from tools.bench.libyang_validation import NEW_ID_BASE, Entry, addr_of, datastore_json, new_entry

POOLS = 300
ST = "shapes-test"


@dataclass(frozen=True)
class Shape:
    """A datastore shape: how to seed it, a good one-instance create, and bad ones."""

    name: str
    seed: Callable[[int], str]  # the whole datastore (RFC 7951 JSON) at a size
    good: Callable[[int], Edit]  # a valid create, by serial number
    bad: dict[str, Callable[[int], Edit]]  # label -> a create that must be refused, by size


def _bench_create(entry: Entry) -> Edit:
    path = DataPath(f"/bench-list:bench/entry[id='{entry.key}']")
    return Edit(EditOperation.CREATE, path, json.dumps({"bench-list:entry": [entry.as_json()]}))


CONTAINER_LIST = Shape(
    "container list",
    datastore_json,
    lambda serial: _bench_create(new_entry(serial)),
    {
        "dangling": lambda s: _bench_create(Entry(NEW_ID_BASE + s, "x", f"d-{s}", "no-such", 5)),
        "unique": lambda s: _bench_create(Entry(NEW_ID_BASE + s, "x", addr_of(7), "t1", 5)),
        "mandatory": lambda s: _bench_create(Entry(NEW_ID_BASE + s, None, f"m-{s}", "t1", 5)),
    },
)


def _pools() -> dict[str, object]:
    return {"pool": [{"name": f"p{i}"} for i in range(POOLS)]}


def _host(name: str, addr: str, pool: str, *, label: bool = True) -> dict[str, object]:
    host: dict[str, object] = {"name": name, "addr": addr, "pool": pool}
    if label:
        host["label"] = f"label of {name}"
    return host


def _host_create(host: dict[str, object]) -> Edit:
    path = DataPath(f"/{ST}:host[name='{host['name']}']")
    return Edit(EditOperation.CREATE, path, json.dumps({f"{ST}:host": [host]}))


def _hosts(size: int) -> str:
    hosts = [_host(f"h{i}", f"a{i}", f"p{i % POOLS}") for i in range(size)]
    return json.dumps({f"{ST}:pools": _pools(), f"{ST}:host": hosts})


TOP_LEVEL_LIST = Shape(
    "top-level list",
    _hosts,
    lambda serial: _host_create(_host(f"new{serial}", f"new-{serial}", f"p{serial % POOLS}")),
    {
        "dangling": lambda s: _host_create(_host(f"bad{s}", f"d-{s}", "no-such")),
        "unique": lambda s: _host_create(_host(f"bad{s}", "a7", "p1")),
        "mandatory": lambda s: _host_create(_host(f"bad{s}", f"m-{s}", "p1", label=False)),
    },
)


def _site(key: int, code: str, pool: str, *, name: bool = True) -> dict[str, object]:
    site: dict[str, object] = {
        "id": key,
        "code": code,
        "member": [{"name": "m0"}, {"name": "m1"}],
        "link": [
            {"peer": "x0", "port": 1, "pool": pool, "member": "m0"},
            {"peer": "x1", "port": 2, "member": "m1"},
        ],
    }
    if name:
        site["name"] = f"site {key}"
    return site


def _site_create(site: dict[str, object]) -> Edit:
    path = DataPath(f"/{ST}:site[id='{site['id']}']")
    return Edit(EditOperation.CREATE, path, json.dumps({f"{ST}:site": [site]}))


def _sites(size: int) -> str:
    sites = [_site(i, f"c{i}", f"p{i % POOLS}") for i in range(size)]
    return json.dumps({f"{ST}:pools": _pools(), f"{ST}:site": sites})


NESTED_LIST = Shape(
    "nested list",
    _sites,
    lambda serial: _site_create(_site(NEW_ID_BASE + serial, f"new-{serial}", "p1")),
    {
        "dangling": lambda s: _site_create(_site(NEW_ID_BASE - 1 - s, f"d-{s}", "no-such")),
        "unique": lambda s: _site_create(_site(NEW_ID_BASE - 1 - s, "c7", "p1")),
        "mandatory": lambda s: _site_create(_site(NEW_ID_BASE - 1 - s, f"m-{s}", "p1", name=False)),
    },
)

SHAPES = {shape.name: shape for shape in (CONTAINER_LIST, TOP_LEVEL_LIST, NESTED_LIST)}
