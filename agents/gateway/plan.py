"""The exchanges a description asks for, in order, as RFC 7951 inputs of the RPCs (pure).

Per session (agent-selection-mapping 8.1, 9.1): P0 admission with ``submit-descriptor``
(MSG-1); per turn an optional ``turn-start`` boundary (MSG-2, T2); per step a revised
descriptor when the step revises it (P2, MSG-1 at T1), the ``step-start`` boundary with the
accumulated working set (P1, MSG-2), one ``invalidation-notice`` step-overrun for each tool call
still running past its expected time (MSG-14, the tail event of P10), and the observed cost
(``accounting-feedback``, MSG-15); a pause and the wake-up (MSG-2, T3); at the end
``close-session`` (MSG-16). :func:`check` builds every request and has libyang validate it as
RPC input before anything is sent, naming the place in the description of each refusal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

from agents.common.clock import date_and_time
from agents.gateway.description import (
    ConfigError,
    Cost,
    Description,
    Expectation,
    Session,
    Step,
    ToolCall,
)
from controller.errors import ErrorItem, ErrorType
from controller.model import InstanceKind, ModelError, Schema
from controller.types import Json

AS = "ietf-cats-agent-selection"
GATEWAY = "ietf-cats-types:agent-gateway"  # the reporter of MSG-14 and MSG-15


@dataclass(frozen=True, slots=True)
class Exchange:
    """One RPC to send; ``stamped`` puts the time it is sent in ``at``."""

    where: str
    operation: str
    members: Json
    stamped: bool = True

    def input(self, now: float) -> Json:
        """The RPC input at ``now`` (Unix seconds)."""
        if not self.stamped:
            return dict(self.members)
        return {**self.members, "at": date_and_time(now)}


@dataclass(frozen=True, slots=True)
class Stage:
    """The exchanges of one point of the session whose decisions are reported together."""

    where: str
    label: str
    exchanges: tuple[Exchange, ...]
    expect: Expectation | None = None
    turn_id: int | None = None
    step_id: int | None = None
    sleep: float = 0.0  # seconds the session stays paused after the exchanges
    closing: bool = False  # runs even after an exchange of the session failed
    announced: tuple[Json, ...] = ()  # the working set's elements as last announced


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """The stages of one session."""

    session_id: str
    tenant: str
    service_id: str
    stages: tuple[Stage, ...]


def _number(value: Decimal) -> str:
    """A decimal64 leaf value."""
    return format(value.normalize(), "f")


def _attribution(session_id: str, turn_id: int | None, step_id: int | None) -> Json:
    found: Json = {"session-id": session_id}
    if turn_id is not None:
        found["turn-id"] = turn_id
    if step_id is not None:
        found["step-id"] = step_id
    return found


def _descriptor(session: Session, content: Json, turn_id: int | None, step_id: int | None) -> Json:
    """The whole descriptor: the keys the structure gives, then the content."""
    return {
        "service-id": session.service_id,
        "tenant": session.tenant,
        **_attribution(session.session_id, turn_id, step_id),
        **content,
    }


def _overrun(session_id: str, turn_id: int, step_id: int, call: ToolCall) -> Exchange:
    """MSG-14 step-overrun: the call still running at ``elapsed`` against ``expected``."""
    progress: Json = {
        "elapsed": _number(call.elapsed),
        "expected": _number(call.expected),
        "endpoint": call.endpoint,
    }
    if call.remaining is not None:
        progress["remaining"] = _number(call.remaining)
    name = call.name or call.endpoint
    observed = (
        f"{name} still running after {_number(call.elapsed)} ms, "
        f"expected {_number(call.expected)} ms"
    )
    members = {
        "reporter": GATEWAY,
        "condition": f"{AS}:step-overrun",
        **_attribution(session_id, turn_id, step_id),
        "observed": observed,
        "step-progress": progress,
    }
    return Exchange(call.where, "invalidation-notice", members)


def _accounting(session_id: str, turn_id: int, step_id: int | None, cost: Cost) -> Exchange:
    """MSG-15 for a step, or for the turn when ``step_id`` is None; a retry is charged once."""
    report_id = f"{session_id}/turn-{turn_id}" + ("" if step_id is None else f"/step-{step_id}")
    consumption: list[Json] = []
    for dimension, amount in cost.amounts:
        entry: Json = {"dimension": f"{AS}:{dimension}", "amount": _number(amount)}
        if dimension == "cost" and cost.currency is not None:
            entry["currency"] = cost.currency
        consumption.append(entry)
    scope = "turn" if step_id is None else "step"
    members = {
        "report-id": report_id,
        "reporter": GATEWAY,
        "scope": scope,
        "attribution": _attribution(session_id, turn_id, step_id),
        "consumption": consumption,
    }
    return Exchange(cost.where, "accounting-feedback", members)


def _boundary(where: str, boundary: str, at: Json, working: Json | None = None) -> Exchange:
    """step-boundary (MSG-2) attributed to ``at`` (session, turn, step)."""
    members = {**at, "boundary": boundary}
    if working is not None:
        members["working-set"] = working
    return Exchange(where, "step-boundary", members)


def _elements(descriptor: Json) -> tuple[Json, ...]:
    working = descriptor.get("working-set")
    return tuple(working.get("element", ())) if isinstance(working, dict) else ()


def _step(session: Session, turn_id: int, step: Step, running: Json) -> tuple[list[Stage], Json]:
    """The stage of a step (and of its pause and wake-up); the running descriptor after it."""
    sid = session.session_id
    exchanges: list[Exchange] = []
    if step.descriptor is not None:
        running = {**running, **step.descriptor}
    if step.working_set is not None:
        running = {**running, "working-set": step.working_set}
    if step.descriptor is not None:
        members = {
            "descriptor": _descriptor(session, running, turn_id, step.step_id),
            "trigger": f"{AS}:t1-step-boundary",
        }
        where = f"{step.where}.descriptor"
        exchanges.append(Exchange(where, "submit-descriptor", members, stamped=False))
    at = _attribution(sid, turn_id, step.step_id)
    where = step.where if step.working_set is None else f"{step.where}.working-set"
    exchanges.append(_boundary(where, "step-start", at, step.working_set))
    exchanges.extend(_overrun(sid, turn_id, step.step_id, c) for c in step.tool_calls if c.overran)
    if step.cost is not None:
        exchanges.append(_accounting(sid, turn_id, step.step_id, step.cost))
    label = f"turn {turn_id} step {step.step_id}"
    stages = [
        Stage(
            step.where,
            label,
            tuple(exchanges),
            step.expect,
            turn_id,
            step.step_id,
            announced=_elements(running),
        )
    ]
    pause = step.pause
    if pause is not None:
        paused = _boundary(pause.where, "pause", at)
        stages.append(
            Stage(
                pause.where,
                f"pause after step {step.step_id}",
                (paused,),
                None,
                turn_id,
                step.step_id,
                sleep=pause.seconds,
            )
        )
        woken = _boundary(pause.where, "wake-up", at, pause.working_set)
        if pause.working_set is not None:
            running = {**running, "working-set": pause.working_set}
        stages.append(
            Stage(
                pause.where,
                f"wake-up after step {step.step_id}",
                (woken,),
                pause.expect,
                turn_id,
                step.step_id,
                announced=_elements(running),
            )
        )
    return stages, running


def session_plan(session: Session) -> SessionPlan:
    """The stages of one session, in the order they are played."""
    admission = session.admission
    first = {
        "descriptor": _descriptor(session, session.descriptor, admission.turn_id, admission.step_id)
    }
    label = "admission" + "".join(
        f" {name} {value}"
        for name, value in (("turn", admission.turn_id), ("step", admission.step_id))
        if value is not None
    )
    submit = Exchange(f"{session.where}.descriptor", "submit-descriptor", first, stamped=False)
    stages = [
        Stage(
            admission.where,
            label,
            (submit,),
            admission.expect,
            admission.turn_id,
            admission.step_id,
            announced=_elements(session.descriptor),
        )
    ]
    running = session.descriptor
    for turn in session.turns:
        if turn.start:
            at = _attribution(session.session_id, turn.turn_id, None)
            start = _boundary(turn.where, "turn-start", at)
            stages.append(
                Stage(
                    turn.where,
                    f"turn {turn.turn_id} start",
                    (start,),
                    turn.expect,
                    turn.turn_id,
                    announced=_elements(running),
                )
            )
        for step in turn.steps:
            found, running = _step(session, turn.turn_id, step, running)
            stages.extend(found)
        if turn.cost is not None:
            charged = _accounting(session.session_id, turn.turn_id, None, turn.cost)
            stages.append(
                Stage(turn.cost.where, f"turn {turn.turn_id} end", (charged,), turn_id=turn.turn_id)
            )
    close = session.close
    if close.send:
        members: Json = {"session-id": session.session_id, "reason": close.reason}
        if close.released_keys:
            members["released-key"] = list(close.released_keys)
        exchange = Exchange(close.where, "close-session", members)
        stages.append(
            Stage(
                close.where,
                f"close ({close.reason})",
                (exchange,),
                close.expect,
                closing=True,
                announced=_elements(running),
            )
        )
    return SessionPlan(session.session_id, session.tenant, session.service_id, tuple(stages))


def plan(description: Description) -> tuple[SessionPlan, ...]:
    """Every session's stages."""
    return tuple(session_plan(s) for s in description.sessions)


def check(plans: tuple[SessionPlan, ...], schema: Schema, now: float, file: str) -> None:
    """Validate every request as RPC input of ietf-cats-agent-selection (libyang); raise one
    :class:`ConfigError` with an item per refusal, each naming ``FILE: KEY`` and the schema
    path."""
    items: list[ErrorItem] = []
    for session in plans:
        for stage in session.stages:
            for exchange in stage.exchanges:
                document = json.dumps({f"{AS}:{exchange.operation}": exchange.input(now)})
                try:
                    schema.validate(document, InstanceKind.RPC)
                except ModelError as exc:
                    items.extend(
                        ErrorItem(
                            ErrorType.APPLICATION,
                            item.tag,
                            f"{exchange.operation}: {item}",
                            f"{file}: {exchange.where}",
                            item.app_tag,
                        )
                        for item in exc.items
                    )
    if items:
        raise ConfigError(*items)
