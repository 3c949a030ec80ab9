"""P5, per-dimension valuation of one candidate (8.1 P5, 6.6, 6.8 steps 2-3; M3, M33, M47, M49).

Each dimension is valued as the time it contributes to the step, at the percentile and over
the window of the step's objective:

- forwarding: the path delay plus every endpoint the step will contact; sequential calls add
  up and parallel calls are bounded by the slowest, which bounds the turn (M3);
- computing: wait plus comparable-step latency (wait_p95 + step_latency_p95 of 6.7), plus the
  artifact load where the weights are not resident;
- storage: state_cost, element by element (:mod:`storage`), as the example of 8.4 values it.

Transfer, recompute and artifact load are paid once per change of instance; forwarding and
computing are paid per step (M47): :class:`combination.Scored` keeps the two apart for P6/P7.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.selection.mapping.findings import QualifiedValue, reported
from controller.selection.mapping.prepared import Prepared
from controller.selection.mapping.scan import Scans, scan
from controller.selection.mapping.storage import Link, StoragePlan, valued
from controller.selection.mapping.values import Distribution, Metadata, Reading, satisfies
from controller.selection.mapping.view import Candidate, PathView
from controller.selection.mapping.vocabulary import Element, ValueCondition
from controller.selection.units import Timestamp
from controller.types import CsciId

MEDIAN = 50.0


@dataclass(frozen=True, slots=True)
class Measures:
    """What P4 and P5 read from one candidate's view (one object per candidate).

    ``wait`` and ``latency`` are the computing readings at the objective's rank and window;
    ``artifact_load`` is weights / load rate + registry RTT when the weights are not resident
    (0 when they are, None when unknown).
    """

    reader: Reader
    path: PathView | None
    link: Link
    path_delay: Reading
    endpoints: Reading
    slowest_call: float | None
    wait: Reading
    latency: Reading
    artifact_load: float | None
    storage: StoragePlan


@dataclass(frozen=True, slots=True)
class Valuation:
    """One valuation per dimension of an eligible candidate, in seconds (P5 output).

    A dimension that could not be valued at all is None (unknown, P5 'on failure').
    """

    csci_id: CsciId
    forwarding: float | None
    computing: float | None
    storage: float | None
    artifact_load: float | None
    slowest_call: float | None
    measures: Measures
    qualified: tuple[QualifiedValue, ...] = ()


class Reader:
    """Reads the values of one candidate's view at ``now`` for one decision.

    When the whole view is fresh, attributed and asserted (:meth:`ResourceView.fresh`) the
    per-value metadata checks are skipped: their answer is known to be 'usable'.
    """

    __slots__ = ("fresh", "max_age", "now", "rank", "window")

    def __init__(self, candidate: Candidate, prepared: Prepared, now: Timestamp) -> None:
        self.now = now
        self.max_age = prepared.max_age
        self.fresh = candidate.view.fresh(now, prepared.max_age)
        self.rank = prepared.rank
        self.window = prepared.window

    def condition(self, meta: Metadata | None) -> ValueCondition | None:
        """The condition of a group's value (unknown when the group is absent)."""
        if meta is None:
            return ValueCondition.UNKNOWN
        return None if self.fresh else meta.condition(self.now, self.max_age)

    def at(self, distribution: Distribution | None) -> Reading:
        """A distribution at the rank and over the window of the step's objective (M33)."""
        if distribution is None:
            return _UNKNOWN
        return distribution.at(
            self.rank, self.window, self.now, fresh=self.fresh, max_age=self.max_age
        )


_UNKNOWN = Reading(None, ValueCondition.UNKNOWN)


def _best_path(
    candidate: Candidate, prepared: Prepared, reader: Reader
) -> tuple[PathView | None, Reading]:
    """The path with the lowest delay at the rank, among the paths locality permits."""
    permitted = prepared.permitted_regions
    best: PathView | None = None
    best_delay = _UNKNOWN
    for path in candidate.view.paths:
        if permitted is not None and (not path.regions or not path.regions <= permitted):
            continue
        delay = reader.at(path.delay)
        if best is None or (
            delay.value is not None and (best_delay.value is None or delay.value < best_delay.value)
        ):
            best, best_delay = path, delay
    return best, best_delay


def _endpoints(candidate: Candidate, prepared: Prepared, reader: Reader) -> tuple[Reading, float]:
    """Sequential calls add up, parallel calls are bounded by the slowest (M3)."""
    sequential = 0.0
    slowest = 0.0
    parallel = 0.0
    condition: ValueCondition | None = None
    costs = candidate.view.endpoints
    rank, window, now, fresh = reader.rank, reader.window, reader.now, reader.fresh
    for endpoint in prepared.endpoints:
        seen = costs.get(endpoint.prefix)
        cost = None if seen is None else seen.cost
        if cost is None:
            return _UNKNOWN, 0.0
        reading = cost.at(rank, window, now, fresh=fresh, max_age=reader.max_age)
        value = reading.value
        if value is None:
            return _UNKNOWN, 0.0
        if reading.condition is not None and not satisfies(reading.condition):
            condition = reading.condition
        slowest = max(slowest, value)
        if not endpoint.parallel:
            sequential += value * endpoint.expected_calls
        elif value > parallel:
            parallel = value
    return Reading(sequential + parallel, condition), slowest


def _artifact_load(candidate: Candidate) -> float | None:
    artifact = candidate.view.artifact
    if artifact is None:
        return None
    if artifact.resident:
        return 0.0
    if artifact.weights_bytes is None or not artifact.load_rate:
        return None
    return artifact.weights_bytes / artifact.load_rate + (artifact.registry_rtt or 0.0)


def measure(
    candidate: Candidate, prepared: Prepared, now: Timestamp, scans: Scans | None = None
) -> Measures:
    """Read every quantity P4 and P5 need from one candidate's view (its state from the
    decision's ``scans`` when given)."""
    view = candidate.view
    reader = Reader(candidate, prepared, now)
    path, path_delay = _best_path(candidate, prepared, reader)
    rtt: float | None = None
    bw: float | None = None
    if path is not None and satisfies(reader.condition(path.meta)):
        bw = path.egress_capacity
        if path.delay is not None:
            rtt = path.delay.ranks.get(MEDIAN)
    rate = view.token_rate
    prefill = None
    if rate is not None and satisfies(reader.condition(rate.meta)):
        prefill = rate.prefill_rate
    window = view.transfer_window
    link = Link(bw, rtt, prefill, window is None or window.open_at(now))
    endpoints, slowest = _endpoints(candidate, prepared, reader)
    working = prepared.working_set
    held = scan(working, view, now) if scans is None else scans.scan(working, view, now)
    return Measures(
        reader,
        path,
        link,
        path_delay,
        endpoints,
        slowest if endpoints.value is not None else None,
        reader.at(view.queue_delay),
        reader.at(view.step_latency),
        _artifact_load(candidate),
        valued(candidate.csci_id, working, held, link),
    )


def _note(found: list[QualifiedValue], csci_id: CsciId, element: Element, reading: Reading) -> None:
    if reading.condition is not None and reading.value is not None:
        found.append(reported(csci_id, element, reading.condition))


def value(
    candidate: Candidate, measures: Measures, estimates: Sequence[QualifiedValue] = ()
) -> Valuation:
    """P5 for an eligible candidate; values used in a preference are reported (7.5), after the
    estimates that satisfied a constraint (``estimates``, from P4)."""
    csci_id = candidate.csci_id
    path_delay, endpoints = measures.path_delay, measures.endpoints
    wait, latency = measures.wait, measures.latency
    qualified = measures.storage.qualified
    if estimates:
        qualified = (*estimates, *qualified)
    if (
        path_delay.condition is not None
        or endpoints.condition is not None
        or wait.condition is not None
        or latency.condition is not None
    ):
        found: list[QualifiedValue] = list(qualified)
        _note(found, csci_id, Element.PATH_SET, path_delay)
        _note(found, csci_id, Element.ENDPOINT_COST, endpoints)
        _note(found, csci_id, Element.QUEUE_DELAY, wait)
        _note(found, csci_id, Element.STEP_LATENCY, latency)
        qualified = tuple(found)
    forwarding = None
    if path_delay.value is not None and endpoints.value is not None:
        forwarding = path_delay.value + endpoints.value
    computing = None
    if wait.value is not None and latency.value is not None:
        computing = wait.value + latency.value
    return Valuation(
        csci_id,
        forwarding,
        computing,
        measures.storage.state_cost,
        measures.artifact_load,
        measures.slowest_call,
        measures,
        qualified,
    )
