"""The decision machinery of the C-PS: P2-P8 at a decision point, P10 on a tail event (8, 8.4).

:class:`Decisions` keeps the agent sessions, the index of their handoffs and the candidate book
behind one lock. A decision is :func:`controller.selection.mapping.evaluate` taken in two
halves: under the lock it is settled into the session (:meth:`Decisions.record`); with no lock
held, what follows it is done (:meth:`Decisions.conclude`): the C-SMA calls (query-state before
it, reserve-state and release-state after it) through the :class:`StateAgents` seam, the
notifications, and every change of a session's commitment in force handed to the forwarders
through the :class:`~controller.agent_selection.steering.Steering` seam (P8, MSG-10): a new or
revised commitment is instructed, one that is superseded, expired, closed or failed is
withdrawn, and nothing is handed twice.

In a cluster the sessions are the cluster's (docs/cluster.md, "Agent sessions"): the sessions
an RPC stored are put in etcd when it ends (:meth:`Decisions.save`, through the
:class:`~controller.datastore.shared.SharedRecords` seam), and the sessions the other replicas
put are taken as they are and steered as this replica's own (:meth:`Decisions.adopt`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from controller.agent_selection import candidates as book
from controller.agent_selection import compaction, durable, handoff, render, tail
from controller.agent_selection import config as cfg
from controller.agent_selection.decide import (
    Effects,
    Settings,
    Settled,
    refused_step,
    settle,
    settled_handoff,
)
from controller.agent_selection.errors import unknown_session
from controller.agent_selection.feeds import Feeds, Subscribe
from controller.agent_selection.presence import PresenceCache
from controller.agent_selection.querying import StateQueries
from controller.agent_selection.sessions import Session
from controller.agent_selection.steering import Instructed, NoSteering, Steering, instructions
from controller.datastore.shared import SharedRecords
from controller.errors import CatsError
from controller.observability.metrics import SESSIONS_KEPT
from controller.selection.mapping import (
    Evaluation,
    EvaluationRequest,
    Invalidation,
    Policy,
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
from controller.southbound import SouthboundError, StateAgents
from controller.types import CsciId, Json, SessionId

LOG = logging.getLogger("catsctl.agent-selection")
Publisher = Callable[[Json], None]


@dataclass(frozen=True, slots=True)
class AgentSelectionSettings:
    """The C-PS's own settings: commitment lifetime (P8, seconds), its state directory,
    where its steering instructions go (MSG-10: the forwarders, through controller.app) and
    how it subscribes to the C-SMAs' presence changes (none: it asks at every decision)."""

    commitment_lifetime: float = 600.0
    state_dir: Path | None = None
    steering: Steering = field(default_factory=NoSteering)
    subscribe: Subscribe | None = None  # state-presence-changed of the C-SMAs (M42)
    #: Whether this C-PS acts on the network now: in a cluster only its leader sweeps
    #: (handoff timeouts, expired commitments, C-SMA subscriptions; docs/cluster.md).
    acts: Callable[[], bool] = field(default=lambda: True)
    #: Where the sessions are kept for the other replicas of a cluster (None: in memory only).
    records: SharedRecords | None = None


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


class Decisions:
    """The agent sessions of the C-PS, their candidate book, and the decisions taken on them."""

    def __init__(
        self,
        config: cfg.ConfigSource,
        agents: StateAgents,
        clock: Callable[[], float],
        publish: Publisher,
        settings: AgentSelectionSettings,
    ) -> None:
        self.config = config
        self.agents = agents
        self.clock = clock
        self.publish = publish
        self._lifetime = settings.commitment_lifetime
        self.lock = threading.Lock()
        self.sessions: dict[SessionId, Session] = {}
        self.handoffs: dict[str, SessionId] = {}
        self.closed: deque[tuple[float, SessionId]] = deque()
        self.book = book.CandidateBook()
        self.screenings = book.KeptScreenings()  # P4/P5 of the latest decisions, for the next
        self.presence = PresenceCache()
        self._queries = StateQueries(agents, self.presence, clock)
        self._intern = compaction.Interner()
        self.feeds = Feeds(settings.subscribe, self.presence, clock)
        self._steering = settings.steering
        self.instructed = Instructed()
        self._steer_lock = threading.Lock()  # hands one session's differences at a time
        self._dirty: set[SessionId] = set()  # sessions stored since they were last steered
        self.retry: set[SessionId] = set()  # sessions to steer again at the next sweep
        self.records = settings.records
        self._unsaved: set[SessionId] = set()  # stored (or forgotten) since they were kept
        self._save_lock = threading.Lock()  # keeps one session's changes in order

    # ------------------------------------------------------------------ under the lock

    def policy(self, config: cfg.AgentConfig, session: Session) -> tuple[Policy, cfg.Bounds]:
        """The session's selection context over the configured one, as a policy and bounds."""
        merged = cfg.overridden(config.context, session.descriptor_doc.get("selection-context"))
        context, bounds = cfg.context(merged)
        ids = (c.csci_id for c in config.for_service(session.service_id))  # read if needed
        return Policy(context, config.tiers, self.book.discounts(ids)), bounds

    def settings_for(self, config: cfg.AgentConfig, bounds: cfg.Bounds, now: float) -> Settings:
        """What settling a decision or a handoff needs at ``now``."""
        return Settings(
            now,
            self._lifetime,
            bounds.handoff_timeout,
            bounds.max_records,
            bounds.max_reservation_rate,
            config.targets,
            self._intern,
        )

    def session(self, session_id: object, operation: str, leaf: str) -> Session:
        """The session named in an RPC's input, or the unknown-session error at ``leaf``."""
        session = self.sessions.get(SessionId(str(session_id)))
        if session is None:
            raise unknown_session(operation, leaf, str(session_id))
        return session

    def store(self, session: Session) -> None:
        """Keep a session value and index its handoffs; under the lock."""
        self.sessions[session.session_id] = session
        self._dirty.add(session.session_id)
        if self.records is not None:
            self._unsaved.add(session.session_id)
        for entry in session.handoffs:
            self.handoffs[entry.handoff_id] = session.session_id

    def forget(self, session_id: SessionId) -> None:
        """Drop a session past its retention, here and in the cluster; under the lock."""
        gone = self.sessions.pop(session_id, None)
        self.screenings.forget(session_id)
        for entry in gone.handoffs if gone is not None else ():
            self.handoffs.pop(entry.handoff_id, None)
        if self.records is not None and gone is not None:
            self._unsaved.add(session_id)

    def record(
        self,
        session: Session,
        ev: Evaluation,
        descriptor_doc: Json,
        settings: Settings,
        invalidation: Invalidation | None,
    ) -> Pending:
        """Under the lock: record the decision and apply it to the session (P8, start of P9),
        then store the session; what follows is left for :meth:`conclude`."""
        session, settled, fx = settle(session, ev, descriptor_doc, settings, invalidation)
        self.store(session)
        return Pending(session.session_id, ev, settled, fx, settings)

    # ------------------------------------------------------------------ no lock held

    def save(self) -> None:
        """In a cluster: keep every session stored since the last call, one guarded etcd
        transaction each (docs/cluster.md), before the RPC that changed it is answered. A
        session etcd does not take now (no quorum) is kept again at the next call."""
        if self.records is None:
            return
        with self._save_lock:
            with self.lock:
                chosen, self._unsaved = self._unsaved, set()
                values = {sid: self.sessions.get(sid) for sid in chosen}
            failed = set()
            for session_id, session in values.items():
                try:
                    if session is None:
                        self.records.delete(session_id)
                        result = "deleted"
                    elif self.records.put(session_id, durable.encode(session)):
                        result = "kept"
                    else:
                        result = "overtaken"
                except CatsError as exc:
                    LOG.warning("agent session %s not kept in the cluster: %s", session_id, exc)
                    failed.add(session_id)
                    result = "failed"
                SESSIONS_KEPT.labels(result).inc()
            if failed:
                with self.lock:
                    self._unsaved |= failed

    def adopt(self, name: str, value: bytes) -> None:
        """A session another replica kept: take it as it is, and steer its commitments as this
        replica's own (so whichever replica leads has every session's rules)."""
        session = durable.decode(value)
        closed = session.closed_at is not None
        config = self.config() if closed else None  # its retention (a closed one only)
        with self.lock:
            before = self.sessions.get(session.session_id)
            self.sessions[session.session_id] = session
            self._dirty.add(session.session_id)
            for entry in session.handoffs:
                self.handoffs[entry.handoff_id] = session.session_id
            if config is not None and (before is None or before.closed_at is None):
                _, bounds = self.policy(config, session)
                until = (session.closed_at or 0.0) + bounds.retention_after_close
                self.closed.append((until, session.session_id))
        LOG.debug("agent session %s taken from the cluster (%s)", name, session.state)
        self.steer()

    def steer(self, more: Iterable[SessionId] = ()) -> None:
        """MSG-10: hand the forwarders what changed in the commitments in force of the sessions
        stored since the last call (and of ``more``); no service lock held. The differences of
        each session are taken and handed under one lock, so a later state is never overtaken
        by an earlier one. A hand-off that fails, or whose rule is not placed as intended (no
        egress known for the instance, no forwarder yet), is handed again at the next sweep."""
        with self._steer_lock:
            with self.lock:
                chosen, self._dirty = self._dirty.union(more), set()
                now = self.clock()
                wanted = {
                    sid: instructions(self.sessions[sid], now) if sid in self.sessions else {}
                    for sid in chosen
                }
            for session_id, found in wanted.items():
                handing = self.instructed.differences(session_id, found)
                try:
                    pending = {
                        i.commitment_id
                        for i in handing.instruct
                        if not self._steering.instruct(i).complete
                    }
                    for instruction in handing.withdraw:
                        self._steering.withdraw(instruction)
                except CatsError:
                    LOG.exception("steering instruction of session %s not handed", session_id)
                    with self.lock:
                        self.retry.add(session_id)
                    continue
                self.instructed.record(session_id, found, pending)
                if pending:
                    with self.lock:
                        self.retry.add(session_id)

    def follow(self, fx: Effects, more: Iterable[SessionId] = ()) -> None:
        """Hand the steering changes (of ``more`` too), release what is to be released, then
        publish; no lock held."""
        self.steer(more)
        for target, members in fx.release:
            try:
                self.agents.release_state(target, members)
            except SouthboundError:  # the C-SMA frees it at the reservation's end anyway
                LOG.warning("release-state at %s failed", target.name, exc_info=True)
        for document in fx.notes:
            self.publish(document)

    def query(self, config: cfg.AgentConfig, session: Session) -> dict[CsciId, book.StateMap]:
        """MSG-5/6 at the point of need (:class:`StateQueries`); no lock held."""
        return self._queries(config, session)

    def conclude(self, pending: Pending) -> Json:
        """With no lock held: what follows a recorded decision (the reservations of a handoff
        begun, the steering, the releases and the notifications), then its selection-result
        (MSG-9) with the commitment held by then."""
        self._reserve(pending.effects, pending.settings)
        settled = pending.settled
        with self.lock:
            held = self.sessions[pending.session_id].commitment(
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
                reply = self.agents.reserve_state(target, members)
            except SouthboundError as exc:
                detail = str(exc)
            with self.lock:
                session = self.sessions[started.session_id]
                before = session.handoff(started.handoff_id) or started
                if reply is not None:
                    after = handoff.reserved(before, reply, settings.now)
                else:
                    after = handoff.unreachable(before, detail, settings.now)
                session = settled_handoff(session, before, after, settings, fx)
                self.store(session)
        self.follow(fx)

    # ------------------------------------------------------------------ decisions

    def decide(
        self,
        session_id: SessionId,
        trigger: Trigger | None,
        *,
        point: DecisionPoint | None = None,
        invalidation: Invalidation | None = None,
        force: bool = False,
    ) -> Decided:
        """P2-P8 for one session at one decision point, with P9 started on a move."""
        config = self.config()
        now = self.clock()
        with self.lock:
            session = self.sessions[session_id]
            commitment = session.position().commitment
            if (
                not force
                and trigger is not None
                and not needs_decision(trigger, commitment, session.step, now)
            ):
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            policy, bounds = self.policy(config, session)
            allowed, rate = session.rate.admit(now, bounds.max_decision_rate, trigger)
            if not allowed:  # section 13: the commitment in force stays
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            asked, queries = session.queries.admit(now, bounds.max_state_query_rate, trigger)
            self.sessions[session_id] = replace(session, rate=rate, queries=queries)
        state = self.query(config, session) if asked else {}
        with self.lock:
            session = self.sessions[session_id]
            if not session.open:  # closed while its state was being queried
                return Decided(None, {"evaluation": "deferred", "session-id": session_id})
            settings = self.settings_for(config, bounds, now)
            if session.refused:
                ev = refused_step(session.descriptor, policy, now)
            else:
                candidates = self.book.candidates(config, session.service_id, state)
                request = EvaluationRequest(session.descriptor, session.position(), trigger, point)
                kept = self.screenings.of(session_id, len(candidates))
                ev = evaluate(request, candidates, policy, now, kept)
                self.screenings.sized(session_id)
                settings = replace(settings, last=self.screenings.compacted(session_id))
            pending = self.record(session, ev, session.descriptor_doc, settings, invalidation)
        reply = self.conclude(pending)
        return Decided(ev, {"evaluation": "completed", **reply})

    def tail(self, session_id: SessionId, members: Json, step: StepProgress) -> Json:
        """P10 for a running step: degrade within class, migrate, or fail it (8.4, M35, M36)."""
        config = self.config()
        now = self.clock()
        with self.lock:
            session = self.sessions[session_id]
        state = self.query(config, session)
        with self.lock:
            session = self.sessions[session_id]
            policy, bounds = self.policy(config, session)
            settings = self.settings_for(config, bounds, now)
            current = session.position().current
            candidates = self.book.candidates(config, session.service_id, state)
            desc = session.descriptor
            position = session.position(in_flight=True)
            others = [c for c in candidates if c.csci_id != current]
            elsewhere = evaluate(EvaluationRequest(desc, trigger=Trigger.T8), others, policy, now)
            decision = on_tail_event(
                step,
                desc,
                policy,
                alternative=tail.alternative(elsewhere),
                constraint_violated=tail.violated(desc, step),
            )
            advertiser = None if current is None else self.book.advertiser.get(current)
            if advertiser is not None:
                self.book.observed(advertiser, tail_underreport=decision.tail)
            if not decision.tail:
                return {"acted-on": False}
            doc = session.descriptor_doc
            if decision.action is TailAction.DEGRADE and decision.descriptor is not None:
                desc = decision.descriptor
                doc = tail.truncated_doc(doc, desc)
                session = replace(session, descriptor_doc=doc, descriptor=desc)
            request = EvaluationRequest(desc, position, Trigger.T8)
            ev = tail.applied(evaluate(request, candidates, policy, now), decision, current)
            invalidation = Invalidation(
                InvalidationCondition.STEP_OVERRUN, acted_on=True, element=Element.OBJECTIVE
            )
            pending = self.record(session, ev, doc, settings, invalidation)
            factor = policy.context.tail_detection_factor
            record_id = pending.settled.record_id
            pending.effects.notes.append(
                tail.tail_note(members, factor, decision, record_id, current)
            )
        reply = self.conclude(pending)
        return {"acted-on": True, "record-id": str(record_id), "re-evaluation": reply}
