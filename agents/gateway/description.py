"""The session description that ``catsctl gateway`` plays (agents/gateway/FORMAT.md).

A JSON document of sessions, their turns and steps: the descriptor content as RFC 7951 members
of ietf-cats-agent-selection's ``descriptor`` grouping, the accumulated working sets, the tool
calls with their expected and observed times, pauses, the observed costs to report (MSG-15) and
the decisions expected of the C-PS. :func:`load_description` reads the file strictly: an
unknown key, a wrong type, a duplicate id or a descriptor member that the structure already
gives is a :class:`~agents.common.config.ConfigError` naming ``FILE: KEY`` (for example
``episode.json: sessions[0].turns[0].steps[1].tool-calls[0].elapsed``). What the YANG schema
says of the descriptor content is checked by libyang when the requests are built
(:func:`agents.gateway.plan.check`), not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from agents.common.config import ConfigError, Table, load_document
from controller.types import Json

#: The descriptor members the structure gives (session, turn and step); not in descriptor content.
GIVEN = ("service-id", "session-id", "tenant", "turn-id", "step-id")
DIMENSIONS = ("time", "tokens", "cost", "energy")  # budget-dimension identities (M15)
OUTCOMES = ("keep", "hold-and-watch", "move")
SESSION_STATES = ("running", "paused", "closed", "failed")
_STEP_MAX = 2**32 - 1

__all__ = ["ConfigError", "Description", "load_description", "parse_description"]


@dataclass(frozen=True, slots=True)
class DecisionExpectation:
    """What one decision record of a stage must show; ``None`` leaves a part unchecked."""

    where: str
    selected: str | None = None
    outcome: str | None = None
    trigger: str | None = None
    fallback_rung: str | None = None
    degradation: tuple[str, ...] | None = None
    excluded: tuple[tuple[str, str], ...] | None = None  # (csci-id, reason), all of them
    handoff: bool | None = None


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the C-PS must have decided by the end of a stage (``--expect`` is always on)."""

    where: str
    decisions: tuple[DecisionExpectation, ...] | None = None  # the stage's new records, in order
    commitment: str | None = None  # csci-id of the commitment in force
    working_set: tuple[str, ...] | None = None  # reuse keys of the session's descriptor
    consumed: tuple[tuple[str, Decimal], ...] = ()  # accounting of the stage's step or turn
    state: str | None = None
    acted_on: bool | None = None  # whether a tool-call overrun led to a re-evaluation


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call of the step to an endpoint: expected and observed time, in milliseconds."""

    where: str
    endpoint: str
    expected: Decimal
    elapsed: Decimal
    remaining: Decimal | None = None
    name: str | None = None

    @property
    def overran(self) -> bool:
        """Still running past its expected time: reported as step-overrun (MSG-14)."""
        return self.elapsed > self.expected


@dataclass(frozen=True, slots=True)
class Cost:
    """Observed consumption per budget dimension (MSG-15), in the dimension's unit."""

    where: str
    amounts: tuple[tuple[str, Decimal], ...]
    currency: str | None = None


@dataclass(frozen=True, slots=True)
class Pause:
    """The session pauses after the step for ``seconds``, then wakes up (DP4, T3)."""

    where: str
    seconds: float = 0.0
    working_set: Json | None = None  # the accumulated working set announced at wake-up
    expect: Expectation | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """One step: an optional descriptor revision (P2), its boundary (P1) and what it did."""

    where: str
    step_id: int
    descriptor: Json | None = None  # members replacing those of the running descriptor
    working_set: Json | None = None  # the accumulated working set (``{"element": [...]}``)
    tool_calls: tuple[ToolCall, ...] = ()
    cost: Cost | None = None
    pause: Pause | None = None
    expect: Expectation | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: an optional turn-start boundary (DP2, T2), its steps, its turn cost."""

    where: str
    turn_id: int
    steps: tuple[Step, ...] = ()
    start: bool = False
    cost: Cost | None = None
    expect: Expectation | None = None  # checked after the turn start


@dataclass(frozen=True, slots=True)
class Admission:
    """P0: the first submit-descriptor, attributed to a turn and step when given."""

    where: str
    turn_id: int | None = None
    step_id: int | None = None
    expect: Expectation | None = None


@dataclass(frozen=True, slots=True)
class Close:
    """close-session (MSG-16); ``send`` false leaves the session open."""

    where: str
    send: bool = True
    reason: str = "completed"
    released_keys: tuple[str, ...] = ()
    expect: Expectation | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """One agent session of a tenant for a service."""

    where: str
    session_id: str
    tenant: str
    service_id: str
    descriptor: Json
    admission: Admission
    turns: tuple[Turn, ...]
    close: Close


@dataclass(frozen=True, slots=True)
class Description:
    """The whole document."""

    file: str
    sessions: tuple[Session, ...]
    text: str | None = None


def _object(table: Table, name: str) -> Json | None:
    """An RFC 7951 object member, left to libyang to check."""
    if name not in table.values:
        return None
    value = table.values[name]
    if not isinstance(value, Mapping):
        raise table.error(name, "expected an object (RFC 7951 members)")
    return dict(value)


def _identity(value: object) -> str:
    """An identity without its module prefix (``ietf-cats-agent-selection:keep`` is ``keep``)."""
    return str(value).rsplit(":", 1)[-1]


def _texts(table: Table, name: str) -> tuple[str, ...] | None:
    if name not in table.values:
        return None
    value = table.values[name]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise table.error(name, "expected an array of non-empty strings")
    return tuple(value)


def _descriptor(table: Table, name: str) -> Json | None:
    content = _object(table, name)
    if content is None:
        return None
    for member in GIVEN:
        if member in content:
            where = f"{table.key(name)}.{member}"
            message = "given by the session, turn and step of the description, not here"
            raise ConfigError.at(f"{table.file}: {where}", message)
    return content


def _decision(table: Table) -> DecisionExpectation:
    table.allow(
        "selected",
        "outcome",
        "trigger",
        "fallback-rung",
        "degradation-applied",
        "excluded",
        "handoff",
    )
    outcome = table.text("outcome", None)
    if outcome is not None and _identity(outcome) not in OUTCOMES:
        raise table.error("outcome", f"expected one of {', '.join(OUTCOMES)}, got {outcome!r}")
    excluded = None
    if "excluded" in table.values:
        found = table.table("excluded")
        excluded = tuple(
            (csci_id, _identity(found.text(csci_id))) for csci_id in sorted(found.values)
        )
    degradation = _texts(table, "degradation-applied")
    return DecisionExpectation(
        table.where,
        table.text("selected", None),
        None if outcome is None else _identity(outcome),
        None if "trigger" not in table.values else _identity(table.text("trigger")),
        None if "fallback-rung" not in table.values else _identity(table.text("fallback-rung")),
        None if degradation is None else tuple(_identity(d) for d in degradation),
        excluded,
        table.boolean("handoff", None),
    )


def _expect(table: Table, name: str = "expect") -> Expectation | None:
    if name not in table.values:
        return None
    found = table.table(name)
    found.allow("decisions", "commitment", "working-set", "consumed", "state", "acted-on")
    decisions = None
    if "decisions" in found.values:
        decisions = tuple(_decision(t) for t in found.tables("decisions"))
    consumed = found.table("consumed")
    consumed.allow(*DIMENSIONS)
    state = found.text("state", None)
    if state is not None and state not in SESSION_STATES:
        raise found.error("state", f"expected one of {', '.join(SESSION_STATES)}")
    return Expectation(
        found.where,
        decisions,
        found.text("commitment", None),
        _texts(found, "working-set"),
        tuple((d, consumed.decimal(d)) for d in DIMENSIONS if d in consumed.values),
        state,
        found.boolean("acted-on", None),
    )


def _cost(table: Table, name: str) -> Cost | None:
    if name not in table.values:
        return None
    found = table.table(name)
    found.allow(*DIMENSIONS, "currency")
    amounts = tuple((d, found.decimal(d)) for d in DIMENSIONS if d in found.values)
    if not amounts:
        raise table.error(name, f"expected at least one of {', '.join(DIMENSIONS)}")
    currency = found.text("currency", None)
    if currency is not None and "cost" not in found.values:
        raise found.error("currency", "a currency goes with a cost")
    return Cost(found.where, amounts, currency)


def _tool_call(table: Table) -> ToolCall:
    table.allow("endpoint", "name", "expected", "elapsed", "remaining")
    expected = table.decimal("expected")
    if expected <= 0:
        raise table.error("expected", "expected a positive number of milliseconds")
    return ToolCall(
        table.where,
        table.prefix("endpoint"),
        expected,
        table.decimal("elapsed"),
        table.decimal("remaining", None),
        table.text("name", None),
    )


def _pause(table: Table, name: str) -> Pause | None:
    if name not in table.values:
        return None
    found = table.table(name)
    found.allow("seconds", "working-set", "expect")
    return Pause(
        found.where,
        float(found.decimal("seconds", Decimal(0))),
        _object(found, "working-set"),
        _expect(found),
    )


def _step(table: Table) -> Step:
    table.allow("step-id", "descriptor", "working-set", "tool-calls", "cost", "pause", "expect")
    return Step(
        table.where,
        table.integer("step-id", maximum=_STEP_MAX),
        _descriptor(table, "descriptor"),
        _object(table, "working-set"),
        tuple(_tool_call(t) for t in table.tables("tool-calls")),
        _cost(table, "cost"),
        _pause(table, "pause"),
        _expect(table),
    )


def _turn(table: Table, seen_steps: set[int]) -> Turn:
    table.allow("turn-id", "start", "steps", "cost", "expect")
    steps = tuple(_step(t) for t in table.tables("steps"))
    for step, raw in zip(steps, table.tables("steps"), strict=True):
        if step.step_id in seen_steps:
            raise raw.error("step-id", f"step {step.step_id} is described twice in the session")
        seen_steps.add(step.step_id)
    start = table.boolean("start", default=False)
    if not steps and not start:
        raise table.error("steps", "a turn needs steps or start: true")
    return Turn(
        table.where,
        table.integer("turn-id", maximum=_STEP_MAX),
        steps,
        start,
        _cost(table, "cost"),
        _expect(table),
    )


def _admission(table: Table) -> Admission:
    found = table.table("admission")
    found.allow("turn-id", "step-id", "expect")
    return Admission(
        found.where,
        found.integer("turn-id", None, maximum=_STEP_MAX),
        found.integer("step-id", None, maximum=_STEP_MAX),
        _expect(found),
    )


def _close(table: Table) -> Close:
    if table.values.get("close") is False:
        return Close(table.key("close"), send=False)
    found = table.table("close")
    found.allow("reason", "released-key", "expect")
    reason = found.text("reason", "completed")
    if reason not in ("completed", "abandoned"):
        raise found.error("reason", f"expected completed or abandoned, got {reason!r}")
    released = _texts(found, "released-key") or ()
    return Close(
        found.where or table.key("close"),
        reason=reason,
        released_keys=released,
        expect=_expect(found),
    )


def _session(table: Table) -> Session:
    table.allow("session-id", "tenant", "service-id", "descriptor", "admission", "turns", "close")
    admission = _admission(table)
    seen_turns: set[int] = set()
    seen_steps = {admission.step_id} if admission.step_id is not None else set()
    turns: list[Turn] = []
    for raw in table.tables("turns"):
        turn = _turn(raw, seen_steps)
        if turn.turn_id in seen_turns:
            raise raw.error("turn-id", f"turn {turn.turn_id} is described twice in the session")
        seen_turns.add(turn.turn_id)
        turns.append(turn)
    return Session(
        table.where,
        table.text("session-id"),
        table.text("tenant"),
        table.text("service-id"),
        _descriptor(table, "descriptor") or {},
        admission,
        tuple(turns),
        _close(table),
    )


def parse_description(document: Mapping[str, Any], file: str) -> Description:
    """A description from its top-level object; ``file`` names it in every refusal."""
    top = Table(document, file)
    top.allow("description", "sessions")
    raws = top.tables("sessions", required=True)
    if not raws:
        raise top.error("sessions", "expected at least one session")
    sessions: list[Session] = []
    for raw in raws:
        session = _session(raw)
        if any(s.session_id == session.session_id for s in sessions):
            raise raw.error("session-id", f"session {session.session_id!r} is described twice")
        sessions.append(session)
    return Description(file, tuple(sessions), top.text("description", None))


def load_description(path: Path) -> Description:
    """Read and check a description file; :class:`ConfigError` names what is wrong."""
    return parse_description(load_document(path), str(path))
