"""Session affinity bindings and re-routing on failure (service-metrics-op 6.2.4 Affinity
Requirement, 6.2.5 Re-routing on Failure).

A select-service with a ``session-id`` and ``session-affinity`` true binds the session to the
selected CSCI-ID; later requests for the session pass the bound CSCI-ID to the selection core,
which selects it directly while it is still in the Candidate_Set. When a CSCI-ID becomes
unreachable, its affined sessions are migrated (a new selection) or terminated. The binding
table is bounded twice: a binding not used for ``affinity-timeout`` expires, and at most
``max-affined-sessions`` are kept (the least recently used goes first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from controller.selection.joint import Outcome, ResultKind
from controller.selection.units import Timestamp
from controller.service_metrics.policy import MODULE
from controller.service_metrics.render import date_and_time
from controller.types import CsciId, CsId, DataPath, ForwarderId, Json, SessionId

EntryKey = tuple[CsId, CsciId]
AFFINED = DataPath(f"/{MODULE}:affined-sessions")


class Action(StrEnum):
    """cats-sm:affined-session-action (6.2.5 Re-routing on Failure, 3a and 3b)."""

    MIGRATE = "migrate"
    TERMINATE = "terminate"


@dataclass(frozen=True, slots=True)
class AffinitySettings:
    """The affinity leaves of ``selection-policy``; ``timeout`` 0: bindings never expire."""

    timeout: float = 120.0
    max_sessions: int = 100_000
    action: Action = Action.TERMINATE
    per_service: Mapping[str, Action] = field(default_factory=dict)

    def action_for(self, cs_id: str) -> Action:
        """The service policy's affined-session-action, else rerouting's (6.2.5)."""
        return self.per_service.get(cs_id, self.action)


def affinity_settings(policy: Mapping[str, Any]) -> AffinitySettings:
    """The :class:`AffinitySettings` of a validated ``selection-policy`` document."""
    rerouting = policy.get("rerouting", {})
    return AffinitySettings(
        timeout=float(policy.get("affinity-timeout", 120)),
        max_sessions=int(policy.get("max-affined-sessions", 100_000)),
        action=Action(rerouting.get("affined-session-action", "terminate")),
        per_service={
            str(item["cs-id"]): Action(item["affined-session-action"])
            for item in policy.get("service-policy", ())
            if "affined-session-action" in item
        },
    )


@dataclass(frozen=True, slots=True)
class Binding:
    """One ``affined-sessions/session``; ``override`` is the request's requirement override,
    kept so that a migration selects with the requirement the session asked for."""

    session_id: SessionId
    cs_id: CsId
    ingress: ForwarderId
    csci_id: CsciId
    egress: ForwarderId | None
    established: Timestamp
    last_used: Timestamp
    decision_id: str
    override: Json = field(default_factory=dict)
    migrations: int = 0

    @property
    def key(self) -> EntryKey:
        """The CST entry the session is bound to."""
        return self.cs_id, self.csci_id

    def expired(self, now: Timestamp, timeout: float) -> bool:
        """Unused for ``timeout`` seconds (never when ``timeout`` is 0)."""
        return timeout > 0 and now - self.last_used >= timeout


@dataclass(frozen=True, slots=True)
class Asked:
    """A non dry-run selection for an affined session: who, where, when, which decision."""

    session_id: SessionId
    cs_id: CsId
    ingress: ForwarderId
    now: Timestamp
    decision_id: str
    override: Json = field(default_factory=dict)


def bound(previous: Binding | None, asked: Asked, outcome: Outcome) -> Binding | None:
    """The binding after a selection for an affined session (6.2.4), or None when it bound
    nothing (no CSCI-ID selected: the old binding, if any, stays as it is).

    Selecting the bound CSCI-ID again refreshes ``last-used`` only; another CSCI-ID moves the
    binding (``decision-id`` follows it); a request for another CS-ID replaces it.
    """
    if outcome.result is not ResultKind.SELECTED or outcome.csci_id is None:
        return None
    if previous is not None and previous.cs_id == asked.cs_id:
        if previous.csci_id == outcome.csci_id:
            return replace(
                previous,
                ingress=asked.ingress,
                egress=outcome.egress,
                last_used=asked.now,
                override=asked.override,
            )
        return replace(
            previous,
            ingress=asked.ingress,
            csci_id=outcome.csci_id,
            egress=outcome.egress,
            last_used=asked.now,
            decision_id=asked.decision_id,
            override=asked.override,
        )
    return Binding(
        asked.session_id,
        asked.cs_id,
        asked.ingress,
        outcome.csci_id,
        outcome.egress,
        established=asked.now,
        last_used=asked.now,
        decision_id=asked.decision_id,
        override=asked.override,
    )


def migrated(
    binding: Binding, outcome: Outcome, decision_id: str, now: Timestamp
) -> Binding | None:
    """The binding moved by a re-routing selection (6.2.5 3a); None: nothing to migrate to."""
    if outcome.result is not ResultKind.SELECTED or outcome.csci_id is None:
        return None
    return replace(
        binding,
        csci_id=outcome.csci_id,
        egress=outcome.egress,
        last_used=now,
        decision_id=decision_id,
        migrations=binding.migrations + 1,
    )


class AffinityTable:
    """Bindings by session in least-recently-used order, indexed by CST entry.

    Not thread-safe: the owner's lock guards it.
    """

    def __init__(self) -> None:
        self._sessions: OrderedDict[SessionId, Binding] = OrderedDict()
        self._by_entry: dict[EntryKey, set[SessionId]] = {}

    def purge(self, now: Timestamp, timeout: float) -> None:
        """Drop the bindings unused for ``timeout`` (the oldest are first)."""
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if not oldest.expired(now, timeout):
                return
            self.remove(oldest.session_id)

    def get(self, session_id: SessionId) -> Binding | None:
        """The binding of a session, if any (call :meth:`purge` first)."""
        return self._sessions.get(session_id)

    def put(self, binding: Binding, max_sessions: int) -> None:
        """Insert or replace a binding as the most recently used; evict beyond the bound."""
        self.remove(binding.session_id)
        self._sessions[binding.session_id] = binding
        self._by_entry.setdefault(binding.key, set()).add(binding.session_id)
        while len(self._sessions) > max_sessions:
            self.remove(next(iter(self._sessions)))

    def remove(self, session_id: SessionId) -> Binding | None:
        """Withdraw a binding; returns it."""
        binding = self._sessions.pop(session_id, None)
        if binding is not None:
            sessions = self._by_entry[binding.key]
            sessions.discard(session_id)
            if not sessions:
                del self._by_entry[binding.key]
        return binding

    def bound_to(self, key: EntryKey) -> list[Binding]:
        """The bindings of the sessions affined to one CST entry."""
        return [self._sessions[s] for s in sorted(self._by_entry.get(key, ()))]

    def __iter__(self) -> Iterator[Binding]:
        return iter(self._sessions.values())

    def __len__(self) -> int:
        return len(self._sessions)


def binding_json(binding: Binding) -> Json:
    """One ``affined-sessions/session``."""
    values: Json = {
        "session-id": binding.session_id,
        "cs-id": binding.cs_id,
        "ingress": binding.ingress,
        "csci-id": binding.csci_id,
        "egress": binding.egress,
        "established": date_and_time(binding.established),
        "last-used": date_and_time(binding.last_used),
        "decision-id": binding.decision_id,
        "migrations": binding.migrations,
    }
    return {name: value for name, value in values.items() if value is not None}


def rerouted_json(
    binding: Binding, action: Action, new: Binding | None, decision_id: str | None
) -> Json:
    """The ``session-rerouted`` notification (6.2.5 Re-routing on Failure)."""
    values: Json = {
        "session-id": binding.session_id,
        "cs-id": binding.cs_id,
        "previous-csci-id": binding.csci_id,
        "action": action.value,
    }
    if new is not None:
        values["new-csci-id"] = new.csci_id
    if decision_id is not None:
        values["decision-id"] = decision_id
    return {f"{MODULE}:session-rerouted": values}
