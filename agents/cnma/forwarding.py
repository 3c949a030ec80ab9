"""The forwarding view of MSG-7: path-set and endpoint-cost per candidate (agent draft 7.2, 9.1).

``advertise-forwarding-view`` carries, per candidate instance, the paths from each ingress to
the candidate's egress (the NST paths) and the per-prefix cost from the instance to each tool
and data-source prefix. A modelled delay is the average of the IGP TE link delays (RFC 7471
4.1), so it is reported as a ``mean``, which never stands in for a percentile (agent draft 7.5,
M33); a probed path reports its ``median`` and ``sample-count``. An endpoint without a path is
``reachable false``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from agents.cnma.paths import PPM, PathKey, PathMetrics
from agents.cnma.report import Metadata, millis
from agents.cnma.topology import Topology
from controller.selection.units import Micros
from controller.types import CsciId, Json, Prefix

MODULE = "ietf-cats-agent-selection"
OPERATION = "advertise-forwarding-view"
_BYTES_PER_MBIT = 125_000
_FRACTION = Decimal("0.0001")


def fraction(ppm: int) -> str:
    """A loss in ppm as the agent model's ``fraction`` (four fraction digits)."""
    return str((Decimal(ppm) / PPM).quantize(_FRACTION, rounding=ROUND_HALF_UP))


def _latency(value: Micros, path: PathMetrics, samples: int | None) -> Json:
    if path.measured and samples:
        return {"median": millis(value), "sample-count": str(samples)}
    return {"mean": millis(value)}


def path_set_entry(
    path: PathMetrics, metadata: Metadata, samples: Mapping[PathKey, int] | None = None
) -> Json:
    """One path of a candidate's path-set."""
    count = (samples or {}).get(path.key)
    entry: Json = {
        "path-id": f"p:{path.ingress}/{path.egress}",
        "ingress": path.ingress,
        "egress": path.egress,
    }
    if path.bandwidth is not None:
        entry["egress-capacity"] = str(path.bandwidth * _BYTES_PER_MBIT)
    entry["delay"] = _latency(path.delay, path, count)
    entry["jitter"] = {"mean": millis(path.jitter)}
    entry["loss"] = fraction(path.loss_ppm)
    return entry | metadata.json(measured=path.measured)


def endpoint_entry(prefix: Prefix, cost: PathMetrics | None, metadata: Metadata) -> Json:
    """The endpoint-cost of one prefix from one instance."""
    entry: Json = {"prefix": prefix, "reachable": cost is not None}
    if cost is not None:
        entry["mean"] = millis(cost.delay)
    return entry | metadata.json(measured=False)


@dataclass(frozen=True, slots=True)
class ViewInputs:
    """What the forwarding view is made of: the topology, the NST and the endpoint costs."""

    topology: Topology
    table: Mapping[PathKey, PathMetrics]
    costs: Mapping[CsciId, Mapping[Prefix, PathMetrics | None]]
    samples: Mapping[PathKey, int] = field(default_factory=dict)


def forwarding_view(
    view: ViewInputs, source: str, sequence: int, metadata: Metadata
) -> Json | None:
    """The input of advertise-forwarding-view, or None without candidates (min-elements 1)."""
    candidates: list[Json] = []
    for candidate in view.topology.candidates:
        paths = [
            path_set_entry(view.table[key], metadata, view.samples)
            for key in sorted(view.table)
            if key[1] == candidate.egress
        ]
        endpoints = [
            endpoint_entry(prefix, cost, metadata)
            for prefix, cost in sorted(view.costs.get(candidate.csci_id, {}).items())
        ]
        entry: Json = {"csci-id": candidate.csci_id}
        if paths:
            entry["path-set"] = {"path": paths}
        if endpoints:
            entry["endpoint-cost"] = {"endpoint": endpoints}
        candidates.append(entry)
    if not candidates:
        return None
    return {"c-nma": source, "sequence-number": str(sequence), "candidate": candidates}
