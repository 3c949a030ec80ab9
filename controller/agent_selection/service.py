"""The C-PS side of agent selection: the RPCs of ietf-cats-agent-selection over the pure core.

:class:`AgentSelection` keeps the sessions and the candidate book behind one lock and serves
submit-descriptor (MSG-1), step-boundary (MSG-2), advertise-capability (MSG-4),
advertise-forwarding-view (MSG-7), evaluate (MSG-8/9), state-transfer-notice (MSG-13),
invalidation-notice (MSG-14), accounting-feedback (MSG-15) and close-session (MSG-16).
Decisions are :func:`controller.selection.mapping.evaluate`; the C-SMA calls (query-state,
reserve-state, release-state) go through the :class:`StateAgents` seam outside the lock, and
notifications are published outside it too. Every change of a session's commitment in force is
handed to the forwarders through the :class:`~controller.agent_selection.steering.Steering`
seam (P8, MSG-10): a new or revised commitment is instructed, one that is superseded, expired,
closed or failed is withdrawn, and nothing is handed twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from controller.agent_selection import accounting, descriptors, handoff, render, tail
from controller.agent_selection import config as cfg
from controller.agent_selection.advertise import Advertisements
from controller.agent_selection.candidates import CandidateBook, StateCache, StateMap
from controller.agent_selection.decide import (
    Effects,
    Settings,
    Settled,
    note,
    refused_step,
    releases,
    settle,
    settled_handoff,
)
from controller.agent_selection.errors import closed_session, refused, unknown_session
from controller.agent_selection.sessions import KeyScope, Session, session_limits
from controller.agent_selection.state import accuracy_json, session_json
from controller.agent_selection.steering import Instructed, NoSteering, Steering, instructions
from controller.agent_selection.values import MODULE, qualified
from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.selection.mapping import (
    Descriptor,
    Evaluation,
    EvaluationRequest,
    Invalidation,
    Policy,
    SessionAccount,
    StepProgress,
    evaluate,
    needs_decision,
    on_tail_event,
)
from controller.selection.mapping.vocabulary import (
    DecisionPoint,
    Element,
    InvalidationCondition,
    TailAction,
    Trigger,
)
from controller.service_metrics.sweeper import Sweeper
from controller.southbound import SouthboundError, StateAgents, Target, fan_out
from controller.types import CsciId, Json, SessionId, SourceId

LOG = logging.getLogger("catsctl.agent-selection")
SWEEP_PERIOD = 0.5
Publisher = Callable[[Json], None]


def _no_publisher(document: Json) -> None:
    del document


@dataclass(frozen=True, slots=True)
class AgentSelectionSettings:
    """The C-PS's own settings: commitment lifetime (P8, seconds), its state directory, and
    where its steering instructions go (MSG-10: the forwarders, through controller.app)."""

    commitment_lifetime: float = 600.0
    state_dir: Path | None = None
    steering: Steering = field(default_factory=NoSteering)


@dataclass(frozen=True, slots=True)
class Pending:
    """A decision recorded under the lock, its effects still to be done."""

    session_id: SessionId
    evaluation: Evaluation
    settled: Settled
    effects: Effects
    settings: Settings


@dataclass(frozen=True, slots=True)
class Decided:
    """What one decision produced for its reply."""

    evaluation: Evaluation | None
    reply: Json


class AgentSelection:
    """The agent sessions of the C-PS and the handlers of their RPCs."""

    def __init__(
        self,
        config: cfg.ConfigSource,
        agents: StateAgents,
        clock: Callable[[], float] = time.time,
        publish: Publisher = _no_publisher,
        settings: AgentSelectionSettings = AgentSelectionSettings(),
    ) -> None:
        self._config = config
        self._agents = agents
        self._clock = clock
        self._publish = publish
        self._settings = settings
        self._lock = threading.Lock()
        self._sessions: dict[SessionId, Session] = {}
        self._handoffs: dict[str, SessionId] = {}
        self._closed: deque[tuple[float, SessionId]] = deque()
        self._book = CandidateBook()
        self._states = StateCache()
        self._sweeper = Sweeper(self.sweep, SWEEP_PERIOD)
        self.advertisements = Advertisements(config, self._book, self._lock, clock)
        self.scope = KeyScope.in_state_dir(settings.state_dir)
        self._steering = settings.steering
        self._instructed = Instructed()
        self._steer_lock = threading.Lock()  # hands one session's differences at a time
        self._dirty: set[SessionId] = set()  # sessions stored since they were last steered
        self._retry: set[SessionId] = set()  # sessions to steer again at the next sweep

    def start(self) -> None:
        """Hand the commitments in force to the forwarders, then start the sweeper (handoff
        timeouts, expired reservations and commitments, retention). The C-PS starts this before
        its steering workers first reconcile, so a commitment held at start keeps its rule.
        Sessions are not persisted: after a restart there is none, and the forwarders' rules of
        the sessions the C-PS no longer knows are removed by that reconciliation."""
        with self._lock:
            held = list(self._sessions)
        self._steer(held)
        self._sweeper.start()

    def close(self) -> None:
        """Stop the sweeper and close the sessions to the C-SMAs."""
        self._sweeper.stop()
        self._agents.close()

    # ------------------------------------------------------------------ helpers

    def _policy(self, config: cfg.AgentConfig, session: Session) -> tuple[Policy, cfg.Bounds]:
        merged = cfg.overridden(config.context, session.descriptor_doc.get("selection-context"))
        context, bounds = cfg.context(merged)
        ids = [c.csci_id for c in config.for_service(session.service_id)]
        return Policy(context, config.tiers, self._book.discounts(ids)), bounds

    def _settings_for(self, config: cfg.AgentConfig, bounds: cfg.Bounds, now: float) -> Settings:
        targets = {c.csci_id: c.c_sma for c in config.candidates.values()}
        return Settings(now, self._settings.commitment_lifetime, bounds.handoff_timeout,
                        bounds.max_records, bounds.max_reservation_rate, targets)  # fmt: skip

    def _session(self, session_id: object, operation: str, leaf: str) -> Session:
        session = self._sessions.get(SessionId(str(session_id)))
        if session is None:
            raise unknown_session(operation, leaf, str(session_id))
        return session

    def _steer(self, more: Iterable[SessionId] = ()) -> None:
        """MSG-10: hand the forwarders what changed in the commitments in force of the sessions
        stored since the last call (and of ``more``); no service lock held. The differences of
        each session are taken and handed under one lock, so a later state is never overtaken
        by an earlier one. A hand-off that fails, or whose rule is not placed as intended (no
        egress known for the instance, no forwarder yet), is handed again at the next sweep."""
        with self._steer_lock:
            with self._lock:
                chosen, self._dirty = self._dirty.union(more), set()
                now = self._clock()
                wanted = {sid: instructions(self._sessions[sid], now) if sid in self._sessions
                          else {} for sid in chosen}  # fmt: skip
            for session_id, found in wanted.items():
                handing = self._instructed.differences(session_id, found)
                try:
                    pending = {i.commitment_id for i in handing.instruct
                               if not self._steering.instruct(i).complete}  # fmt: skip
                    for instruction in handing.withdraw:
                        self._steering.withdraw(instruction)
                except CatsError:
                    LOG.exception("steering instruction of session %s not handed", session_id)
                    with self._lock:
                        self._retry.add(session_id)
                    continue
                self._instructed.record(session_id, found, pending)
                if pending:
                    with self._lock:
                        self._retry.add(session_id)

    def _follow(self, fx: Effects, more: Iterable[SessionId] = ()) -> None:
        """Hand the steering changes (of ``more`` too), release what is to be released, then
        publish; no lock held."""
        self._steer(more)
        for target, members in fx.release:
            try:
                self._agents.release_state(target, members)
            except SouthboundError:  # the C-SMA frees it at the reservation's end anyway
                LOG.warning("release-state at %s failed", target.name, exc_info=True)
        for document in fx.notes:
            self._publish(document)

    def _query(self, config: cfg.AgentConfig, session: Session) -> dict[CsciId, StateMap]:
        """MSG-5/6 at the point of need (M40, M42): the working-set keys at each candidate's
        C-SMA; an unreachable C-SMA leaves presence unknown, never absent (M20)."""
        keys = [e.reuse_key for e in session.descriptor.working_set]
        if not keys:
            return {}
        by_target: dict[Target, list[CsciId]] = {}
        for candidate in config.for_service(session.service_id):
            if candidate.c_sma is not None:
                by_target.setdefault(candidate.c_sma, []).append(candidate.csci_id)
        requests = [
            (target, {"tenant": session.tenant, "session-id": session.session_id,
                      "csci-id": list(ids), "reuse-key": list(keys)})
            for target, ids in by_target.items()
        ]  # fmt: skip
        found: dict[CsciId, StateMap] = {}
        for result in fan_out(self._agents.query_state, requests).results:
            if result.output is None:
                LOG.warning("query-state at %s failed: %s", result.target.name, result.error)
                continue
            for entry in result.output.get("candidate", ()):
                csci_id = CsciId(str(entry["csci-id"]))
                elements = list(entry.get("element", ()))
                found[csci_id] = self._states.state(session.tenant, csci_id, elements)
        return found

    # ------------------------------------------------------------------ decisions

    def _decide(
        self,
        session_id: SessionId,
        trigger: Trigger | None,
        *,
        point: DecisionPoint | None = None,
        invalidation: Invalidation | None = None,
        force: bool = False,
    ) -> Decided:
        """P2-P8 for one session at one decision point, with P9 started on a move."""
        config = self._config()
        now = self._clock()
        with self._lock:
            session = self._sessions[session_id]
            commitment = session.position().commitment
            if (
                not force
                and trigger is not None
                and not needs_decision(trigger, commitment, session.step, now)
            ):
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            policy, bounds = self._policy(config, session)
            allowed, rate = session.rate.admit(now, bounds.max_decision_rate, trigger)
            if not allowed:  # section 13: the commitment in force stays
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            asked, queries = session.queries.admit(now, bounds.max_state_query_rate, trigger)
            self._sessions[session_id] = replace(session, rate=rate, queries=queries)
        state = self._query(config, session) if asked else {}
        with self._lock:
            session = self._sessions[session_id]
            if not session.open:  # closed while its state was being queried
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            settings = self._settings_for(config, bounds, now)
            if session.refused:
                ev = refused_step(session.descriptor, policy, now)
            else:
                candidates = self._book.candidates(config, session.service_id, state)
                request = EvaluationRequest(session.descriptor, session.position(), trigger, point)
                ev = evaluate(request, candidates, policy, now)
            pending = self._record(session, ev, session.descriptor_doc, settings, invalidation)
        reply = self._conclude(pending)
        return Decided(ev, {"evaluation": "completed", **reply})

    def _store(self, session: Session) -> None:
        """Keep a session value and index its handoffs; under the lock."""
        self._sessions[session.session_id] = session
        self._dirty.add(session.session_id)
        for entry in session.handoffs:
            self._handoffs[entry.handoff_id] = session.session_id

    def _record(
        self,
        session: Session,
        ev: Evaluation,
        descriptor_doc: Json,
        settings: Settings,
        invalidation: Invalidation | None,
    ) -> Pending:
        """Under the lock: record the decision and apply it to the session (P8, start of P9),
        then store the session; what follows is left for :meth:`_conclude`."""
        session, settled, fx = settle(session, ev, descriptor_doc, settings, invalidation)
        self._store(session)
        return Pending(session.session_id, ev, settled, fx, settings)

    def _conclude(self, pending: Pending) -> Json:
        """With no lock held: what follows a recorded decision (the reservations of a handoff
        begun, the steering, the releases and the notifications), then its selection-result
        (MSG-9) with the commitment held by then."""
        self._reserve(pending.effects, pending.settings)
        settled = pending.settled
        with self._lock:
            held = self._sessions[pending.session_id].commitment(
                None if settled.held is None else settled.held.commitment_id
            )
        return render.selection_result(
            pending.evaluation, settled.record_id, held, settled.handoff_id
        )

    def _reserve(self, fx: Effects, settings: Settings) -> None:
        """MSG-11/12 for each handoff begun, then apply each reply (no lock during I/O)."""
        pending = list(fx.reserve)
        for started, target, members in pending:
            reply: Json | None = None
            detail = ""
            try:
                reply = self._agents.reserve_state(target, members)
            except SouthboundError as exc:
                detail = str(exc)
            with self._lock:
                session = self._sessions[started.session_id]
                before = session.handoff(started.handoff_id) or started
                if reply is not None:
                    after = handoff.reserved(before, reply, settings.now)
                else:
                    after = handoff.unreachable(before, detail, settings.now)
                session = settled_handoff(session, before, after, settings, fx)
                self._store(session)
        self._follow(fx)

    # ------------------------------------------------------------------ MSG-1, MSG-2, MSG-8

    def submit_descriptor(self, principal: Principal, members: Json) -> Json:
        """submit-descriptor (MSG-1): P0 admission of a new session (DP1), or a revised
        descriptor of a running one (P2) decided at T1 unless another trigger is named."""
        del principal
        doc: Json = dict(members["descriptor"])
        session_id = SessionId(str(doc["session-id"]))
        trigger_name = members.get("trigger")
        trigger = None if trigger_name is None else Trigger(str(trigger_name).split(":")[-1])
        now = self._clock()
        with self._lock:
            self._purge(now)
            session = self._sessions.get(session_id)
            if session is not None and session.tenant != doc["tenant"]:
                raise _other_tenant("submit-descriptor")
            if session is not None and not session.open:
                raise closed_session("submit-descriptor", "descriptor/session-id", session_id)
            step = session.step if session is not None else None
            desc = descriptors.descriptor(doc, step_id=step)
            if session is None:
                account = SessionAccount.opened(session_limits(desc))
                session = Session(session_id, desc.tenant, desc.service_id, now, doc, desc,
                                  last_activity=now, turn=desc.turn_id, step=desc.step_id,
                                  account=account)  # fmt: skip
                trigger = None
            else:
                session = replace(session, descriptor_doc=doc, descriptor=desc, last_activity=now,
                                  turn=desc.turn_id or session.turn, step=desc.step_id)  # fmt: skip
                trigger = trigger or Trigger.T1
            self._store(session)
        self._refine(desc, doc)
        decided = self._decide(session_id, trigger, force=trigger is None)
        return decided.reply

    def _refine(self, desc: Descriptor, doc: Json) -> None:
        """MSG-3: ask the gateway for what the network cannot derive; unanswered, the element
        stays unknown (P2, M40)."""
        for element, reason in descriptors.missing(desc):
            members: Json = {"session-id": doc["session-id"], "element": qualified(element.value),
                             "scope": str(doc.get("scope", "step")), "reason": reason}  # fmt: skip
            for name in ("turn-id", "step-id"):
                if name in doc:
                    members[name] = doc[name]
            self._publish(note("descriptor-refinement-request", members))

    def step_boundary(self, principal: Principal, members: Json) -> Json:
        """step-boundary (MSG-2, P1): the accumulated working set and the new step; a step
        start decides at T1 (DP3) unless the commitment covers it, a turn start at T2, a
        wake-up at T3; a pause only records itself."""
        del principal
        boundary = str(members.get("boundary", "step-start"))
        now = self._clock()
        with self._lock:
            self._purge(now)
            session = self._session(members["session-id"], "step-boundary", "session-id")
            if not session.open:
                raise closed_session("step-boundary", "session-id", session.session_id)
            working = members.get("working-set")
            turn = members.get("turn-id")
            step = members.get("step-id")
            doc = descriptors.revised(
                session.descriptor_doc,
                None if working is None else list(working.get("element", ())),
                None if turn is None else int(turn),
                None if step is None else int(step),
            )
            desc = descriptors.descriptor(doc, step_id=session.step)
            state = "paused" if boundary == "pause" else "running"
            session = replace(
                session, descriptor_doc=doc, descriptor=desc, last_activity=now, state=state,
                turn=desc.turn_id, step=desc.step_id,
                step_in_flight=False,
            )  # fmt: skip
            self._store(session)
        trigger = {"step-start": Trigger.T1, "turn-start": Trigger.T2, "wake-up": Trigger.T3}
        if boundary in trigger:  # decided at the boundary, before the step runs (DP3)
            self._decide(session.session_id, trigger[boundary])
        if boundary == "step-start":
            with self._lock:
                found = self._sessions.get(session.session_id)
                if found is not None and found.open:
                    self._store(replace(found, step_in_flight=True))
        return {}

    def evaluate(self, principal: Principal, members: Json) -> Json:
        """evaluate (MSG-8 -> MSG-9) at the named trigger, with an optional revised
        descriptor."""
        del principal
        trigger = Trigger(str(members["trigger"]).split(":")[-1])
        point_name = members.get("decision-point")
        point = None if point_name is None else DecisionPoint(str(point_name).split(":")[-1])
        now = self._clock()
        with self._lock:
            self._purge(now)
            session = self._session(members["session-id"], "evaluate", "session-id")
            if not session.open:
                raise closed_session("evaluate", "session-id", session.session_id)
            doc = members.get("descriptor") or session.descriptor_doc
            changed: Json = {n: members[n] for n in ("turn-id", "step-id")
                       if n in members and doc.get(n) != members[n]}  # fmt: skip
            if changed:
                doc = {**doc, **changed}
            if str(doc.get("tenant")) != session.tenant:
                raise _other_tenant("evaluate")
            if doc is session.descriptor_doc:  # unchanged: no second parse, no second copy
                desc = session.descriptor
            else:
                desc = descriptors.descriptor(doc, step_id=session.step)
            session = replace(session, descriptor_doc=doc, descriptor=desc, last_activity=now,
                              turn=desc.turn_id, step=desc.step_id)  # fmt: skip
            self._store(session)
        reply = self._decide(session.session_id, trigger, point=point, force=True).reply
        reply.pop("evaluation", None)
        return reply

    # ------------------------------------------------------------------ MSG-13

    def state_transfer_notice(self, principal: Principal, members: Json) -> Json:
        """state-transfer-notice (MSG-13): the transfer of a handoff succeeded or failed at
        source or target; commit only on a usable working set, else abort (P9, M43)."""
        del principal
        config = self._config()
        now = self._clock()
        fx = Effects()
        with self._lock:
            handoff_id = str(members["handoff-id"])
            owner = self._handoffs.get(handoff_id)
            if owner is None or owner not in self._sessions:
                raise refused("state-transfer-notice", "handoff-id",
                              f"no handoff {handoff_id!r}", "unknown-handoff")  # fmt: skip
            session = self._sessions[owner]
            before = session.handoff(handoff_id)
            assert before is not None
            _, bounds = self._policy(config, session)
            settings = self._settings_for(config, bounds, now)
            after = handoff.noticed(before, handoff.Notice.of(members), now)
            if after.state is handoff.HandoffState.COMMITTED and after.moved:
                advertiser = self._book.advertiser.get(after.target)
                if advertiser is not None:
                    self._book.observed(advertiser)
            self._store(settled_handoff(session, before, after, settings, fx))
        self._follow(fx)
        return {}

    # ------------------------------------------------------------------ MSG-14

    def invalidation_notice(self, principal: Principal, members: Json) -> Json:
        """invalidation-notice (MSG-14): a step overrun is P10 (T8); another condition of a
        session re-evaluates it at its trigger (8.3); a contradicted value counts against its
        source (14); an instance degradation re-evaluates the sessions committed to it (T7)."""
        del principal
        condition = tail.condition(members)
        source = members.get("source")
        session_id = members.get("session-id")
        with self._lock:
            if source is not None:
                contradicted = condition is InvalidationCondition.VALUE_CONTRADICTED
                self._book.observed(SourceId(str(source)), contradicted=contradicted)
            if session_id is not None:
                self._session(session_id, "invalidation-notice", "session-id")
            elif condition is InvalidationCondition.INSTANCE_DEGRADED and "csci-id" in members:
                hit = [s.session_id for s in self._sessions.values() if s.open
                       and s.in_force is not None
                       and s.in_force.commitment.csci_id == members["csci-id"]]  # fmt: skip
            else:
                hit = []
        element = members.get("element")
        named = None if element is None else _ELEMENTS.get(str(element).split(":")[-1])
        invalidation = Invalidation(condition, acted_on=True, element=named)
        trigger = tail.CONDITION_TRIGGER[condition]
        if session_id is None:
            for other in hit:
                self._decide(other, trigger, invalidation=invalidation, force=True)
            return {"acted-on": bool(hit)}
        step = tail.progress(members)
        if condition is InvalidationCondition.STEP_OVERRUN and step is not None:
            return self._tail(SessionId(str(session_id)), members, step)
        decided = self._decide(SessionId(str(session_id)), trigger, invalidation=invalidation,
                               force=True)  # fmt: skip
        return _acted(decided)

    def _tail(self, session_id: SessionId, members: Json, step: StepProgress) -> Json:
        """P10 for a running step: degrade within class, migrate, or fail it (8.4, M35, M36)."""
        config = self._config()
        now = self._clock()
        with self._lock:
            session = self._sessions[session_id]
        state = self._query(config, session)
        with self._lock:
            session = self._sessions[session_id]
            policy, bounds = self._policy(config, session)
            settings = self._settings_for(config, bounds, now)
            current = session.position().current
            candidates = self._book.candidates(config, session.service_id, state)
            desc = session.descriptor
            position = session.position(in_flight=True)
            others = [c for c in candidates if c.csci_id != current]
            elsewhere = evaluate(EvaluationRequest(desc, trigger=Trigger.T8), others, policy, now)
            decision = on_tail_event(
                step, desc, policy, alternative=tail.alternative(elsewhere),
                constraint_violated=tail.violated(desc, step),
            )  # fmt: skip
            advertiser = None if current is None else self._book.advertiser.get(current)
            if advertiser is not None:
                self._book.observed(advertiser, tail_underreport=decision.tail)
            if not decision.tail:
                return {"acted-on": False}
            doc = session.descriptor_doc
            if decision.action is TailAction.DEGRADE and decision.descriptor is not None:
                desc = decision.descriptor
                doc = tail.truncated_doc(doc, desc)
                session = replace(session, descriptor_doc=doc, descriptor=desc)
            request = EvaluationRequest(desc, position, Trigger.T8)
            ev = tail.applied(evaluate(request, candidates, policy, now), decision, current)
            invalidation = Invalidation(InvalidationCondition.STEP_OVERRUN, acted_on=True,
                                        element=Element.OBJECTIVE)  # fmt: skip
            pending = self._record(session, ev, doc, settings, invalidation)
            factor = policy.context.tail_detection_factor
            record_id = pending.settled.record_id
            pending.effects.notes.append(
                tail.tail_note(members, factor, decision, record_id, current)
            )
        reply = self._conclude(pending)
        return {"acted-on": True, "record-id": str(record_id), "re-evaluation": reply}

    # ------------------------------------------------------------------ MSG-15, MSG-16

    def accounting_feedback(self, principal: Principal, members: Json) -> Json:
        """accounting-feedback (MSG-15, P11): charge once per report id, then DP9: budget
        thresholds notify, pace or refuse the next steps (M38, M46)."""
        del principal
        config = self._config()
        attribution = members["attribution"]
        fx = Effects()
        with self._lock:
            session = self._session(attribution["session-id"], "accounting-feedback",
                                    "attribution/session-id")  # fmt: skip
            policy, _ = self._policy(config, session)
            session, notes = accounting.charged(session, members, policy.context.pacing)
            fx.notes.extend(notes)
            self._store(session)
        self._follow(fx)
        return {}

    def close_session(self, principal: Principal, members: Json) -> Json:
        """close-session (MSG-16, DP10): abort handoffs, release state at the C-SMAs; the
        records are kept for the retention after close (M39). Repeated, it does nothing."""
        del principal
        config = self._config()
        now = self._clock()
        fx = Effects()
        with self._lock:
            session = self._session(members["session-id"], "close-session", "session-id")
            if session.state == "closed":
                return {}
            _, bounds = self._policy(config, session)
            settings = self._settings_for(config, bounds, now)
            for entry in session.handoffs:
                stopped = handoff.aborted(entry, handoff.AbortReason.SUPERSEDED,
                                          "session closed", now)  # fmt: skip
                session = settled_handoff(session, entry, stopped, settings, fx)
            released = members.get("released-key")
            fx.release.extend(releases(session, released, settings))
            session = replace(session, state="closed", closed_at=now, step_in_flight=False,
                              last_activity=now)  # fmt: skip
            self._store(session)
            self._closed.append((now + bounds.retention_after_close, session.session_id))
        self._follow(fx)
        return {}

    # ------------------------------------------------------------------ soft state

    def _purge(self, now: float) -> None:
        """Forget closed sessions past their retention (M39); under the lock."""
        while self._closed and self._closed[0][0] <= now:
            _, session_id = self._closed.popleft()
            gone = self._sessions.pop(session_id, None)
            for entry in gone.handoffs if gone is not None else ():
                self._handoffs.pop(entry.handoff_id, None)

    def sweep(self) -> None:
        """Abort handoffs past their reservation or timeout; withdraw the steering of expired
        commitments (P8) and hand again what was not handed or not placed; purge closed
        sessions."""
        config = self._config()
        now = self._clock()
        fx = Effects()
        with self._lock:
            self._purge(now)
            for found in list(self._sessions.values()):
                session = found
                for entry in found.handoffs:
                    after = handoff.expired(entry, now)
                    if after is not entry:
                        _, bounds = self._policy(config, session)
                        settings = self._settings_for(config, bounds, now)
                        session = settled_handoff(session, entry, after, settings, fx)
                if session is not found:
                    self._store(session)
            retry, self._retry = self._retry, set()
        self._follow(fx, retry.union(self._instructed.expired(now)))

    # ------------------------------------------------------------------ state

    def candidates_state(self) -> Json:
        """``agent-selection/candidates/candidate/source-accuracy`` (14)."""
        with self._lock:
            rendered = accuracy_json(self._book.advertiser, self._book.accuracy)
        return {f"{MODULE}:candidates": {"candidate": rendered} if rendered else {}}

    def sessions_state(self) -> Json:
        """``agent-selection/sessions``: every session, its records, commitments, handoffs."""
        config = self._config()
        with self._lock:
            now = self._clock()
            self._purge(now)
            sessions = list(self._sessions.values())
        rendered = [self._session_json(config, session, now) for session in sessions]
        return {f"{MODULE}:sessions": {"session": rendered} if rendered else {}}

    def _session_json(self, config: cfg.AgentConfig, session: Session, now: float) -> Json:
        merged = cfg.overridden(config.context, session.descriptor_doc.get("selection-context"))
        reserves = accounting.reserves(session.account, cfg.context(merged)[0].pacing)
        return session_json(session, merged, reserves, self.scope, now)


_ELEMENTS = {member.value: member for member in Element}


def _acted(decided: Decided) -> Json:
    """The invalidation-notice output of a re-evaluation."""
    if decided.evaluation is None:
        return {"acted-on": False}
    reply = dict(decided.reply)
    reply.pop("evaluation", None)
    return {"acted-on": True, "record-id": reply["record-id"], "re-evaluation": reply}


def _other_tenant(operation: str) -> CatsError:
    """A descriptor naming a session of another tenant (15)."""
    message = "the session belongs to another tenant"
    return refused(operation, "descriptor/tenant", message, "tenant-mismatch")
