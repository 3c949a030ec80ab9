"""The resource view of each candidate as RFC 7951 JSON: the operational
``agent-selection/candidates/candidate/resource-view`` (6.3, 7.2).

What the selection decides on is parsed (:mod:`.views`); an operator reads the same view here,
as the advertisements gave it, in the nodes of the ``resource-view`` grouping that MSG-4 and
MSG-7 use too: the computing and storage dimensions as the candidate's C-SMA last advertised
them (MSG-4 replaces both), the forwarding dimension as the C-NMA's views built it (MSG-7: its
endpoints accumulate and an empty path set keeps the earlier one, as
:func:`.views.merged` does for the selection), and when any of it last changed. The query-state
answers (MSG-6) live in the sessions' state maps, not here.
"""

from __future__ import annotations

from collections.abc import Iterable

from controller.types import Json

FORWARDING = ("path-set", "endpoint-cost", "transfer-window")


def _merged(old: Json | None, new: Json) -> Json:
    """A later forwarding view over an earlier one, as :func:`.views.merged` merges them."""
    if old is None or not old.get("endpoint-cost", {}).get("endpoint"):
        return new
    endpoints = {str(e["prefix"]): e for e in old["endpoint-cost"]["endpoint"]}
    for endpoint in new.get("endpoint-cost", {}).get("endpoint", []):
        endpoints[str(endpoint["prefix"])] = endpoint
    found: Json = {"endpoint-cost": {"endpoint": list(endpoints.values())}}
    paths = new["path-set"] if new.get("path-set", {}).get("path") else old.get("path-set")
    window = new.get("transfer-window") or old.get("transfer-window")
    if paths:
        found["path-set"] = paths
    if window:
        found["transfer-window"] = window
    return found


class ViewDocuments:
    """The last advertised view of each candidate, by csci-id (the caller serializes)."""

    def __init__(self) -> None:
        self._views: dict[str, Json] = {}
        self._updated: dict[str, str] = {}

    def advertised(self, entries: Iterable[Json], when: str) -> None:
        """The candidates of one stored MSG-4: their computing and storage dimensions."""
        for entry in entries:
            csci_id = str(entry["csci-id"])
            view = self._views.setdefault(csci_id, {})
            for dimension in ("computing", "storage"):
                view[dimension] = entry.get(dimension, {})
            self._updated[csci_id] = when

    def viewed(self, entries: Iterable[Json], when: str) -> None:
        """The candidates of one stored MSG-7: their forwarding dimension."""
        for entry in entries:
            csci_id = str(entry["csci-id"])
            view = self._views.setdefault(csci_id, {})
            new = {key: entry[key] for key in FORWARDING if key in entry}
            view["forwarding"] = _merged(view.get("forwarding"), new)
            self._updated[csci_id] = when

    def documents(self) -> dict[str, Json]:
        """``resource-view`` of each candidate with one (empty dimensions left out)."""
        found: dict[str, Json] = {}
        for csci_id, view in self._views.items():
            document = {name: part for name, part in view.items() if part}
            document["last-update"] = self._updated[csci_id]
            found[csci_id] = document
        return found
