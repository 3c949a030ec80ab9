"""The C-PS side of agent selection: the RPCs of ietf-cats-agent-selection over the pure core.

:class:`AgentSelection` serves submit-descriptor (MSG-1), step-boundary (MSG-2),
advertise-capability (MSG-4), advertise-forwarding-view (MSG-7), evaluate (MSG-8/9),
state-transfer-notice (MSG-13), invalidation-notice (MSG-14), accounting-feedback (MSG-15) and
close-session (MSG-16), and the sessions and candidates state. The sessions, the candidate book
and the decisions taken on them are :class:`~controller.agent_selection.decisions.Decisions`,
behind one lock; handoff timeouts, expired commitments and the retention of closed sessions are
:mod:`controller.agent_selection.softstate`, swept on a thread of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from controller.agent_selection import accounting, descriptors, handoff, softstate, tail
from controller.agent_selection import config as cfg
from controller.agent_selection.advertise import Advertisements
from controller.agent_selection.decide import Effects, releases, settled_handoff
from controller.agent_selection.decisions import (
    AgentSelectionSettings,
    Decided,
    Decisions,
    Publisher,
)
from controller.agent_selection.errors import (
    closed_session,
    handoff_settled,
    other_tenant,
    refused,
)
from controller.agent_selection.sessions import KeyScope, Session, session_limits
from controller.agent_selection.state import accuracy_json, session_json
from controller.agent_selection.values import MODULE
from controller.datastore.api import Principal, RpcHandler
from controller.selection.mapping import Invalidation, SessionAccount
from controller.selection.mapping.vocabulary import (
    DecisionPoint,
    Element,
    InvalidationCondition,
    Trigger,
)
from controller.service_metrics.sweeper import Sweeper
from controller.southbound import StateAgents
from controller.types import CsciId, Json, SessionId, SourceId


def _no_publisher(document: Json) -> None:
    del document


_DEFAULTS = AgentSelectionSettings()


class AgentSelection:
    """The agent sessions of the C-PS and the handlers of their RPCs."""

    def __init__(
        self,
        config: cfg.ConfigSource,
        agents: StateAgents,
        clock: Callable[[], float] = time.time,
        publish: Publisher = _no_publisher,
        settings: AgentSelectionSettings = _DEFAULTS,
    ) -> None:
        self._decisions = Decisions(config, agents, clock, publish, settings)
        self._sweeper = Sweeper(self.sweep, softstate.SWEEP_PERIOD)
        self._acts = settings.acts
        book, lock = self._decisions.book, self._decisions.lock
        self.advertisements = Advertisements(config, book, lock, clock)
        self.scope = KeyScope.in_state_dir(settings.state_dir)

    def start(self) -> None:
        """Hand the commitments in force to the forwarders, then start the sweeper (handoff
        timeouts, expired reservations and commitments, retention). The C-PS starts this before
        its steering workers first reconcile, so a commitment held at start keeps its rule.
        Without a cluster sessions are not persisted: after a restart there is none, and the
        forwarders' rules of the sessions the C-PS no longer knows are removed by that
        reconciliation. In a cluster the sessions the others keep are read first (and
        followed from then on), so their commitments are among those handed."""
        if self._decisions.records is not None:
            self._decisions.records.follow(self._decisions.adopt)
        with self._decisions.lock:
            held = list(self._decisions.sessions)
        self._decisions.steer(held)
        self._decisions.feeds.sync(self._decisions.config())
        self._sweeper.start()

    def close(self) -> None:
        """Stop the sweeper and close the sessions and subscriptions to the C-SMAs."""
        self._sweeper.stop()
        if self._decisions.records is not None:
            self._decisions.records.close()
        self._decisions.feeds.close()
        self._decisions.agents.close()

    def sweep(self) -> None:
        """Abort handoffs past their reservation or timeout; withdraw the steering of expired
        commitments (P8) and hand again what was not handed or not placed; purge closed
        sessions; subscribe to the C-SMAs running names now (M42). In a cluster only the
        leader does (``settings.acts``)."""
        if not self._acts():
            return
        softstate.sweep(self._decisions)
        self._decisions.save()
        self._decisions.feeds.sync(self._decisions.config())

    def saved(self, handler: RpcHandler) -> RpcHandler:
        """``handler`` followed by keeping what it changed in the cluster (when there is
        one), refused or not, before the agent gets its answer."""

        def run(principal: Principal, members: Json) -> Json:
            try:
                return handler(principal, members)
            finally:
                self._decisions.save()

        return run

    # ------------------------------------------------------------------ MSG-1, MSG-2, MSG-8

    def submit_descriptor(self, principal: Principal, members: Json) -> Json:
        """submit-descriptor (MSG-1): P0 admission (DP1), or a revised descriptor (P2),
        decided at once at T1 unless another trigger is named: a decision point of its own,
        its step not in flight (no step-boundary first). The same descriptor again is a
        retry, deferred while the commitment covers its step."""
        del principal
        doc: Json = dict(members["descriptor"])
        session_id = SessionId(str(doc["session-id"]))
        trigger_name = members.get("trigger")
        trigger = None if trigger_name is None else Trigger(str(trigger_name).split(":")[-1])
        now = self._decisions.clock()
        with self._decisions.lock:
            softstate.purge(self._decisions, now)
            session = self._decisions.sessions.get(session_id)
            if session is not None and session.tenant != doc["tenant"]:
                raise other_tenant("submit-descriptor")
            if session is not None and not session.open:
                raise closed_session("submit-descriptor", "descriptor/session-id", session_id)
            step = session.step if session is not None else None
            desc = descriptors.descriptor(doc, step_id=step)
            revised = True
            if session is None:
                account = SessionAccount.opened(session_limits(desc))
                session = Session(
                    session_id,
                    desc.tenant,
                    desc.service_id,
                    now,
                    doc,
                    desc,
                    last_activity=now,
                    turn=desc.turn_id,
                    step=desc.step_id,
                    account=account,
                )
                trigger = None
            else:  # P2: a revision is a decision point of its own, not a step in flight
                revised = doc != session.descriptor_doc
                session = replace(
                    session,
                    descriptor_doc=doc,
                    descriptor=desc,
                    last_activity=now,
                    turn=desc.turn_id or session.turn,
                    step=desc.step_id,
                    step_in_flight=session.step_in_flight and not revised,
                )
                trigger = trigger or Trigger.T1
            self._decisions.store(session)
        for request in descriptors.refinement_requests(desc, doc):  # MSG-3
            self._decisions.publish(request)
        decided = self._decisions.decide(session_id, trigger, force=trigger is None or revised)
        return decided.reply

    def step_boundary(self, principal: Principal, members: Json) -> Json:
        """step-boundary (MSG-2, P1): the accumulated working set and the new step; a step
        start decides at T1 (DP3) unless the commitment covers it, a turn start at T2, a
        wake-up at T3; a pause only records itself."""
        del principal
        boundary = str(members.get("boundary", "step-start"))
        now = self._decisions.clock()
        with self._decisions.lock:
            session = self._open(members, "step-boundary", now)
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
                session,
                descriptor_doc=doc,
                descriptor=desc,
                last_activity=now,
                state=state,
                turn=desc.turn_id,
                step=desc.step_id,
                step_in_flight=False,
            )
            self._decisions.store(session)
        trigger = {"step-start": Trigger.T1, "turn-start": Trigger.T2, "wake-up": Trigger.T3}
        if boundary in trigger:  # decided at the boundary, before the step runs (DP3)
            self._decisions.decide(session.session_id, trigger[boundary])
        if boundary == "step-start":
            with self._decisions.lock:
                found = self._decisions.sessions.get(session.session_id)
                if found is not None and found.open:
                    self._decisions.store(replace(found, step_in_flight=True))
        return {}

    def evaluate(self, principal: Principal, members: Json) -> Json:
        """evaluate (MSG-8 -> MSG-9) at the named trigger, optionally a revised descriptor."""
        del principal
        trigger = Trigger(str(members["trigger"]).split(":")[-1])
        point_name = members.get("decision-point")
        point = None if point_name is None else DecisionPoint(str(point_name).split(":")[-1])
        now = self._decisions.clock()
        with self._decisions.lock:
            session = self._open(members, "evaluate", now)
            doc = members.get("descriptor") or session.descriptor_doc
            changed: Json = {
                n: members[n]
                for n in ("turn-id", "step-id")
                if n in members and doc.get(n) != members[n]
            }
            if changed:
                doc = {**doc, **changed}
            if str(doc.get("tenant")) != session.tenant:
                raise other_tenant("evaluate")
            if doc is session.descriptor_doc:  # unchanged: no second parse, no second copy
                desc = session.descriptor
            else:
                desc = descriptors.descriptor(doc, step_id=session.step)
            session = replace(
                session,
                descriptor_doc=doc,
                descriptor=desc,
                last_activity=now,
                turn=desc.turn_id,
                step=desc.step_id,
            )
            self._decisions.store(session)
        reply = self._decisions.decide(session.session_id, trigger, point=point, force=True).reply
        reply.pop("evaluation", None)
        return reply

    def _open(self, members: Json, operation: str, now: float) -> Session:
        """Under the lock: purge, then the open session ``session-id`` names (else refused)."""
        softstate.purge(self._decisions, now)
        session = self._decisions.session(members["session-id"], operation, "session-id")
        if not session.open:
            raise closed_session(operation, "session-id", session.session_id)
        return session

    # ------------------------------------------------------------------ MSG-13

    def state_transfer_notice(self, principal: Principal, members: Json) -> Json:
        """state-transfer-notice (MSG-13): commit only on a usable working set, else abort
        (P9, M43); a completion repeated after the commit is acknowledged, any other notice
        for a settled handoff refused (it changes nothing)."""
        del principal
        config = self._decisions.config()
        now = self._decisions.clock()
        fx = Effects()
        with self._decisions.lock:
            handoff_id = str(members["handoff-id"])
            owner = self._decisions.handoffs.get(handoff_id)
            if owner is None or owner not in self._decisions.sessions:
                raise refused(
                    "state-transfer-notice",
                    "handoff-id",
                    f"no handoff {handoff_id!r}",
                    "unknown-handoff",
                )
            session = self._decisions.sessions[owner]
            before = session.handoff(handoff_id)
            assert before is not None
            notice = handoff.Notice.of(members)
            if handoff.stray(before, notice):
                raise handoff_settled(handoff_id, before.state.value, notice.status)
            _, bounds = self._decisions.policy(config, session)
            settings = self._decisions.settings_for(config, bounds, now)
            after = handoff.noticed(before, notice, now)
            if after.state is handoff.HandoffState.COMMITTED and after.moved:
                advertiser = self._decisions.book.advertiser.get(after.target)
                if advertiser is not None:
                    self._decisions.book.observed(advertiser)
            self._decisions.store(settled_handoff(session, before, after, settings, fx))
        self._decisions.follow(fx)
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
        with self._decisions.lock:
            if source is not None:
                contradicted = condition is InvalidationCondition.VALUE_CONTRADICTED
                self._decisions.book.observed(SourceId(str(source)), contradicted=contradicted)
            if session_id is not None:
                self._decisions.session(session_id, "invalidation-notice", "session-id")
            elif condition is InvalidationCondition.INSTANCE_DEGRADED and "csci-id" in members:
                hit = [
                    s.session_id
                    for s in self._decisions.sessions.values()
                    if s.open
                    and s.in_force is not None
                    and s.in_force.commitment.csci_id == members["csci-id"]
                ]
            else:
                hit = []
        element = members.get("element")
        named = None if element is None else _ELEMENTS.get(str(element).split(":")[-1])
        invalidation = Invalidation(condition, acted_on=True, element=named)
        trigger = tail.CONDITION_TRIGGER[condition]
        if session_id is None:
            for other in hit:
                self._decisions.decide(other, trigger, invalidation=invalidation, force=True)
            return {"acted-on": bool(hit)}
        step = tail.progress(members)
        if condition is InvalidationCondition.STEP_OVERRUN and step is not None:
            return self._decisions.tail(SessionId(str(session_id)), members, step)
        decided = self._decisions.decide(
            SessionId(str(session_id)), trigger, invalidation=invalidation, force=True
        )
        return _acted(decided)

    # ------------------------------------------------------------------ MSG-15, MSG-16

    def accounting_feedback(self, principal: Principal, members: Json) -> Json:
        """accounting-feedback (MSG-15, P11): charge once per report id, then DP9: budget
        thresholds notify, pace or refuse the next steps (M38, M46)."""
        del principal
        config = self._decisions.config()
        attribution = members["attribution"]
        fx = Effects()
        with self._decisions.lock:
            session = self._decisions.session(
                attribution["session-id"], "accounting-feedback", "attribution/session-id"
            )
            policy, _ = self._decisions.policy(config, session)
            session, notes = accounting.charged(session, members, policy.context.pacing)
            fx.notes.extend(notes)
            self._decisions.store(session)
        self._decisions.follow(fx)
        return {}

    def close_session(self, principal: Principal, members: Json) -> Json:
        """close-session (MSG-16, DP10): abort handoffs, release state at the C-SMAs; the
        records are kept for the retention after close (M39). Repeated, it does nothing."""
        del principal
        config = self._decisions.config()
        now = self._decisions.clock()
        fx = Effects()
        with self._decisions.lock:
            session = self._decisions.session(members["session-id"], "close-session", "session-id")
            if session.state == "closed":
                return {}
            _, bounds = self._decisions.policy(config, session)
            settings = self._decisions.settings_for(config, bounds, now)
            for entry in session.handoffs:
                stopped = handoff.aborted(
                    entry, handoff.AbortReason.SUPERSEDED, "session closed", now
                )
                session = settled_handoff(session, entry, stopped, settings, fx)
            released = members.get("released-key")
            fx.release.extend(releases(session, released, settings))
            session = replace(
                session, state="closed", closed_at=now, step_in_flight=False, last_activity=now
            )
            self._decisions.store(session)
            self._decisions.closed.append((now + bounds.retention_after_close, session.session_id))
            self._decisions.screenings.forget(session.session_id)
        self._decisions.follow(fx)
        return {}

    # ------------------------------------------------------------------ state

    def candidates_state(self) -> Json:
        """``agent-selection/candidates/candidate``: the resource view of each candidate as
        advertised (6.3) and the source-accuracy of its advertiser (14)."""
        book, configured = self._decisions.book, self._decisions.config().candidates
        with self._decisions.lock:
            accuracy = accuracy_json(book.advertiser, book.accuracy)
            documents = book.documents.documents()
        rendered = {str(e["csci-id"]): e for e in accuracy}
        for csci_id, document in documents.items():
            rendered.setdefault(csci_id, {"csci-id": csci_id})["resource-view"] = document
        # state of a candidate since taken out of the configuration is not shown (its entry
        # would have no cs-id); its advertisements stay until it is configured again
        found = [entry for key, entry in rendered.items() if CsciId(key) in configured]
        return {f"{MODULE}:candidates": {"candidate": found} if found else {}}

    def session_counts(self) -> dict[str, float]:
        """Sessions by state (the ``cats_agent_selection_sessions`` gauge)."""
        counts: dict[str, float] = {}
        with self._decisions.lock:
            for session in self._decisions.sessions.values():
                counts[session.state] = counts.get(session.state, 0) + 1
        return counts

    def sessions_state(self) -> Json:
        """``agent-selection/sessions``: every session, its records, commitments, handoffs."""
        config = self._decisions.config()
        with self._decisions.lock:
            now = self._decisions.clock()
            softstate.purge(self._decisions, now)
            sessions = list(self._decisions.sessions.values())
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
