"""P6, combination of the dimensions and tail awareness (8.1 P6, 7.5 banding, 14; M7, M21).

Both rules work on the per-dimension times of P5 (seconds at the objective's percentile).
What is paid once per change (state cost, artifact load) is spread over the H steps of the
look-ahead horizon, so a one-off cost is weighed against the remaining horizon and not
against one step (6.6, M37, M47); with H = 1 the suitability is minus the step's own time.

- weighted: suitability = -(w_f * forwarding + w_c * (computing + load / H)
  + w_s * state_cost / H); with unit weights, a difference of suitability is time saved per
  step over the horizon;
- lexicographic: the first dimension of the order decides, compared in its band; the next
  breaks ties, and so on. Its reported suitability is the unit-weight one.

The objective of the step, when it is a preference, is a bound on the outcome and not a term:
candidates whose step time meets it rank before those that miss it, on exact values, so
banding never hides a miss (M21). Constraints never reach this phase: they were filtered in P4.

Section 14: the dimensions a candidate's own C-SMA supplies (computing, storage) are, for an
untrusted candidate, valued no better than the best trusted candidate offers, so no single
untrusted dimension decides; a source discount d moves a value the share d of the way to
the worst value of the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from controller.selection.mapping.context import Band, Lexicographic, SelectionContext, Weighted
from controller.selection.mapping.prepared import Prepared
from controller.selection.mapping.valuation import Valuation
from controller.selection.mapping.vocabulary import Dimension, Element, ValueCondition
from controller.types import CsciId

_DIMENSIONS = (Dimension.FORWARDING, Dimension.COMPUTING, Dimension.STORAGE)
_INF = float("inf")


@dataclass(frozen=True, slots=True)
class Scored:
    """The suitability of one eligible candidate (P6 output), higher is better.

    ``times`` are the per-step dimension times used by the rule after the trust rules and
    the amortization (forwarding, computing, storage). ``step_time`` is this step's own time
    (forwarding + computing + artifact load + state cost), the value the objective bounds.
    ``meets_objective`` is None without an objective and when the tail is unverified (a
    mean stood for the percentile, M34).
    ``recurring`` is paid at every step, ``once`` at the change (M47).
    """

    valuation: Valuation
    times: tuple[float | None, float | None, float | None]
    suitability: float | None
    step_time: float | None
    recurring: float | None
    once: float | None
    band: int | None
    meets_objective: bool | None
    capped: tuple[Dimension, ...] = ()

    @property
    def csci_id(self) -> CsciId:
        """The candidate."""
        return self.valuation.csci_id


_F, _C, _L, _S = range(4)
_ADJUSTED = ((_C, Dimension.COMPUTING), (_L, Dimension.COMPUTING), (_S, Dimension.STORAGE))


def _raw(valuation: Valuation) -> list[float | None]:
    """forwarding, computing, artifact load, state cost: the four times of P5."""
    return [valuation.forwarding, valuation.computing, valuation.artifact_load, valuation.storage]


def _field_bounds(
    raw: Sequence[list[float | None]], trusted: Sequence[bool]
) -> tuple[list[float], list[float]]:
    """Per time: the best value among trusted candidates and the worst value overall."""
    best = [_INF] * 4
    worst = [0.0] * 4
    for values, is_trusted in zip(raw, trusted, strict=True):
        for index, value in enumerate(values):
            if value is None:
                continue
            worst[index] = max(worst[index], value)
            if is_trusted:
                best[index] = min(best[index], value)
    return best, worst


def _adjust(
    values: list[float | None],
    *,
    trusted: bool,
    discount: float,
    bounds: tuple[list[float], list[float]],
) -> tuple[Dimension, ...]:
    """Apply the source discount and the untrusted cap in place (14)."""
    best, worst = bounds
    capped: list[Dimension] = []
    for index, dimension in _ADJUSTED:
        value = values[index]
        if value is None:
            continue
        if discount:
            value = value + discount * (worst[index] - value)
        if not trusted and best[index] != _INF and value < best[index]:
            value = best[index]
            if dimension not in capped:
                capped.append(dimension)
        values[index] = value
    return tuple(capped)


def _weights(context: SelectionContext) -> tuple[float, float, float]:
    rule = context.combination
    if not isinstance(rule, Weighted):
        return 1.0, 1.0, 1.0
    weights = dict(rule.weights)
    return (
        weights.get(Dimension.FORWARDING, 0.0),
        weights.get(Dimension.COMPUTING, 0.0),
        weights.get(Dimension.STORAGE, 0.0),
    )


def combine(
    valuations: Sequence[Valuation],
    prepared: Prepared,
    trusted: Mapping[CsciId, bool],
    discounts: Mapping[CsciId, float],
) -> list[Scored]:
    """Suitability, band and objective bound of every eligible candidate (P6)."""
    context = prepared.context
    steps = float(prepared.horizon)
    objective = prepared.preference
    raw = [_raw(valuation) for valuation in valuations]
    trust = [trusted.get(valuation.csci_id, False) for valuation in valuations]
    bounds = _field_bounds(raw, trust)
    weights = _weights(context)
    band = context.bands.get(None)
    scored: list[Scored] = []
    w_f, w_c, w_s = weights
    any_trusted = any(trust)
    for valuation, values, is_trusted in zip(valuations, raw, trust, strict=True):
        discount = discounts.get(valuation.csci_id, 0.0) if discounts else 0.0
        capped: tuple[Dimension, ...] = ()
        if discount or (any_trusted and not is_trusted):
            capped = _adjust(values, trusted=is_trusted, discount=discount, bounds=bounds)
        forwarding, computing, load, state = values
        once = None if load is None or state is None else load + state
        recurring = None if forwarding is None or computing is None else forwarding + computing
        times = (
            forwarding,
            None if computing is None or load is None else computing + load / steps,
            None if state is None else state / steps,
        )
        suitability = step_time = None
        if recurring is not None and once is not None:
            step_time = recurring + once
            f, c, s = times
            suitability = -(w_f * (f or 0.0) + w_c * (c or 0.0) + w_s * (s or 0.0))
        meets = None
        if objective is not None and step_time is not None and _tail_known(valuation):
            meets = step_time <= objective.target
        scored.append(
            Scored(
                valuation,
                times,
                suitability,
                step_time,
                recurring,
                once,
                None if band is None or suitability is None else band.index(suitability),
                meets,
                capped,
            )
        )
    return scored


_TAIL_ELEMENTS = frozenset({Element.PATH_SET, Element.QUEUE_DELAY, Element.STEP_LATENCY})


def _tail_known(valuation: Valuation) -> bool:
    """Whether the step time compared with a tail objective rests on tail values: a mean
    standing for the percentile (or an unknown value) leaves the tail unverified (M34), so
    the objective is neither met nor missed; the record's qualified values name why."""
    return not any(
        q.condition in (ValueCondition.MEAN_FOR_TAIL, ValueCondition.UNKNOWN)
        and q.element in _TAIL_ELEMENTS
        for q in valuation.qualified
    )


def _banded(value: float | None, band: Band | None) -> float:
    if value is None:
        return _INF
    return float(band.index(value)) if band is not None else value


def rank(scored: list[Scored], context: SelectionContext, current: CsciId | None) -> list[Scored]:
    """Order eligible candidates, best first (P6).

    Known before unknown; meeting the objective bound before missing it; then the rule on
    banded values; within a band the commitment in force first (a value fluctuating inside
    a band does not move a session, 8.3); then exact values; then the CSCI-ID.
    """
    rule = context.combination
    bands = context.bands

    def key(entry: Scored) -> tuple[object, ...]:
        unknown = entry.suitability is None
        misses = entry.meets_objective is False
        if isinstance(rule, Lexicographic):
            order = [_DIMENSIONS.index(d) for d in rule.order]
            banded = tuple(_banded(entry.times[i], bands.get(_DIMENSIONS[i])) for i in order)
        else:
            suit = entry.suitability
            banded = (
                (-float(entry.band),)
                if entry.band is not None
                else (_INF if suit is None else -suit,)
            )
        exact = _INF if entry.suitability is None else -entry.suitability
        return (unknown, misses, banded, entry.csci_id != current, exact, entry.csci_id)

    return sorted(scored, key=key)
