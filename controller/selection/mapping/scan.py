"""Which elements of a working set one candidate holds usably (6.3, 7.5, MSG-6; M4, M20,
M23-M25): the scan behind the storage valuation of :mod:`storage`.

A copy reported present, fresh, attributed and in accelerator memory (or with a known
retrieval cost) is held; one reported unknown, stale, unattributed or held below accelerator
memory without a retrieval cost is doubtful; one reported absent is simply absent. A decision
scans each candidate once (:class:`Scans`), walking the smaller of the candidate's reported
copies and the working set.
"""

from __future__ import annotations

from controller.selection.mapping.descriptor import WorkingSetElement
from controller.selection.mapping.values import satisfies
from controller.selection.mapping.view import ResourceView, StateElementView
from controller.selection.mapping.vocabulary import (
    ACCELERATOR_CLASSES,
    NOT_RECOMPUTABLE,
    Presence,
    ResidencyTier,
    ValueCondition,
)
from controller.selection.mapping.workingset import Key, PreparedWorkingSet
from controller.selection.units import Timestamp


class Held:
    """What one candidate holds of a working set: the sums of its usable copies, their keys
    and the copies in doubt (read, never changed, once :func:`scan` made it).

    ``sums`` holds known amount and unknown count for state bytes, accelerator bytes, bytes
    that must be transferred, and tokens to reprocess, in that order.
    """

    __slots__ = ("doubtful", "keys", "retrieval", "sums")

    def __init__(self) -> None:
        self.sums = [0, 0, 0, 0, 0, 0, 0, 0]
        self.retrieval = 0.0
        self.keys: set[Key] = set()
        self.doubtful: dict[Key, ValueCondition] = {}


STATE, ACCEL, FORCED, TOKENS = 0, 2, 4, 6
NOTHING_HELD = Held()


def _hold(held: Held, key: Key, element: WorkingSetElement, seen: StateElementView) -> None:
    """Count a usable copy held at the candidate."""
    in_accelerator = seen.residency is ResidencyTier.ACCELERATOR_MEMORY
    if not in_accelerator:
        held.retrieval += seen.retrieval_cost or 0.0
    size = element.element_size if element.element_size is not None else seen.element_size
    held.keys.add(key)
    sums = held.sums
    cls = element.element_class
    for index, amount, counted in (
        (STATE, size, True),
        (ACCEL, size, in_accelerator and cls in ACCELERATOR_CLASSES),
        (FORCED, size, cls in NOT_RECOMPUTABLE),
        (TOKENS, element.tokens_to_reprocess, cls not in NOT_RECOMPUTABLE),
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


def scan(prepared: PreparedWorkingSet, view: ResourceView, now: Timestamp) -> Held:
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
        return NOTHING_HELD
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
        return NOTHING_HELD
    fresh = now <= view.state_fresh_until
    held = Held()
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
    held: Held, key: Key, element: WorkingSetElement, seen: StateElementView, size: int
) -> None:
    """Count a fresh present copy of known size (the common case of :func:`_scan`)."""
    sums = held.sums
    held.keys.add(key)
    sums[STATE] += size
    cls = element.element_class
    if seen.residency is ResidencyTier.ACCELERATOR_MEMORY:
        if cls in ACCELERATOR_CLASSES:
            sums[ACCEL] += size
    else:
        held.retrieval += seen.retrieval_cost or 0.0
    if cls in NOT_RECOMPUTABLE:
        sums[FORCED] += size
    elif element.tokens_to_reprocess is None:
        sums[TOKENS + 1] += 1
    else:
        sums[TOKENS] += element.tokens_to_reprocess


class Scans:
    """The copies every candidate holds of one working set at one instant, scanned once per
    decision: :func:`held_somewhere` scans the candidates to learn the sources, and each
    candidate's :func:`plan` reads the same scan. Lives for one decision (it keeps the views
    it scanned, so an identity is never reused while it is kept)."""

    __slots__ = ("_elements", "_found", "_now")

    def __init__(self, prepared: PreparedWorkingSet, now: Timestamp) -> None:
        self._elements = prepared.elements
        self._now = now
        self._found: dict[int, tuple[ResourceView, Held]] = {}

    def scan(self, prepared: PreparedWorkingSet, view: ResourceView, now: Timestamp) -> Held:
        """The scan of ``view`` (made once; another working set or instant is scanned anew)."""
        if prepared.elements is not self._elements or now != self._now:
            return scan(prepared, view, now)
        known = self._found.get(id(view))
        if known is not None and known[0] is view:
            return known[1]
        held = scan(prepared, view, now)
        self._found[id(view)] = (view, held)
        return held
