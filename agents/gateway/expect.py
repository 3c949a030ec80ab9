"""Whether the C-PS decided what a stage's ``expect`` says (pure).

The decisions of a stage are the decision records (agent-selection-mapping 6.5, M39) that the
C-PS added to the session while the stage ran, read from the session's state; the rest is the
session's state at the end of the stage. Each unmet expectation is one :class:`Miss` naming
the key of the description it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from agents.gateway.description import DecisionExpectation, Expectation
from controller.types import Json


@dataclass(frozen=True, slots=True)
class Miss:
    """One expectation that did not hold."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def local(value: object) -> str:
    """An identity value without its module prefix."""
    return str(value).rsplit(":", 1)[-1]


def _decision(expected: DecisionExpectation, record: Json) -> list[Miss]:
    misses: list[Miss] = []
    where = expected.where

    def differs(key: str, wanted: object, found: object) -> None:
        if wanted is not None and wanted != found:
            misses.append(Miss(f"{where}.{key}", f"expected {wanted}, got {found}"))

    differs("selected", expected.selected, record.get("selected"))
    differs("outcome", expected.outcome, _local_or_none(record.get("outcome")))
    differs("trigger", expected.trigger, _local_or_none(record.get("trigger")))
    differs("fallback-rung", expected.fallback_rung, _local_or_none(record.get("fallback-rung")))
    if expected.degradation is not None:
        found = sorted(local(d) for d in record.get("degradation-applied", ()))
        differs("degradation-applied", sorted(expected.degradation), found)
    if expected.excluded is not None:
        pairs = sorted((str(e["csci-id"]), local(e["reason"])) for e in record.get("exclusion", ()))
        differs("excluded", sorted(expected.excluded), pairs)
    differs("handoff", expected.handoff, "handoff-id" in record)
    return misses


def _local_or_none(value: object) -> str | None:
    return None if value is None else local(value)


def _commitment(session: Json) -> str | None:
    current = session.get("current-commitment")
    for entry in session.get("commitment", ()):
        if entry.get("commitment-id") == current:
            return str(entry["csci-id"])
    return None


def _same(announced: Json, shown: Json) -> bool:
    """Whether a shown element is the announced one: every member but the key agrees."""
    return all(
        name == "reuse-key" or (name in shown and local(shown[name]) == local(value))
        for name, value in announced.items()
        if not isinstance(value, dict | list)
    )


def named_keys(shown: Iterable[Json], announced: Sequence[Json]) -> list[str]:
    """The reuse keys of the working set the C-PS shows. The C-PS shows each key as a handle
    scoped to the tenant (section 15), so an element is named by the one announced element
    it agrees with in every other member; an element matching none or several keeps its
    handle."""
    found = []
    for element in shown:
        matches = [a for a in announced if _same(a, element)]
        key = matches[0]["reuse-key"] if len(matches) == 1 else element.get("reuse-key")
        found.append(str(key))
    return sorted(found)


def _working_set(session: Json, announced: Sequence[Json]) -> list[str]:
    elements = session.get("descriptor", {}).get("working-set", {}).get("element", ())
    return named_keys(elements, announced)


def account(session: Json, turn_id: int | None, step_id: int | None) -> list[Json]:
    """The budget entries of the session, or of its turn, or of its step."""
    level: Any = session.get("accounting", {})
    for name, key in (("turn", turn_id), ("step", step_id)):
        if key is None:
            break
        level = next((e for e in level.get(name, ()) if e.get(f"{name}-id") == key), {})
    return list(level.get("budget", ()))


def _amount(text: object) -> Decimal | None:
    try:
        return Decimal(str(text))
    except InvalidOperation:
        return None


@dataclass(frozen=True, slots=True)
class Observed:
    """What a stage saw: the records it added, the session after it, the replies it got, its
    attribution and the working set the gateway had announced last (its elements)."""

    records: tuple[Json, ...]
    session: Json | None
    replies: tuple[tuple[str, Json], ...] = ()
    turn_id: int | None = None
    step_id: int | None = None
    announced: tuple[Json, ...] = ()


def _decisions(expect: Expectation, records: tuple[Json, ...]) -> list[Miss]:
    if expect.decisions is None:
        return []
    found: list[Miss] = []
    if len(records) != len(expect.decisions):
        message = f"expected {len(expect.decisions)} decisions, the C-PS recorded {len(records)}"
        found.append(Miss(f"{expect.where}.decisions", message))
    for wanted, record in zip(expect.decisions, records, strict=False):
        found.extend(_decision(wanted, record))
    return found


def _acted_on(expect: Expectation, replies: tuple[tuple[str, Json], ...]) -> list[Miss]:
    if expect.acted_on is None:
        return []
    notices = [reply for operation, reply in replies if operation == "invalidation-notice"]
    if not notices:
        return [Miss(f"{expect.where}.acted-on", "no tool call overran in this stage")]
    acted = any(reply.get("acted-on") for reply in notices)
    if acted != expect.acted_on:
        return [Miss(f"{expect.where}.acted-on", f"expected {expect.acted_on}, got {acted}")]
    return []


def _session(expect: Expectation, seen: Observed) -> list[Miss]:
    session = seen.session
    if session is None:
        asked = (expect.commitment, expect.working_set, expect.state)
        if any(v is not None for v in asked) or expect.consumed:
            return [Miss(expect.where, "the C-PS has no such session")]
        return []
    found: list[Miss] = []
    keys = None if expect.working_set is None else sorted(expect.working_set)
    checks: list[tuple[str, object, object]] = [
        ("commitment", expect.commitment, _commitment(session)),
        ("working-set", keys, _working_set(session, seen.announced)),
        ("state", expect.state, session.get("state")),
    ]
    for key, wanted, got in checks:
        if wanted is not None and wanted != got:
            found.append(Miss(f"{expect.where}.{key}", f"expected {wanted}, got {got}"))
    entries = account(session, seen.turn_id, seen.step_id)
    budget = {local(e["dimension"]): _amount(e.get("consumed")) for e in entries}
    for dimension, amount in expect.consumed:
        got_amount = budget.get(dimension)
        if got_amount != amount:
            shown = "nothing" if got_amount is None else got_amount
            message = f"expected {amount} consumed, the C-PS shows {shown}"
            found.append(Miss(f"{expect.where}.consumed.{dimension}", message))
    return found


def misses(expect: Expectation, seen: Observed) -> list[Miss]:
    """Every part of ``expect`` that what the stage saw contradicts."""
    return [
        *_decisions(expect, seen.records),
        *_acted_on(expect, seen.replies),
        *_session(expect, seen),
    ]
