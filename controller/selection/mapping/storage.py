"""The storage dimension, element by element (6.3, 6.7; M4, M5, M22-M24, M49).

For every candidate: which elements of the working set it holds usably (fresh, attributed,
in accelerator memory or with a known retrieval cost), what is missing, and the cost of
making the missing part usable: transfer (from a candidate that holds it) or recompute, by
the relations of :mod:`relations`. An element no candidate holds can only be recomputed.
The working set is prepared once per decision (:class:`PreparedWorkingSet`); a candidate then
costs one dictionary probe per element it might hold, so a decision over many candidates
does not allocate per element.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.selection.mapping.descriptor import WorkingSetElement
from controller.selection.mapping.findings import Exclusion, QualifiedValue, reported, unusable
from controller.selection.mapping.relations import recompute_time, state_cost, transfer_time
from controller.selection.mapping.values import satisfies
from controller.selection.mapping.view import ResourceView, StateElementView
from controller.selection.mapping.vocabulary import (
    ACCELERATOR_CLASSES,
    NOT_RECOMPUTABLE,
    Element,
    ElementClass,
    Presence,
    Reason,
    ResidencyTier,
    ValueCondition,
)
from controller.selection.mapping.workingset import Key, PreparedWorkingSet, Totals
from controller.selection.units import Timestamp
from controller.types import CsciId


@dataclass(frozen=True, slots=True)
class Link:
    """The transfer and rebuild rates towards one candidate: 'bw', 'rtt', 'prefill_rate'."""

    bw: float | None
    rtt: float | None
    prefill_rate: float | None
    transfer_open: bool = True


@dataclass(frozen=True, slots=True)
class StoragePlan:
    """The storage valuation of one candidate (P5) and the exclusions it implies (P4).

    ``needed_accelerator_bytes`` is the part of the working set that still has to be placed in
    accelerator memory (None: unknown); it is the 'state_bytes' of the state_fits relation.
    ``state_cost`` includes the retrieval of elements held below accelerator memory.
    """

    missing_bytes: int | None
    needed_accelerator_bytes: int | None
    transfer_time: float | None
    recompute_time: float | None
    retrieval: float
    state_cost: float | None
    held: int
    exclusions: tuple[Exclusion, ...] = ()
    qualified: tuple[QualifiedValue, ...] = ()


class _Held:
    """Working sums while one candidate's state is scanned (local to :func:`plan`).

    ``sums`` holds known amount and unknown count for state bytes, accelerator bytes, bytes
    that must be transferred, and tokens to reprocess, in that order.
    """

    __slots__ = ("doubtful", "keys", "retrieval", "sums")

    def __init__(self) -> None:
        self.sums = [0, 0, 0, 0, 0, 0, 0, 0]
        self.retrieval = 0.0
        self.keys: set[Key] = set()
        self.doubtful: dict[Key, ValueCondition] = {}


_STATE, _ACCEL, _FORCED, _TOKENS = 0, 2, 4, 6
_NOTHING_HELD = _Held()


def _hold(held: _Held, key: Key, element: WorkingSetElement, seen: StateElementView) -> None:
    """Count a usable copy held at the candidate."""
    in_accelerator = seen.residency is ResidencyTier.ACCELERATOR_MEMORY
    if not in_accelerator:
        held.retrieval += seen.retrieval_cost or 0.0
    size = element.element_size if element.element_size is not None else seen.element_size
    held.keys.add(key)
    sums = held.sums
    cls = element.element_class
    for index, amount, counted in (
        (_STATE, size, True),
        (_ACCEL, size, in_accelerator and cls in ACCELERATOR_CLASSES),
        (_FORCED, size, cls in NOT_RECOMPUTABLE),
        (_TOKENS, element.tokens_to_reprocess, cls not in NOT_RECOMPUTABLE),
    ):
        if not counted:
            continue
        if amount is None:
            sums[index + 1] += 1
        else:
            sums[index] += amount


def _doubt(seen: StateElementView, condition: ValueCondition | None) -> ValueCondition | None:
    """Why a reported copy cannot be counted as held, None when it can (7.5, MSG-6).

    Unknown presence is unknown, never absent; a present copy that is stale, older than the
    element's freshness need, or held below accelerator memory with no retrieval cost is
    doubtful; an absent copy is simply absent.
    """
    if seen.presence is Presence.UNKNOWN:
        return ValueCondition.UNKNOWN
    if seen.presence is Presence.ABSENT:
        return None
    if not satisfies(condition):
        return condition
    if seen.residency is not ResidencyTier.ACCELERATOR_MEMORY and seen.retrieval_cost is None:
        return ValueCondition.UNKNOWN
    return None


def _condition(
    seen: StateElementView, element: WorkingSetElement, now: Timestamp, *, fresh: bool
) -> ValueCondition | None:
    """The condition of a reported copy: its report's freshness and the element's age need."""
    max_age = element.max_age
    if max_age is None:
        return None if fresh else seen.meta.condition(now)
    age = seen.state_age
    if age is not None and age > max_age:
        return ValueCondition.STALE
    return seen.meta.condition(now, max_age)


def _scan(prepared: PreparedWorkingSet, view: ResourceView, now: Timestamp) -> _Held:
    """Match the working set against the copies the candidate reports, walking the smaller
    side: the copies reported present or unknown (the view sets them apart once, so the
    copies reported absent cost nothing per decision), or, when the candidate holds more
    than the step needs (a KV cache of thousands of blocks), one probe per element.

    A fresh present copy of an element without its own age need, whose retrieval cost is
    known (zero in accelerator memory), is counted inline; anything else goes through
    :func:`_doubt` and :func:`_hold`.
    """
    state = view.state
    if not state:
        return _NOTHING_HELD
    elements = prepared.elements
    if len(elements) < len(state):
        found = state.get
        matched = [
            (key, element, seen)
            for key, element in elements.items()
            if (seen := found(key)) is not None and seen.presence is not Presence.ABSENT
        ]
    else:
        reported = view.reported  # an absent copy is simply absent (whatever its freshness)
        matched = [
            (key, element, seen)
            for key, seen in reported
            if (element := elements.get(key)) is not None
        ]
    if not matched:
        return _NOTHING_HELD
    fresh = now <= view.state_fresh_until
    held = _Held()
    for key, element, seen in matched:
        size = element.element_size
        in_accelerator = seen.residency is ResidencyTier.ACCELERATOR_MEMORY
        if not (
            fresh
            and element.max_age is None
            and size is not None
            and seen.presence is Presence.PRESENT
            and (in_accelerator or seen.retrieval_cost is not None)
        ):
            doubt = _doubt(seen, _condition(seen, element, now, fresh=fresh))
            if doubt is not None:
                held.doubtful[key] = doubt
            elif seen.presence is Presence.PRESENT:
                _hold(held, key, element, seen)
            continue
        _count(held, key, element, seen, size)
    return held


def _count(
    held: _Held, key: Key, element: WorkingSetElement, seen: StateElementView, size: int
) -> None:
    """Count a fresh present copy of known size (the common case of :func:`_scan`)."""
    sums = held.sums
    held.keys.add(key)
    sums[_STATE] += size
    cls = element.element_class
    if seen.residency is ResidencyTier.ACCELERATOR_MEMORY:
        if cls in ACCELERATOR_CLASSES:
            sums[_ACCEL] += size
    else:
        held.retrieval += seen.retrieval_cost or 0.0
    if cls in NOT_RECOMPUTABLE:
        sums[_FORCED] += size
    elif element.tokens_to_reprocess is None:
        sums[_TOKENS + 1] += 1
    else:
        sums[_TOKENS] += element.tokens_to_reprocess


class Scans:
    """The copies every candidate holds of one working set at one instant, scanned once per
    decision: :func:`held_somewhere` scans the candidates to learn the sources, and each
    candidate's :func:`plan` reads the same scan. Lives for one decision (it keeps the views
    it scanned, so an identity is never reused while it is kept)."""

    __slots__ = ("_elements", "_found", "_now")

    def __init__(self, prepared: PreparedWorkingSet, now: Timestamp) -> None:
        self._elements = prepared.elements
        self._now = now
        self._found: dict[int, tuple[ResourceView, _Held]] = {}

    def scan(self, prepared: PreparedWorkingSet, view: ResourceView, now: Timestamp) -> _Held:
        """The scan of ``view`` (made once; another working set or instant is scanned anew)."""
        if prepared.elements is not self._elements or now != self._now:
            return _scan(prepared, view, now)
        known = self._found.get(id(view))
        if known is not None and known[0] is view:
            return known[1]
        held = _scan(prepared, view, now)
        self._found[id(view)] = (view, held)
        return held

    def plan(
        self, csci_id: CsciId, prepared: PreparedWorkingSet, view: ResourceView, link: Link
    ) -> StoragePlan:
        """:func:`plan` at the decision's instant, from its scan of ``view``."""
        return _valued(csci_id, prepared, self.scan(prepared, view, self._now), link)


def _missing(total: Totals, held: _Held, index: int) -> int | None:
    known, unknown = held.sums[index], held.sums[index + 1]
    if total.unknown - unknown > 0:
        return None
    return total.known - known


def _rebuildable(element: WorkingSetElement, link: Link, *, sourced: bool) -> bool:
    """Whether an absent element can be made usable at the candidate (6.3, M5)."""
    movable = sourced and element.may_move and link.transfer_open
    if movable and link.bw and link.rtt is not None:
        return element.element_size is not None
    return (
        element.element_class not in NOT_RECOMPUTABLE
        and element.tokens_to_reprocess is not None
        and bool(link.prefill_rate)
    )


def _element_exclusions(
    csci_id: CsciId, prepared: PreparedWorkingSet, held: _Held, link: Link
) -> list[Exclusion]:
    """M28 (an element that may not move stays) and required presence (6.3, M4).

    A required element that cannot be re-obtained (a tool result: the tool is not
    idempotent, 6.3) whose presence the candidate reports unknown or doubtful excludes the
    candidate with that condition: unknown is not absent (MSG-6) and cannot satisfy a
    constraint (7.5, M20), so it is not valued with a hypothetical transfer either.
    """
    found: list[Exclusion] = []
    for element in prepared.pinned:
        key = (prepared.tenant, element.reuse_key)
        if key not in held.keys:
            found.append(
                Exclusion(
                    csci_id,
                    Reason.ELEMENT_MAY_NOT_MOVE,
                    Element.WORKING_SET,
                    "element held at candidate",
                    "present (may-move false)",
                    held.doubtful.get(key, Presence.ABSENT).value,
                    element.reuse_key,
                    f"{element.element_class.value} may not move to {csci_id}",
                )
            )
    for element in prepared.required:
        key = (prepared.tenant, element.reuse_key)
        sourced = key not in prepared.sourceless
        if key in held.keys or not element.may_move:
            continue
        unsure = key in held.doubtful and element.element_class in NOT_RECOMPUTABLE
        if not unsure and _rebuildable(element, link, sourced=sourced):
            continue
        if key in held.doubtful:
            found.append(
                unusable(
                    csci_id,
                    Element.PRESENCE,
                    held.doubtful[key],
                    ("presence", "present"),
                    element.reuse_key,
                )
            )
            continue
        reason = (
            Reason.REQUIRED_TOOL_RESULT_ABSENT
            if element.element_class is ElementClass.TOOL_RESULT
            else Reason.REQUIRED_ELEMENT_ABSENT
        )
        window = "" if link.transfer_open else ", transfer window closed"
        found.append(
            Exclusion(
                csci_id,
                reason if link.transfer_open else Reason.TRANSFER_WINDOW_CLOSED,
                Element.WORKING_SET,
                "presence or transfer or recompute",
                "usable",
                Presence.ABSENT.value,
                element.reuse_key,
                f"required {element.element_class.value} cannot be made usable{window}",
            )
        )
    return found


def _costs(
    prepared: PreparedWorkingSet, held: _Held, link: Link
) -> tuple[int | None, float | None, float | None]:
    """Missing bytes, and the time to make the missing part usable by transfer (elements no
    candidate holds being recomputed) or by recompute (tool results being transferred)."""
    missing = _missing(prepared.state_bytes, held, _STATE)
    if missing == 0:
        return 0, 0.0, 0.0
    bw, rtt, prefill = link.bw, link.rtt, link.prefill_rate
    movable = link.transfer_open and bool(bw) and rtt is not None
    transfer: float | None = None
    rebuild_sourceless: float | None = 0.0
    if prepared.sourceless:
        tokens = prepared.sourceless_tokens
        rebuild_sourceless = None
        if not prepared.sourceless_forced and not tokens.unknown and prefill:
            rebuild_sourceless = recompute_time(tokens.known, prefill)
    if (
        missing is not None
        and movable
        and bw
        and rtt is not None
        and rebuild_sourceless is not None
    ):
        moved = missing - prepared.sourceless_bytes.known
        transfer = (transfer_time(moved, bw, rtt) if moved > 0 else 0.0) + rebuild_sourceless
    recompute: float | None = None
    tokens_missing = _missing(prepared.tokens, held, _TOKENS)
    if tokens_missing is not None and prefill:
        recompute = recompute_time(tokens_missing, prefill)
        forced = _missing(prepared.forced_bytes, held, _FORCED)
        if forced:
            if prepared.sourceless_forced or not movable or not bw or rtt is None:
                recompute = None
            else:
                recompute += transfer_time(forced, bw, rtt)
    return missing, transfer, recompute


def plan(
    csci_id: CsciId, prepared: PreparedWorkingSet, view: ResourceView, link: Link, now: Timestamp
) -> StoragePlan:
    """Value the storage dimension of one candidate element by element (P5, 6.8 step 2)."""
    return _valued(csci_id, prepared, _scan(prepared, view, now), link)


def _valued(csci_id: CsciId, prepared: PreparedWorkingSet, held: _Held, link: Link) -> StoragePlan:
    """The storage plan of a candidate whose state was scanned into ``held``."""
    missing_bytes, transfer, recompute = _costs(prepared, held, link)
    cost = state_cost(transfer, recompute)
    exclusions: tuple[Exclusion, ...] = ()
    if prepared.pinned or prepared.required:
        exclusions = tuple(_element_exclusions(csci_id, prepared, held, link))
    qualified: tuple[QualifiedValue, ...] = ()
    if held.doubtful:
        qualified = tuple(
            reported(csci_id, Element.PRESENCE, condition, key[1])
            for key, condition in held.doubtful.items()
        )
    return StoragePlan(
        missing_bytes,
        _missing(prepared.accelerator_bytes, held, _ACCEL),
        transfer,
        recompute,
        held.retrieval,
        None if cost is None else cost + held.retrieval,
        len(held.keys),
        exclusions,
        qualified,
    )


def held_somewhere(
    prepared: PreparedWorkingSet,
    views: Iterable[ResourceView],
    now: Timestamp,
    scans: Scans | None = None,
) -> tuple[set[Key], set[Key]]:
    """The working-set elements some candidate holds usably, split into those a transfer can
    take from a holder and those every holder keeps in place ('stay-in-place' governance of
    the copy, M28). Stops once every element has a holder that lets it move. The scans are
    kept in ``scans`` for the candidates' plans."""
    scan = _scan if scans is None else scans.scan
    movable: set[Key] = set()
    pinned: set[Key] = set()
    wanted = len(prepared.elements)
    for view in views:
        if not view.state:
            continue
        for key in scan(prepared, view, now).keys:
            if view.state[key].may_not_move:
                pinned.add(key)
            else:
                movable.add(key)
        if len(movable) == wanted:
            break
    return movable, pinned - movable
