"""The C-PS's record of one agent session: context, commitments, decisions, handoffs (6.4, 6.5).

A :class:`Session` is a frozen value replaced as a whole under the service lock; decision
records stay for the session's life and the retention after close (M39), each with the
descriptor members it was taken on. :class:`KeyScope` makes the reuse keys shown in state and
notifications tenant-scoped handles, unlinkable across tenants (15).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.agent_selection.handoff import Handoff
from controller.selection.mapping import (
    Commitment,
    DecisionRate,
    DecisionRecord,
    Descriptor,
    FailureReport,
    SessionAccount,
    SessionPosition,
)
from controller.selection.mapping.vocabulary import BudgetDimension, BudgetKind, Scope
from controller.selection.units import Timestamp
from controller.types import CommitmentId, CsciId, CsId, Json, Prefix, SessionId, TenantId

SECRET_FILE = "agent-selection-key-scope.secret"


@dataclass(frozen=True, slots=True)
class CommitmentRecord:
    """A commitment (6.5, P8) and the steering instruction it stands for; a repeated
    instruction extends it (same id) instead of making a second one."""

    commitment: Commitment
    instruction_id: str
    endpoints: tuple[Prefix, ...] = ()
    state: str = "active"
    superseded_by: CommitmentId | None = None
    record_id: int | None = None

    @property
    def commitment_id(self) -> CommitmentId:
        """The commitment's id."""
        return self.commitment.commitment_id

    @property
    def expires_at(self) -> Timestamp | None:
        """created-at plus the lifetime."""
        c = self.commitment
        return None if c.lifetime is None else c.created_at + c.lifetime

    def state_at(self, now: Timestamp) -> str:
        """The commitment's state at ``now``: an active one whose lifetime has elapsed is
        expired (its rule withdrawn, P8) until a decision renews it."""
        expires_at = self.expires_at
        if self.state == "active" and expires_at is not None and expires_at <= now:
            return "expired"
        return self.state

    def extended(self, step: int | None, now: Timestamp) -> CommitmentRecord:
        """The same commitment covering ``step`` too, its lifetime counted from ``now``."""
        c = self.commitment
        last = c.last_step if step is None else max(c.last_step or step, step)
        return replace(self, commitment=replace(c, last_step=last, created_at=now))


@dataclass(frozen=True, slots=True)
class Kept:
    """One decision record with the descriptor members it was taken on (M8, M39); its
    candidates' valuations kept as their numbers (``values``: compaction.valued's arrays)."""

    record: DecisionRecord
    descriptor: Json
    values: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Session:
    """One session as the C-PS knows it."""

    session_id: SessionId
    tenant: TenantId
    service_id: CsId
    admitted_at: Timestamp
    descriptor_doc: Json
    descriptor: Descriptor
    state: str = "admitted"
    last_activity: Timestamp = 0.0
    turn: int | None = None
    step: int | None = None
    step_in_flight: bool = False
    commitments: tuple[CommitmentRecord, ...] = ()
    current: CommitmentId | None = None
    records: tuple[Kept, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    account: SessionAccount = field(default_factory=SessionAccount)
    rate: DecisionRate = field(default_factory=DecisionRate)
    reservations: DecisionRate = field(default_factory=DecisionRate)
    queries: DecisionRate = field(default_factory=DecisionRate)
    last_move_at: Timestamp | None = None
    watching: tuple[CsciId, Timestamp] | None = None
    failure: FailureReport | None = None
    closed_at: Timestamp | None = None
    next_record: int = 1
    next_commitment: int = 1
    notified: frozenset[tuple[str, float]] = frozenset()
    refused: bool = False

    @property
    def open(self) -> bool:
        """Neither closed nor failed."""
        return self.state not in ("closed", "failed")

    def commitment(self, commitment_id: CommitmentId | None) -> CommitmentRecord | None:
        """A commitment of the session by id."""
        for entry in self.commitments:
            if entry.commitment_id == commitment_id:
                return entry
        return None

    @property
    def in_force(self) -> CommitmentRecord | None:
        """The commitment in force."""
        return self.commitment(self.current)

    def position(self, *, in_flight: bool | None = None) -> SessionPosition:
        """What a decision starts from (8.3)."""
        current = self.in_force
        return SessionPosition(
            None if current is None else current.commitment,
            self.last_move_at,
            self.step_in_flight if in_flight is None else in_flight,
            self.watching,
            self.account.line(BudgetDimension.TIME).consumed,
        )

    def handoff(self, handoff_id: str) -> Handoff | None:
        """A handoff of the session by id."""
        for entry in self.handoffs:
            if entry.handoff_id == handoff_id:
                return entry
        return None

    def with_handoff(self, handoff: Handoff) -> Session:
        """The session with ``handoff`` added or replaced."""
        others = tuple(h for h in self.handoffs if h.handoff_id != handoff.handoff_id)
        return replace(self, handoffs=(*others, handoff))

    def with_commitment(self, entry: CommitmentRecord) -> Session:
        """The session with ``entry`` added or replaced."""
        kept = tuple(c for c in self.commitments if c.commitment_id != entry.commitment_id)
        return replace(self, commitments=(*kept, entry))

    def with_record(self, kept: Kept, max_records: int | None) -> Session:
        """The session with one more decision record (the oldest dropped past the bound)."""
        records = (*self.records, kept)
        if max_records is not None and len(records) > max_records:
            records = records[len(records) - max_records :]
        return replace(self, records=records, next_record=kept.record.record_id + 1)


def session_limits(desc: Descriptor) -> Mapping[BudgetDimension, tuple[float, BudgetKind]]:
    """The session-scope budgets of the admission descriptor (P0, P11)."""
    return {b.dimension: (b.limit, b.kind) for b in desc.budgets if b.scope is Scope.SESSION}


class KeyScope:
    """Reuse keys as shown in state and notifications: HMAC-SHA256 of tenant and key under a
    server secret (15): stable within a tenant, unlinkable across tenants and to the key."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def in_state_dir(cls, state_dir: Path | None) -> KeyScope:
        """The scope whose secret is kept (created 0600 once) in ``state_dir``."""
        if state_dir is None:
            return cls(secrets.token_bytes(32))
        path = state_dir / SECRET_FILE
        if not path.exists():
            state_dir.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as sink:
                sink.write(secrets.token_bytes(32))
        return cls(path.read_bytes())

    def handle(self, tenant: str, key: str) -> str:
        """The scoped handle of ``key`` of ``tenant``."""
        message = tenant.encode() + b"\x00" + key.encode()
        return "rk-" + hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:32]

    def document(self, tenant: str, doc: Any) -> Any:
        """A copy of a members document with every ``reuse-key`` (and key list) scoped."""
        if isinstance(doc, list):
            return [self.document(tenant, item) for item in doc]
        if not isinstance(doc, dict):
            return doc
        scoped: Json = {}
        for name, value in doc.items():
            if name in ("reuse-key", "moved-key", "usable-key", "unusable-key", "released-key"):
                scoped[name] = (
                    [self.handle(tenant, str(v)) for v in value]
                    if isinstance(value, list)
                    else self.handle(tenant, str(value))
                )
            else:
                scoped[name] = self.document(tenant, value)
        return scoped
