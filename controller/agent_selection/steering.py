"""P8's steering instruction (MSG-10) handed to the forwarders: the seam and the mapping.

A commitment in force of an open session is one :class:`SteeringInstruction`
(:func:`instructions`); :class:`Instructed` remembers what was handed per session, so that
handing the same instruction again changes nothing and the differences are exactly: a new
commitment (admission, a handoff commit) to instruct, a revised one (an extension to another
step, a renewed lifetime) to instruct again under the same commitment id, and one that is
superseded, expired, closed or failed to withdraw. The C-PS hands them through the
:class:`Steering` seam (controller.app adapts the southbound's SteeringService to it), which
says where each rule went (:class:`Placement`): one not placed as intended (no egress known,
no forwarder yet) stays to be handed again, as a hand-off that failed does. :func:`steering_rule`
is the ``steering/rule`` entry of ietf-cats-steering the forwarders get.

Mapping (agent draft 8.1 P8, 9.1 MSG-10; ietf-cats-steering ``rule``):

- ``commitment-id``: the commitment's id, the key that makes the instruction idempotent;
- ``cs-id``: the session's service; ``match``: the session id and the commitment's steps
  (``first-step``, and ``last-step`` when the commitment names one), so only the traffic the
  C-TC attributes to those steps of the session follows the rule;
- ``csci-id``: the committed instance, reached through ``egress-forwarder`` (the egress the
  C-PS attaches the instance to), normal CATS steering (the default ``fallback-mode``);
- ``installed-at``, ``lifetime`` (whole seconds, rounded up) and ``expires-at`` (created-at
  plus the lifetime, the earlier of the two): the expiry is absolute, so a repeated instruction
  never extends it; a renewal is a revised instruction with a later installed-at;
- ``endpoint``: the endpoints the step is expected to contact; ``decision-id``: the decision
  record ``<session-id>/<record-id>`` (fitted to 128 characters, :mod:`.ids`);
  ``supersedes``: the commitment this one replaced;
- defaults are left out (``fallback-mode`` normal, ``priority``) and instants are written in
  their canonical form, so the rule equals what the forwarder returns in get-config.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from controller.agent_selection import ids
from controller.agent_selection.sessions import CommitmentRecord, Session
from controller.agent_selection.values import date_and_time
from controller.selection.units import Timestamp
from controller.types import CommitmentId, CsciId, CsId, Json, Prefix, SessionId

#: ietf-cats-types commitment-id is 1..128 characters; a longer id cannot be a rule key.
MAX_COMMITMENT_ID = ids.MAX_ID


@dataclass(frozen=True, slots=True)
class SteeringInstruction:
    """MSG-10 of one commitment: the candidate, the lifetime, the endpoints (9.1)."""

    commitment_id: CommitmentId
    instruction_id: str
    session_id: SessionId
    cs_id: CsId
    csci_id: CsciId
    first_step: int
    last_step: int | None
    installed_at: Timestamp
    lifetime: float
    endpoints: tuple[Prefix, ...] = ()
    decision_id: str | None = None
    supersedes: CommitmentId | None = None

    @property
    def expires_at(self) -> Timestamp:
        """installed-at plus the lifetime: when the commitment ends unless renewed."""
        return self.installed_at + self.lifetime


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an instruction's rule is intended now: the forwarders, and, when it is not placed
    as intended, what is missing (no egress known for the instance, no forwarder handling the
    service yet). An incomplete placement is handed again at each sweep until it is complete."""

    forwarders: frozenset[str] = frozenset()
    pending: str | None = None

    @property
    def complete(self) -> bool:
        """Nothing is missing."""
        return self.pending is None


class Steering(Protocol):
    """Where the C-PS hands its steering instructions: the forwarders concerned (MSG-10)."""

    def instruct(self, instruction: SteeringInstruction) -> Placement:
        """Install, or revise, the commitment's rule at the forwarders concerned, and say where
        it went; handing the same instruction twice is the same as handing it once."""
        ...

    def withdraw(self, instruction: SteeringInstruction) -> None:
        """Remove the commitment's rule from every forwarder holding it; idempotent."""
        ...


class NoSteering:
    """The seam when no forwarder is steered (tests, a C-PS without a southbound)."""

    def instruct(self, instruction: SteeringInstruction) -> Placement:
        """Nothing to install, so nothing missing."""
        del instruction
        return Placement()

    def withdraw(self, instruction: SteeringInstruction) -> None:
        """Nothing to remove."""
        del instruction


def _instruction(session: Session, entry: CommitmentRecord) -> SteeringInstruction | None:
    c = entry.commitment
    if c.lifetime is None or len(c.commitment_id) > MAX_COMMITMENT_ID:
        return None  # MSG-10 carries the lifetime; the rule is keyed by a valid id
    replaced = next(
        (o.commitment_id for o in session.commitments if o.superseded_by == c.commitment_id),
        None,
    )
    record = entry.record_id
    decision = None if record is None else ids.decision_id(session.session_id, record)
    return SteeringInstruction(
        c.commitment_id,
        entry.instruction_id,
        session.session_id,
        session.service_id,
        c.csci_id,
        c.first_step,
        c.last_step,
        c.created_at,
        c.lifetime,
        entry.endpoints,
        decision,
        replaced,
    )


def instructions(session: Session, now: Timestamp) -> dict[CommitmentId, SteeringInstruction]:
    """What the forwarders should hold for a session now: the commitment in force, while the
    session is open and the commitment active and unexpired (P8); nothing otherwise."""
    entry = session.in_force
    if not session.open or entry is None or entry.state != "active":
        return {}
    found = _instruction(session, entry)
    if found is None or found.expires_at <= now:
        return {}
    return {found.commitment_id: found}


@dataclass(frozen=True, slots=True)
class Handing:
    """The differences to hand: instruct these first, then withdraw those (so that the traffic
    always has a rule: the new one supersedes the old before the old one goes)."""

    instruct: tuple[SteeringInstruction, ...] = ()
    withdraw: tuple[SteeringInstruction, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.instruct or self.withdraw)


class Instructed:
    """What the forwarders were told, per session, and whether each rule was placed as
    intended (a pending one is handed again, and withdrawn like any other); thread-safe."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._by_session: dict[SessionId, dict[CommitmentId, tuple[SteeringInstruction, bool]]] = {}

    def differences(
        self, session_id: SessionId, wanted: Mapping[CommitmentId, SteeringInstruction]
    ) -> Handing:
        """What changed between what was handed for the session and ``wanted``: a pending
        instruction is handed again."""
        with self._guard:
            before = dict(self._by_session.get(session_id, {}))
        new = tuple(i for key, i in wanted.items() if before.get(key) != (i, True))
        gone = tuple(i for key, (i, _) in before.items() if key not in wanted)
        return Handing(new, gone)

    def record(
        self,
        session_id: SessionId,
        handed: Mapping[CommitmentId, SteeringInstruction],
        pending: Collection[CommitmentId] = (),
    ) -> None:
        """Remember ``handed`` as what the forwarders were told for the session, the
        ``pending`` instructions as not placed as intended."""
        with self._guard:
            if handed:
                self._by_session[session_id] = {
                    key: (i, key not in pending) for key, i in handed.items()
                }
            else:
                self._by_session.pop(session_id, None)

    def expired(self, now: Timestamp) -> list[SessionId]:
        """The sessions holding an instruction whose commitment has expired by ``now``."""
        with self._guard:
            return [
                session_id
                for session_id, handed in self._by_session.items()
                if any(i.expires_at <= now for i, _ in handed.values())
            ]

    def handed(self) -> dict[CommitmentId, SteeringInstruction]:
        """Every instruction in force (placed or pending), by commitment id."""
        with self._guard:
            return {k: i for handed in self._by_session.values() for k, (i, _) in handed.items()}


def steering_rule(instruction: SteeringInstruction, egress: str) -> Json:
    """The ``steering/rule`` entry (ietf-cats-steering, RFC 7951 members) of an instruction,
    with the egress forwarder through which its instance is reached."""
    i = instruction
    match: Json = {"session-id": i.session_id, "first-step": i.first_step}
    if i.last_step is not None:
        match["last-step"] = i.last_step
    rule: Json = {
        "commitment-id": i.commitment_id,
        "cs-id": i.cs_id,
        "match": match,
        "csci-id": i.csci_id,
        "egress-forwarder": egress,
        "installed-at": instant(i.installed_at),
        "lifetime": max(1, math.ceil(i.lifetime)),
        "expires-at": instant(i.expires_at),
    }
    if i.endpoints:
        rule["endpoint"] = [{"prefix": prefix} for prefix in _unique(i.endpoints)]
    if i.decision_id is not None:
        rule["decision-id"] = i.decision_id
    if i.supersedes is not None:
        rule["supersedes"] = i.supersedes
    return rule


def instant(epoch: Timestamp) -> str:
    """``yang:date-and-time`` in the canonical form libyang gives it (``+00:00``, not ``Z``),
    so that the rule a forwarder returns in get-config equals the rule intended and its
    reconciliation finds nothing to repair."""
    return date_and_time(epoch).removesuffix("Z") + "+00:00"


def _unique(prefixes: Iterable[Prefix]) -> list[Prefix]:
    return list(dict.fromkeys(prefixes))
