"""A candidate's resource view as its C-SMA reported it plus the C-PS's own selections since
(update-control/dispatch-accounting, :mod:`controller.selection.dispatch`; agent draft 7.2,
7.4, 7.5).

The waiting work (``queue_delay``) grows by the work of each selection not yet reported and
drains at one second per second since the view was collected; the working sets of those
selections are held at the candidate. Both are estimates (confidence ``estimated``): they may
be used in a preference, and a decision that used them says so (7.5).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence, ValuesView
from dataclasses import replace
from typing import Any

from controller.selection.dispatch import Dispatch, DispatchAccounting, Key, backlog, pending_keys
from controller.selection.mapping.values import Distribution, Metadata
from controller.selection.mapping.view import ResourceView, StateElementView
from controller.selection.mapping.vocabulary import Confidence, Presence, ResidencyTier
from controller.selection.units import Timestamp
from controller.types import SourceId


class HeldWith(Mapping[Key, StateElementView]):
    """A state view with more elements held: ``base`` plus ``keys``, each held as ``added``
    unless ``base`` holds it already."""

    __slots__ = ("_added", "_base", "_extra", "_keys")

    def __init__(
        self, base: Mapping[Key, StateElementView], keys: frozenset[Key], added: StateElementView
    ) -> None:
        self._base = base
        self._keys = keys
        self._added = added
        self._extra: frozenset[Key] | None = None

    def _only_added(self) -> frozenset[Key]:
        if self._extra is None:
            self._extra = frozenset(itertools.filterfalse(self._base.__contains__, self._keys))
        return self._extra

    def __getitem__(self, key: Key) -> StateElementView:
        found = self._base.get(key)
        if found is not None:
            return found
        if key in self._keys:
            return self._added
        raise KeyError(key)

    def get(self, key: Key, default: Any = None) -> Any:
        """The element view held for ``key``, else ``default`` (without raising)."""
        found = self._base.get(key)
        if found is not None:
            return found
        return self._added if key in self._keys else default

    def __contains__(self, key: object) -> bool:
        return key in self._base or key in self._keys

    def __iter__(self) -> Iterator[Key]:
        yield from self._base
        yield from self._only_added()

    def __len__(self) -> int:
        return len(self._base) + len(self._only_added())

    def values(self) -> ValuesView[StateElementView]:
        """The element views of the base and the one shared view of the added elements."""
        shared: dict[object, StateElementView] = {id(v): v for v in self._base.values()}
        if self._only_added():
            shared[id(self._added)] = self._added
        return shared.values()


def _estimated(meta: Metadata) -> Metadata:
    return replace(meta, confidence=Confidence.ESTIMATED)


def _queue(
    queue: Distribution,
    dispatches: Sequence[Dispatch],
    now: Timestamp,
    settings: DispatchAccounting,
) -> Distribution:
    collected = queue.meta.collected_at
    since = now if collected is None else collected
    ranks = tuple(
        (rank, backlog(value, since, dispatches, now, settings))
        for rank, value in queue.percentiles
    )
    mean = None if queue.mean is None else backlog(queue.mean, since, dispatches, now, settings)
    return replace(queue, percentiles=ranks, meta=_estimated(queue.meta), mean=mean)


def accounted_view(
    view: ResourceView,
    queued: Sequence[Dispatch],
    holding: Sequence[Dispatch],
    now: Timestamp,
    settings: DispatchAccounting,
) -> ResourceView:
    """``view`` with the selections not yet reported counted in: the work of ``queued``
    (those after the view's load was collected) and the elements of ``holding`` (those whose
    work was not done when its state was collected); unchanged when disabled or both are
    empty."""
    if not settings.enabled or not (queued or holding):
        return view
    queue = view.queue_delay
    if queue is not None and queued:
        queue = _queue(queue, queued, now, settings)
    keys = pending_keys(holding)
    state = view.state
    if keys:
        meta = Metadata(now, math.inf, SourceId("c-ps"), Confidence.ESTIMATED)
        added = StateElementView(Presence.PRESENT, meta, ResidencyTier.ACCELERATOR_MEMORY)
        state = HeldWith(view.state, keys, added)
    return replace(view, queue_delay=queue, state=state)
