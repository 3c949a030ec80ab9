"""The working set of one decision, summed once before any candidate is looked at (5.2, 6.3).

Elements are keyed by (tenant, reuse key): reuse keys are scoped to their tenant (15). The
sums (state bytes, accelerator bytes, bytes that must be transferred, tokens to reprocess)
let a candidate be valued by subtracting what it holds; :meth:`with_sources` adds what the
decision learns from every candidate: which elements can be transferred from some holder and
which ones their holders keep in place (M28).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from controller.selection.mapping.descriptor import Descriptor, WorkingSetElement
from controller.selection.mapping.vocabulary import ACCELERATOR_CLASSES, NOT_RECOMPUTABLE, Role
from controller.types import ReuseKey, TenantId

Key = tuple[TenantId, ReuseKey]
"""A working-set element: its reuse key under its tenant."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over a set of elements with the count of elements whose amount is unknown."""

    known: int = 0
    unknown: int = 0

    def add(self, amount: int | None) -> Totals:
        if amount is None:
            return Totals(self.known, self.unknown + 1)
        return Totals(self.known + amount, self.unknown)


@dataclass(frozen=True, slots=True)
class PreparedWorkingSet:
    """The working set of a descriptor, summed once per decision (5.2, 6.3)."""

    tenant: TenantId
    elements: Mapping[Key, WorkingSetElement]
    state_bytes: Totals
    accelerator_bytes: Totals
    forced_bytes: Totals
    tokens: Totals
    pinned: tuple[WorkingSetElement, ...]
    required: tuple[WorkingSetElement, ...]
    sourceless: frozenset[Key] = frozenset()
    sourceless_bytes: Totals = Totals()
    sourceless_tokens: Totals = Totals()
    sourceless_forced: int = 0

    def with_sources(
        self, movable: AbstractSet[Key], pinned: AbstractSet[Key] = frozenset()
    ) -> PreparedWorkingSet:
        """The same working set knowing where its elements are held: an element no holder
        lets move (``movable``) has no source to transfer from and can only be recomputed,
        and one its holders keep in place (``pinned``) stays where it is (M28)."""
        missing = frozenset(self.elements.keys() - movable)
        size, tokens, forced = Totals(), Totals(), 0
        for key in missing:
            element = self.elements[key]
            size = size.add(element.element_size)
            if element.element_class in NOT_RECOMPUTABLE:
                forced += 1
            else:
                tokens = tokens.add(element.tokens_to_reprocess)
        kept = tuple(
            self.elements[key]
            for key in pinned
            if key in self.elements and self.elements[key] not in self.pinned
        )
        return replace(
            self,
            pinned=self.pinned + kept,
            sourceless=missing,
            sourceless_bytes=size,
            sourceless_tokens=tokens,
            sourceless_forced=forced,
        )

    @classmethod
    def of(cls, descriptor: Descriptor) -> PreparedWorkingSet:
        """Prepare the working set of ``descriptor``; reuse keys are scoped to its tenant."""
        state, accel, forced, tokens = Totals(), Totals(), Totals(), Totals()
        elements: dict[Key, WorkingSetElement] = {}
        for element in descriptor.working_set:
            elements[(descriptor.tenant, element.reuse_key)] = element
            state = state.add(element.element_size)
            if element.element_class in ACCELERATOR_CLASSES:
                accel = accel.add(element.element_size)
            if element.element_class in NOT_RECOMPUTABLE:
                forced = forced.add(element.element_size)
            else:
                tokens = tokens.add(element.tokens_to_reprocess)
        return cls(
            descriptor.tenant,
            elements,
            state,
            accel,
            forced,
            tokens,
            tuple(e for e in descriptor.working_set if not e.may_move),
            tuple(e for e in descriptor.working_set if e.role is Role.CONSTRAINT),
        )
