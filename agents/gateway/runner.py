"""Play the stages of the sessions against the C-PS and report what it decided.

For each exchange: send it, print one line, read the session and print every decision record
the C-PS added (agent-selection-mapping 6.5, M39). At the end of a stage, check its ``expect``.
A failed exchange ends its session (only its close is still sent, once admitted); the other
sessions go on. Every request and reply, reads included, is kept in :class:`Journal` for
``--log``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from agents.common.clock import date_and_time
from agents.gateway import render
from agents.gateway.client import AS, Cps, session_path
from agents.gateway.expect import Observed, misses
from agents.gateway.plan import Exchange, SessionPlan, Stage
from controller.errors import CatsError
from controller.types import Json

INDENT = "    "


@dataclass
class Journal:
    """Every request and its reply, in order."""

    entries: list[Json] = field(default_factory=list)

    def document(self, file: str) -> Json:
        """The ``--log`` document."""
        return {"description": file, "exchanges": self.entries}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What went wrong: RPCs that failed, expectations that did not hold."""

    failed: int = 0
    missed: int = 0

    @property
    def ok(self) -> bool:
        """Nothing failed."""
        return not (self.failed or self.missed)


@dataclass
class _Session:
    """What the runner knows of one session while it plays it."""

    plan: SessionPlan
    seen: set[str] = field(default_factory=set)
    admitted: bool = False
    failed: bool = False


class Runner:
    """Plays plans through a :class:`Cps`, printing to ``out``."""

    def __init__(
        self,
        cps: Cps,
        out: TextIO,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._cps = cps
        self._out = out
        self._clock = clock
        self._sleep = sleep
        self.journal = Journal()
        self._failed = 0
        self._missed = 0

    def _print(self, depth: int, line: str) -> None:
        print(INDENT * depth + line, file=self._out, flush=True)

    def run(self, plans: tuple[SessionPlan, ...]) -> Outcome:
        """Every session in order."""
        for plan in plans:
            self._print(
                0, f"session {plan.session_id} (tenant {plan.tenant}, service {plan.service_id})"
            )
            state = _Session(plan)
            for stage in plan.stages:
                if state.failed and not (stage.closing and state.admitted):
                    continue
                self._stage(state, stage)
        return Outcome(self._failed, self._missed)

    def _stage(self, state: _Session, stage: Stage) -> None:
        self._print(1, stage.label)
        replies: list[tuple[str, Json]] = []
        records: list[Json] = []
        session: Json | None = None
        for exchange in stage.exchanges:
            reply = self._send(state, stage, exchange)
            if reply is None:
                return
            replies.append((exchange.operation, reply))
            session = self._read(state, stage)
            if state.failed:
                return
            new = [
                r
                for r in (session or {}).get("decision-record", ())
                if str(r.get("record-id")) not in state.seen
            ]
            for record in new:
                state.seen.add(str(record.get("record-id")))
                for line in render.record_lines(record):
                    self._print(3, line)
            records.extend(new)
        if stage.sleep > 0:
            self._sleep(stage.sleep)
        if stage.expect is None:
            return
        seen = Observed(
            tuple(records), session, tuple(replies), stage.turn_id, stage.step_id, stage.announced
        )
        found = misses(stage.expect, seen)
        self._missed += len(found)
        if not found:
            self._print(2, "expect: held")
        for miss in found:
            self._print(2, f"expect FAILED: {miss}")

    def _send(self, state: _Session, stage: Stage, exchange: Exchange) -> Json | None:
        """One RPC; None when it failed (the session then stops)."""
        sent = self._clock()
        members = exchange.input(sent)
        entry: Json = {
            "session-id": state.plan.session_id,
            "stage": stage.label,
            "where": exchange.where,
            "operation": f"{AS}:{exchange.operation}",
            "sent-at": date_and_time(sent),
            "input": members,
        }
        self.journal.entries.append(entry)
        try:
            reply = self._cps.invoke(AS, exchange.operation, members)
        except CatsError as exc:
            entry["error"] = [str(item) for item in exc.items]
            error = "; ".join(entry["error"])
            self._print(2, render.exchange_line(exchange.operation, members, None, error))
            self._failed += 1
            state.failed = True
            return None
        finally:
            entry["duration-ms"] = round((self._clock() - sent) * 1000, 3)
        entry["output"] = reply
        if exchange.operation == "submit-descriptor" and not state.admitted:
            state.admitted = True
        self._print(2, render.exchange_line(exchange.operation, members, reply, None))
        return reply

    def _read(self, state: _Session, stage: Stage) -> Json | None:
        """The session's state after an exchange."""
        sent = self._clock()
        entry: Json = {
            "session-id": state.plan.session_id,
            "stage": stage.label,
            "operation": "get",
            "path": session_path(state.plan.session_id),
            "sent-at": date_and_time(sent),
        }
        self.journal.entries.append(entry)
        try:
            found = self._cps.session(state.plan.session_id)
        except CatsError as exc:
            entry["error"] = [str(item) for item in exc.items]
            self._print(2, "reading the session FAILED: " + "; ".join(entry["error"]))
            self._failed += 1
            state.failed = True
            return None
        entry["output"] = found
        return found
