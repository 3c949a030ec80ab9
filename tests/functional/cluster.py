"""A C-PS cluster on loopback for the functional tests: 3 etcd members, N ``catsctl serve``.

:func:`running_cluster` starts a real etcd cluster (:mod:`tools.etcd_cluster`) and the replicas
as real processes, each with its own state directory, ports and ``--node-id``; the first one
seeds the cluster with ``--init-data``, the others join it with nothing of their own.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.datastore.secrets import KEY_FILE
from tests.functional.restconf_server import JSON, Server, running_server, write_init
from tools.etcd_cluster import EtcdCluster, etcd_cluster

CONVERGE_TIMEOUT_S = 60.0  # a bound under load, not a speed (tools/bench/cluster.py measures)


@dataclass
class Cluster:
    """The etcd members and the replicas (``replicas[0]`` seeded the configuration)."""

    etcd: EtcdCluster
    replicas: list[Server]


def config_tree(server: Server) -> Any:
    """Running's configuration as a replica serves it (JSON)."""
    reply = server.request(
        "GET", "data", params={"content": "config"}, headers={"Accept": JSON}, timeout=60
    )
    assert reply.status_code == 200, reply.text
    return reply.json()["ietf-restconf:data"]


def wait_until(check: Callable[[], bool], what: str, timeout: float = CONVERGE_TIMEOUT_S) -> None:
    """Poll ``check`` until it holds; fails naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def by_key(tree: Any) -> Any:
    """The tree with bench-list's system-ordered lists sorted by key: a replica that ran a
    commit again after another replica's (undone, then redone) may list an entry it changed
    last, which RFC 7950 7.7.7 allows for ordered-by system lists (docs/cluster.md, limits)."""
    bench = tree.get("bench-list:bench")
    if isinstance(bench, dict):
        for name, key in (("entry", "id"), ("target", "name")):
            if name in bench:
                bench[name] = sorted(bench[name], key=lambda item: str(item[key]).zfill(12))
    return tree


def wait_identical(replicas: list[Server], *, any_order: bool = False) -> Any:
    """Wait until every replica serves the same configuration (``any_order``: up to the
    order of bench-list's system-ordered lists); returns it."""
    trees: list[Any] = []

    def same() -> bool:
        trees[:] = [config_tree(replica) for replica in replicas]
        if any_order:
            trees[:] = [by_key(tree) for tree in trees]
        return all(tree == trees[0] for tree in trees)

    wait_until(same, "every replica serves the same configuration")
    return trees[0]


@contextlib.contextmanager
def running_cluster(
    folder: Path, document: dict[str, object], size: int = 3, *extra: str
) -> Iterator[Cluster]:
    """Start etcd (3 members) and ``size`` replicas; stop them all when the block ends."""
    with etcd_cluster(folder / "etcd") as etcd, contextlib.ExitStack() as stack:
        init = write_init(folder, document)
        replicas: list[Server] = []
        for number in range(1, size + 1):
            state = folder / f"replica{number}" / "state"
            state.parent.mkdir()
            if number > 1:  # the cluster's secrets key, as an operator copies it
                state.mkdir(mode=0o700)
                key = replicas[0].state_dir / KEY_FILE
                (state / KEY_FILE).write_bytes(key.read_bytes())
                (state / KEY_FILE).chmod(0o600)
            options = ("--cluster", etcd.url, "--node-id", f"cps{number}", *extra)
            if number == size > 1:  # the last one as an operator's file says (serve --config)
                file = folder / f"replica{number}" / "serve.toml"
                file.write_text(f'cluster = "{etcd.url}"\nnode-id = "cps{number}"\n')
                options = ("--config", str(file), *extra)
            seed = init if number == 1 else None
            replicas.append(stack.enter_context(running_server(state, seed, *options)))
        yield Cluster(etcd, replicas)
