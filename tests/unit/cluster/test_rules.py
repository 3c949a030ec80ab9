"""The cluster's pure rules: which commits conflict, when a batch follows on, endpoints."""

from __future__ import annotations

import pytest

from controller.cluster.etcd import endpoints_of, prefix_end
from controller.datastore.replication import StaleError, _follows, conflict, overlaps
from controller.types import DataPath

ENTRY = "/bench-list:bench/entry[id='1']"


def test_paths_overlap_at_or_under_each_other_only() -> None:
    assert overlaps([ENTRY], [ENTRY + "/weight"])
    assert overlaps([ENTRY + "/weight"], ["/bench-list:bench/entry"])
    assert overlaps(["/"], [ENTRY])  # a replace of the whole datastore overlaps everything
    assert overlaps([ENTRY], ["/"])
    assert not overlaps([ENTRY], ["/bench-list:bench/entry[id='10']"])
    assert not overlaps([ENTRY + "/weight"], [ENTRY + "/name"])


def test_a_stale_commit_conflicts_only_with_what_it_changed() -> None:
    stale = StaleError(4, [DataPath(ENTRY)])
    other = {"txid": 5, "user": "bob", "changed": ["/bench-list:bench/entry[id='2']"]}
    same = {"txid": 6, "user": "carol", "changed": [ENTRY + "/weight"]}
    assert conflict(stale, [other]) is None
    error = conflict(stale, [other, same])
    assert error is not None
    assert error.items[0].tag == "in-use"
    assert "transaction 6 by carol" in error.items[0].message
    assert conflict(stale, [{"txid": 7}]) is not None  # changes unknown: assume the worst


def test_a_batch_follows_on_only_without_a_gap() -> None:
    assert _follows([{"txid": 3}, {"txid": 4}], 2)
    assert _follows([{"txid": 2}], 2)  # already applied: nothing new, nothing missing
    assert not _follows([{"txid": 5}], 2)


def test_endpoints_are_parsed_or_refused() -> None:
    assert endpoints_of("etcd://127.0.0.1:2379,10.0.0.2:2380") == [
        ("127.0.0.1", 2379),
        ("10.0.0.2", 2380),
    ]
    for bad in ("http://127.0.0.1:2379", "etcd://127.0.0.1", "etcd://:2379"):
        with pytest.raises(ValueError, match=r"etcd://|HOST:PORT"):
            endpoints_of(bad)
    assert prefix_end("/cats/config/log/") == "/cats/config/log0"
