"""The C-PS's own policies, through the project's selection code (never re-implemented here).

- ``cats-jsa``: the Joint Selection Algorithm (service-metrics-op 6.2.3-6.2.5,
  :func:`controller.selection.joint.explain`) over the CST built from the C-SMAs' reports and
  the NST of the path delays, with the configured requirement; prefix caches are invisible
  to it.
- ``cats``: the same screening (Steps 1-5 and the overrides keep the candidates), then the
  agent-selection procedure P4-P7 (:func:`controller.selection.mapping.evaluate`) over the
  eligible instances: forwarding (the path), computing (the waiting work the C-SMA reported)
  and storage (the prompt's KV blocks are the step's working set; an instance holds what its
  C-SMA's state view says), combined and judged by the configured selection context, with the
  conversation's previous instance as the commitment in force.

Both decide on what the report path delivered: stale by the reporting interval, the delta
thresholds and the delay. With update-control/dispatch-accounting enabled, the selection
core counts the C-PS's own selections since each report in
(:mod:`controller.selection.dispatch`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from controller.evaluate.cache import CacheMirror
from controller.evaluate.engine import Decision, RunSettings, World
from controller.evaluate.policyfile import CpsPolicy
from controller.evaluate.reporting import ChannelSpec, Sample, freshness
from controller.evaluate.server import Job
from controller.evaluate.trace import Request
from controller.evaluate.views import (
    SERVICE,
    TENANT,
    csci,
    cst_entry,
    key,
    nst,
    path,
    resource_view,
)
from controller.selection.dispatch import Dispatch, Ledger
from controller.selection.joint import (
    CandidateReport,
    ComputingServiceTable,
    CstEntry,
    NetworkServiceTable,
    Outcome,
    SelectionRequest,
    explain,
)
from controller.selection.joint.accounted import accounted_entry
from controller.selection.joint.algorithm import run_filters
from controller.selection.mapping import (
    Candidate,
    Commitment,
    Descriptor,
    EvaluationRequest,
    Policy,
    ResourceView,
    SessionPosition,
    WorkingSetElement,
    evaluate,
)
from controller.selection.mapping.accounted import accounted_view
from controller.selection.mapping.vocabulary import ElementClass, Trigger, ValueCondition
from controller.types import CommitmentId, CsciId, ForwarderId, SessionId

CPS = "cps"
NST_REFRESH = 10.0
"""Seconds between two C-NMA reports of the path delays."""
ESTIMATE = 1.0
"""The Computing Time (s) a C-SMA advertises, as an estimate, before it measured one."""


class _Held:
    """The C-PS's tables: CST entries from the reports, the NST, the dispatch ledger."""

    def __init__(self, policy: CpsPolicy) -> None:
        self.policy = policy
        self.ledger = Ledger()
        self.entries: dict[int, tuple[Sample, CstEntry]] = {}
        self.nst = NetworkServiceTable()
        self.nst_at = -math.inf
        self.turn = 0
        self.per_request = True  # False: every request asks with turn 0 (steering entries)

    def channel(self, settings: RunSettings) -> ChannelSpec:
        update = self.policy.update
        return ChannelSpec(
            CPS,
            settings.interval,
            settings.processing,
            thresholds=update.delta,
            heartbeat=float(update.heartbeat_interval),
        )

    def tables(self, ingress: int, world: World) -> tuple[list[CstEntry], SelectionRequest]:
        """The CST entries of CS-ID llm as the C-PS holds them now (with the selections not
        yet reported counted in), and the selection request of ``ingress``."""
        now = world.now
        topology = world.topology
        if now - self.nst_at > NST_REFRESH:
            self.nst = NetworkServiceTable()
            for entry in nst(topology, now):
                self.nst.put(entry)
            self.nst_at = now
        accounting = self.policy.update.dispatch
        lifetime = float(self.policy.update.lifetime)
        channel = world.channels[CPS]
        entries: list[CstEntry] = []
        for instance in topology.instances:
            index = instance.index
            sample = channel.held[index]
            if sample is None:
                continue
            expiry = channel.refreshed(index, now) + lifetime
            cached = self.entries.get(index)
            if cached is None or cached[0] is not sample or cached[1].expiry != expiry:
                cached = (sample, cst_entry(instance, sample, ESTIMATE, expiry))
                self.entries[index] = cached
                synced = channel.synced[index]
                self.ledger = self.ledger.pruned(csci(instance), min(sample.at, synced))
            pending = self.ledger.since(csci(instance), sample.at)
            entries.append(accounted_entry(cached[1], pending, now, accounting))
        self.turn += 1 if self.per_request else 0
        request = SelectionRequest(
            SERVICE,
            ForwarderId(topology.ingresses[ingress].name),
            now,
            self.policy.requirement,
            turn=self.turn,
        )
        return entries, request

    def explain(self, ingress: int, world: World) -> Outcome:
        """The Joint Selection Algorithm's outcome (6.2.3 Steps 1-7, 6.2.5)."""
        entries, request = self.tables(ingress, world)
        cst = ComputingServiceTable()
        for entry in entries:
            cst.put(entry)
        return explain(cst, self.nst, request, self.policy.settings)

    def screen(self, ingress: int, world: World) -> tuple[CandidateReport, ...]:
        """The candidates Steps 1-5 and the policy overrides keep (6.2.3, 6.2.4)."""
        entries, request = self.tables(ingress, world)
        requirement = request.requirement
        run = run_filters(entries, self.nst, request, requirement.hard, self.policy.settings)
        return run.feasible

    def dispatched(self, world: World, ingress: int, index: int, dispatch: Dispatch) -> None:
        """Record a selection for the accounting (when it is enabled)."""
        if self.policy.update.dispatch.enabled:
            csci_id = csci(world.topology.instances[index])
            self.ledger = self.ledger.record(csci_id, dispatch)


def _index(world: World, csci_id: CsciId | None) -> int | None:
    return world.index.get(csci_id) if csci_id is not None else None


def _nearest(world: World, ingress: int) -> int:
    rtts = world.rtt[ingress]
    return rtts.index(min(rtts))


class CatsJsa:
    """The Joint Selection Algorithm alone."""

    def __init__(self, policy: CpsPolicy, name: str = "cats-jsa") -> None:
        self.name = name
        self._held = _Held(policy)

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return (self._held.channel(settings),)

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        outcome = self._held.explain(ingress, world)
        chosen = _index(world, outcome.csci_id)
        if chosen is None:
            chosen = _nearest(world, ingress)
        arrives = world.now + world.rtt[ingress][chosen] / 2
        self._held.dispatched(world, ingress, chosen, Dispatch(arrives))
        heard = world.channels[CPS].refreshed(chosen, world.now)
        outdated = world.now - heard > freshness(world.settings.interval)
        return Decision(chosen, estimated=bool(outcome.estimated), stale=outdated)

    def observe(self, event: int, job: Job, world: World) -> None:
        return None


class CatsSteer(CatsJsa):
    """The Joint Selection as the C-PS installs it at an ingress forwarder (service-metrics-op
    6.2.3 step 7): recomputed when the tables change, the same for every request until then,
    so no selection of one request is counted (the closed-loop bed's data path)."""

    def __init__(self, policy: CpsPolicy, name: str = "cats-steer") -> None:
        update = replace(policy.update, dispatch=replace(policy.update.dispatch, enabled=False))
        super().__init__(replace(policy, update=update), name)
        self._held.per_request = False  # steering_outcomes asks with turn 0


class Cats:
    """Joint Selection screening, then the agent-selection valuation with state presence."""

    def __init__(self, policy: CpsPolicy, name: str = "cats") -> None:
        self.name = name
        self._held = _Held(policy)
        self._policy = Policy(policy.context)
        self._mirrors: list[CacheMirror] = []
        self._views: dict[int, tuple[tuple[Sample, float, int], ResourceView]] = {}
        self._paths: dict[tuple[int, int], tuple[ResourceView, ResourceView]] = {}
        self._sessions: dict[int, tuple[CsciId, float, int]] = {}
        self._elements: dict[tuple[int, int], WorkingSetElement] = {}

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return (self._held.channel(settings),)

    def _view(self, index: int, ingress: int, sample: Sample, world: World) -> ResourceView:
        """The view of an instance from its last report and the C-SMA's state view, with the
        path from ``ingress``; rebuilt only when one of them changed."""
        mirror = self._mirrors[index]
        channel = world.channels[CPS]
        mirror.advance(channel.synced[index])
        asserted = channel.refreshed(index, world.now)
        cached = self._views.get(index)
        if cached is None or cached[0] != (sample, asserted, mirror.version):
            instance = world.topology.instances[index]
            bound = freshness(world.settings.interval)
            base = resource_view(instance, (sample, asserted), mirror, world.topology, bound)
            cached = ((sample, asserted, mirror.version), base)
            self._views[index] = cached
        base = cached[1]
        known = self._paths.get((index, ingress))
        if known is None or known[0] is not base:
            instance = world.topology.instances[index]
            known = (base, replace(base, paths=(path(world.topology, ingress, instance),)))
            self._paths[(index, ingress)] = known
        return known[1]

    def _element(self, block: int, tokens: int, per_token: int) -> WorkingSetElement:
        found = self._elements.get((block, tokens))
        if found is None:
            found = WorkingSetElement(
                key(block)[1], ElementClass.MODEL_CONTEXT_STATE, tokens * per_token, tokens
            )
            self._elements[(block, tokens)] = found
        return found

    def _descriptor(self, request: Request, world: World) -> Descriptor:
        size = world.topology.block_tokens
        per_token = world.topology.kv_bytes_per_token
        elements = tuple(
            self._element(block, request.block_tokens(position, size), per_token)
            for position, block in enumerate(request.blocks)
        )
        return Descriptor(
            SERVICE,
            SessionId(str(request.conversation)),
            TENANT,
            step_id=request.index,
            working_set=elements,
        )

    def _position(self, request: Request) -> tuple[SessionPosition, Trigger | None]:
        known = self._sessions.get(request.conversation)
        if known is None:
            return SessionPosition(), None
        current, moved_at, first = known
        commitment = Commitment(CommitmentId(str(request.conversation)), current, first, moved_at)
        return SessionPosition(commitment, moved_at), Trigger.T1

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        if not self._mirrors:
            self._mirrors = world.mirrors()
        held_state = self._held
        feasible = held_state.screen(ingress, world)
        held = [world.held(CPS, i.index) for i in world.topology.instances]
        accounting = held_state.policy.update.dispatch
        candidates = []
        for report in feasible:
            index = _index(world, report.csci_id)
            sample = None if index is None else held[index]
            if index is not None and sample is not None:
                ledger = held_state.ledger
                view = accounted_view(
                    self._view(index, ingress, sample, world),
                    ledger.since(report.csci_id, sample.at),
                    ledger.holding(report.csci_id, world.channels[CPS].synced[index]),
                    world.now,
                    accounting,
                )
                candidates.append(Candidate(report.csci_id, view))
        position, trigger = self._position(request)
        chosen: int | None = None
        estimated = outdated = False
        work = wait = None
        if candidates:
            evaluation = evaluate(
                EvaluationRequest(self._descriptor(request, world), position, trigger),
                candidates,
                self._policy,
                world.now,
            )
            chosen = _index(world, evaluation.selected)
            if chosen is not None:
                selected = evaluation.result(csci(world.topology.instances[chosen]))
                if selected.scored is not None:
                    work = selected.scored.valuation.storage
                    wait = selected.scored.valuation.computing
                conditions = {
                    q.condition for q in evaluation.qualified if q.csci_id == evaluation.selected
                }
                estimated = ValueCondition.ESTIMATED in conditions
                outdated = ValueCondition.STALE in conditions
        if chosen is None:
            chosen = _nearest(world, ingress)
        csci_id = csci(world.topology.instances[chosen])
        previous = self._sessions.get(request.conversation)
        if previous is None or previous[0] != csci_id:
            self._sessions[request.conversation] = (csci_id, world.now, request.index)
        arrives = world.now + world.rtt[ingress][chosen] / 2
        keys = frozenset(key(block) for block in request.blocks)
        done = arrives + (wait or 0.0) + (work or 0.0)
        held_state.dispatched(world, ingress, chosen, Dispatch(arrives, work, keys, done))
        return Decision(chosen, estimated=estimated, stale=outdated)

    def observe(self, event: int, job: Job, world: World) -> None:
        return None
