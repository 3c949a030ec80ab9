"""The operational resource view mirrors what the selection keeps of the advertisements."""

from __future__ import annotations

from controller.agent_selection.viewdocs import ViewDocuments


def _endpoint(prefix: str, median: str) -> dict[str, object]:
    return {"prefix": prefix, "median": median}


def test_forwarding_views_accumulate_endpoints_and_keep_paths_as_the_selection_does() -> None:
    docs = ViewDocuments()
    first = {
        "csci-id": "A",
        "path-set": {"path": [{"path-id": "p1"}]},
        "endpoint-cost": {"endpoint": [_endpoint("10.0.0.0/8", "5"), _endpoint("::/0", "9")]},
    }
    docs.viewed([first], "2026-12-03T00:00:00.000Z")
    later = {
        "csci-id": "A",
        "path-set": {"path": []},  # no paths: the earlier ones stay
        "endpoint-cost": {"endpoint": [_endpoint("::/0", "7")]},
        "transfer-window": {"class": "x"},
    }
    docs.viewed([later], "2026-12-03T00:00:01.000Z")
    view = docs.documents()["A"]
    assert view["forwarding"]["path-set"] == {"path": [{"path-id": "p1"}]}
    assert view["forwarding"]["endpoint-cost"]["endpoint"] == [
        _endpoint("10.0.0.0/8", "5"),
        _endpoint("::/0", "7"),
    ]
    assert view["forwarding"]["transfer-window"] == {"class": "x"}
    assert view["last-update"] == "2026-12-03T00:00:01.000Z"
    assert "computing" not in view


def test_a_capability_advertisement_replaces_computing_and_storage() -> None:
    docs = ViewDocuments()
    docs.advertised(
        [{"csci-id": "B", "computing": {"health": {"status": "up"}}, "storage": {"x": 1}}], "t1"
    )
    docs.advertised([{"csci-id": "B", "computing": {"token-rate": {"prefill-rate": "9"}}}], "t2")
    view = docs.documents()["B"]
    assert view == {"computing": {"token-rate": {"prefill-rate": "9"}}, "last-update": "t2"}
    docs.viewed([{"csci-id": "C"}], "t3")  # a view with nothing in it
    assert docs.documents()["C"] == {"last-update": "t3"}
