"""The C-PS service-metrics application: report and select RPCs, tables, decisions, senders.

:class:`ServiceMetrics` owns the CST, the NST, the report-sender ledger and the bounded list of
decision records behind one lock; its handlers are registered with the server core by
:func:`register` (service-metrics-op 6.2, 8). The configuration comes from running through a
:class:`ConfigSource`, parsed once per revision of running.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from controller.datastore.api import (
    Principal,
    Registrations,
    ServerCore,
)
from controller.errors import CatsError
from controller.observability.metrics import (
    CST_ENTRIES,
    NST_ENTRIES,
    REPORTS,
    SELECT_LATENCY,
)
from controller.observability.metrics import DECISIONS as DECISION_COUNTS
from controller.selection.joint import (
    HardConstraints,
    Outcome,
    ResultKind,
    SelectionRequest,
    explain,
    from_ms,
    select,
)
from controller.selection.joint.screening import lookup
from controller.selection.joint.tracking import TableChanges, TrackedIndex
from controller.selection.units import Timestamp
from controller.service_metrics import (
    decisions,
    identifiers,
    ingest,
    plausibility,
    policy,
    render,
    sessions,
)
from controller.service_metrics.decisions import DecisionRecord, Statistics, Trigger
from controller.service_metrics.dispatches import Dispatches
from controller.service_metrics.ingest import Attribution, SenderRecord
from controller.service_metrics.ledger import LedgerFile
from controller.service_metrics.plausibility import Plausibility, Sample, plausibility_settings
from controller.service_metrics.policy import MODULE, CpsConfig
from controller.service_metrics.provenance import (
    DEFAULT_MAX_AGE_S,
    open_archive,
    parse_time,
    provenance_json,
    rfc3339,
)
from controller.service_metrics.reports import ReportIngest
from controller.service_metrics.running import ParsedRunning, container
from controller.service_metrics.sessions import (
    Action,
    AffinitySettings,
    AffinityTable,
    Asked,
    Binding,
)
from controller.service_metrics.softstate import Applying, Effects
from controller.service_metrics.sweeper import Sweeper
from controller.types import CsciId, CsId, DataPath, ForwarderId, Json, SchemaPath, SessionId

CST = DataPath(f"/{MODULE}:computing-service-table")
NST = DataPath(f"/{MODULE}:network-service-table")
DECISIONS = DataPath(f"/{MODULE}:selection-decisions")
SENDERS = DataPath(f"/{MODULE}:report-senders")
LOG = logging.getLogger("catsctl.cps")
_CONFIG = ("selection-policy", "update-control", "csci-attachments", "plausibility")


class ConfigSource(Protocol):
    """Where the handlers get the configuration in force."""

    def __call__(self) -> CpsConfig:
        """The parsed selection-policy, update-control and csci-attachments of running."""
        ...


class RunningConfig(ParsedRunning[CpsConfig]):
    """Reads the C-PS configuration from running, cached by the revision of running."""

    def read(self, core: ServerCore) -> CpsConfig:
        """The selection-policy, update-control, csci-attachments and plausibility containers
        of running, parsed."""
        return policy.config(*[container(core, MODULE, name) for name in _CONFIG])


Publisher = Callable[[Json], None]
"""Emits one notification of ietf-cats-service-metrics, given as RFC 7951 JSON."""


def _no_publisher(document: Json) -> None:
    del document


class ServiceMetrics:
    """The C-PS state of ietf-cats-service-metrics and the handlers that change it.

    The CST and NST live in a :class:`SelectionIndex`, so select-service can use the TST index
    (``select``) as well as evaluate every candidate (``explain``). ``publish`` is called
    outside the lock with each notification document.
    """

    def __init__(
        self,
        config: ConfigSource,
        clock: Callable[[], Timestamp] = time.time,
        publish: Publisher = _no_publisher,
        state_dir: Path | None = None,
        decision_max_age: float = DEFAULT_MAX_AGE_S,
    ) -> None:
        self._config = config
        self._clock = clock
        self._publish: Publisher = lambda document: publish(identifiers.as_json(document))
        self._lock = threading.Lock()
        self.index = TrackedIndex()  # steering hook: which CS-IDs and ingresses changed
        self.on_tables_changed: Callable[[TableChanges], None] | None = None  # steering
        self.cst = self.index.cst
        self.nst = self.index.nst
        self._cst_meta: dict[tuple[CsId, CsciId], Attribution] = {}
        self._nst_meta: dict[tuple[ForwarderId, ForwarderId], Attribution] = {}
        self._ledger = LedgerFile(state_dir)  # replay protection across restarts (9)
        self._ledger_lock = threading.Lock()  # one ledger write at a time, outside self._lock
        self._senders: dict[str, SenderRecord] = self._ledger.load()
        self._ingest = ReportIngest(self.index, self._cst_meta, self._nst_meta, self._senders)
        self._sweeper = Sweeper(self.sweep)
        self._decisions: deque[DecisionRecord] = deque()
        self._statistics = Statistics()
        self._max_age = decision_max_age  # decision retention by age (count: the policy's)
        self._archive = open_archive(state_dir)
        self._unsaved: list[DecisionRecord] = []  # written behind by the sweeper
        self._restored: list[Json] = []  # records of before the restart, still retained
        self._turn = self._archive.last_number() if self._archive is not None else 0
        self._affinity = AffinityTable()  # affined sessions (6.2.4), under self._lock
        self._plausibility = Plausibility()  # feedback (9), its own leaf lock
        self._dispatches = Dispatches()  # selections since the reports (8), under self._lock
        CST_ENTRIES.set_function(lambda: len(self.cst))
        NST_ENTRIES.set_function(lambda: len(self.nst))

    # ------------------------------------------------------------------ reports

    def report_service_metrics(self, principal: Principal, members: Json) -> Json:
        """report-service-metrics: CST entries from a C-SMA (6.2.1, 8, 9)."""
        return self._admit(ingest.SERVICE_REPORT, principal, members)

    def report_network_metrics(self, principal: Principal, members: Json) -> Json:
        """report-network-metrics: NST entries from a C-NMA (6.2.2, 8, 9)."""
        return self._admit(ingest.NETWORK_REPORT, principal, members)

    def _admit(self, operation: str, principal: Principal, members: Json) -> Json:
        """Admit (sequence, clock skew, rate limit), then apply or hold one report; the
        notifications and re-routing it causes follow once the lock is released."""
        config = self._config()
        now = self._clock()
        ctx = Applying(now, config, Effects())
        kind = "service" if operation == ingest.SERVICE_REPORT else "network"
        try:
            with self._lock:
                answer = self._ingest.report(operation, principal.user, members, ctx)
            REPORTS.labels(kind, "accepted").inc()
            return answer
        except CatsError as exc:
            item = exc.items[0] if exc.items else None
            REPORTS.labels(kind, (item.app_tag or item.tag) if item else "refused").inc()
            raise
        finally:
            self._follow(ctx.fx, now)

    def _follow(self, fx: Effects, now: Timestamp) -> None:
        """Publish the notifications and re-route sessions of unusable entries; no lock held."""
        for document in fx.notes:
            self._publish(document)
        if fx.unusable:
            self._entries_unusable(fx.unusable, now)
        self._tables_changed()  # steering hook

    # ------------------------------------------------------------------ soft state

    def sweep(self) -> None:
        """Held reports and dampened prices due, aging, and the ledger write-behind (8, 9)."""
        config = self._config()
        now = self._clock()
        ctx = Applying(now, config, Effects())
        with self._lock:
            self._ingest.sweep(ctx)
            ledger = self._ingest.ledger_due(now)
        self._follow(ctx.fx, now)
        if ledger is not None:
            self._save(ledger)
        self._save_decisions(config)

    def _save_decisions(self, config: CpsConfig) -> None:
        """Write the new decision records behind (no lock held while writing)."""
        if self._archive is None:
            return
        with self._lock:
            unsaved, self._unsaved = self._unsaved, []
        oldest = self._clock() - self._max_age
        rows = [(int(r.decision_id), r.time, decisions.record_json(r)) for r in unsaved]
        self._archive.save(rows, config.decision_retention, oldest)

    def _save(self, ledger: dict[str, SenderRecord]) -> None:
        """Write the sender ledger (no lock held); a failed write is logged and retried."""
        try:
            with self._ledger_lock:
                self._ledger.save(ledger)
        except OSError:
            LOG.exception("the report-sender ledger could not be written")
            with self._lock:
                self._ingest.dirty = True

    def start(self) -> None:
        """Restore the decision records of before a restart (the core is there now) and start
        the sweeper thread (``controller.app`` does, on entering the application)."""
        if self._archive is not None:
            retention = self._config().decision_retention
            restored = self._archive.load(retention, self._clock() - self._max_age)
            with self._lock:
                self._restored = restored
        self._sweeper.start()

    def close(self) -> None:
        """Stop the sweeper and write the sender ledger."""
        self._sweeper.stop()
        with self._lock:
            ledger = self._ingest.take_ledger(self._clock())
        self._save(ledger)
        self._save_decisions(self._config())
        if self._archive is not None:
            self._archive.close()

    # ------------------------------------------------------------------ selection

    def select_service(self, principal: Principal, members: Json) -> Json:
        """select-service: the Joint Selection Algorithm (6.2.3-6.2.5) with session affinity
        (6.2.4): a session with session-affinity is bound to its CSCI-ID unless dry-run."""
        config = self._config()
        cs_id = CsId(str(members["cs-id"]))
        override: Json = members.get("requirement", {})
        document = config.requirement_document(cs_id, override)
        requirement = policy.requirement(document)
        asked: Json = {"cs-id": members["cs-id"], "ingress": members["ingress"]}
        for name in ("session-id", "dry-run"):
            if name in members:
                asked[name] = members[name]
        asked["requester"] = principal.user
        ingress = ForwarderId(str(members["ingress"]))
        session = members.get("session-id")
        affine = SessionId(str(session)) if session and requirement.session_affinity else None
        affinity = sessions.affinity_settings(config.policy)
        report = str(members.get("candidate-report", "all"))
        now = self._clock()
        with self._lock:
            self._affinity.purge(now, affinity.timeout)
            previous = self._affinity.get(affine) if affine is not None else None
            self._turn += 1
            request = SelectionRequest(
                cs_id,
                ingress,
                now,
                requirement,
                affined=previous.csci_id if previous and previous.cs_id == cs_id else None,
                turn=self._turn,
                fallback_egresses=tuple(ForwarderId(e) for e in config.fallback_egresses(cs_id)),
                penalties=self._penalties(cs_id, config),
            )
            started = time.perf_counter()
            outcome = self._decide(request, config, report)
            SELECT_LATENCY.observe(time.perf_counter() - started)
            record = self._keep(
                DecisionRecord(str(self._turn), now, asked, document, outcome, report), config
            )
            if "dry-run" not in members:
                newly = affine is None or self._bind(
                    previous,
                    Asked(affine, cs_id, ingress, now, record.decision_id, override),
                    outcome,
                    affinity.max_sessions,
                )
                chosen = outcome.csci_id if outcome.result is ResultKind.SELECTED else None
                key = (cs_id, chosen) if chosen is not None and newly else None
                self._plausibility.steered(key, session, ingress)
                self._dispatches.selected(outcome, now, config.update.dispatch)
        self._publish(decisions.notification_json(record))
        return {"decision-id": record.decision_id, **decisions.outcome_json(outcome, report)}

    def _penalties(self, cs_id: CsId, config: CpsConfig) -> dict[CsciId, float]:
        """The flagged-entry penalty of the flagged entries of a CS-ID (section 9)."""
        return self._plausibility.penalties(cs_id, plausibility_settings(config.plausibility))

    def _decide(self, request: SelectionRequest, config: CpsConfig, report: str) -> Outcome:
        """One selection: every candidate for 'all', the TST index otherwise (6.2.3); with
        dispatch accounting and selections pending, every candidate of the counted CST."""
        counted = self._dispatches.table(
            self.cst, request.cs_id, request.now, config.update.dispatch
        )
        if counted is not None:
            outcome = explain(counted, self.nst, request, config.settings)
        elif report == "all":
            outcome = explain(self.cst, self.nst, request, config.settings)
        else:
            outcome = select(self.index, request, config.settings)
        return replace(outcome, candidates=()) if report == "none" else outcome

    def _keep(self, record: DecisionRecord, config: CpsConfig) -> DecisionRecord:
        """Keep a decision record within decision-retention (count and age) and count it;
        under the lock."""
        self._decisions.append(record)
        oldest = record.time - self._max_age
        while len(self._decisions) > config.decision_retention or self._decisions[0].time < oldest:
            self._decisions.popleft()
        if self._archive is not None:
            self._unsaved.append(record)
        self._statistics = self._statistics.counted(record.outcome)
        outcome = record.outcome
        level = decisions.fallback_level(outcome.fallback_level)
        DECISION_COUNTS.labels(outcome.result.value, level, record.trigger.value).inc()
        return record

    def _bind(
        self, previous: Binding | None, asked: Asked, outcome: Outcome, max_sessions: int
    ) -> bool:
        """Bind an affined session to the selected CSCI-ID (6.2.4), under the lock; whether
        the session is newly steered to it (not kept on the entry it was bound to)."""
        binding = sessions.bound(previous, asked, outcome)
        if binding is None:
            return False
        self._affinity.put(binding, max_sessions)
        return previous is None or previous.key != binding.key

    # ------------------------------------------------------------------ steering hook

    def _tables_changed(self) -> None:
        """Hand the CS-IDs and ingresses whose tables changed to the steering (no lock held
        on entry): the southbound re-evaluates those pairs (6.2.3 step 7, 6.2.5)."""
        hook = self.on_tables_changed
        if hook is None:
            return
        with self._lock:
            changes = self.index.take_changes()
        if changes:
            hook(changes)

    def steering_outcomes(self, pairs: Sequence[tuple[CsId, ForwarderId]]) -> list[Outcome]:
        """The fast selection of each (CS-ID, ingress) pair with the configured requirement,
        without a decision record or affinity: what to install at each ingress forwarder
        (step 7; controller.southbound.steering)."""
        config = self._config()
        now = self._clock()
        requirements: dict[CsId, Any] = {}
        outcomes: list[Outcome] = []
        with self._lock:
            for cs_id, ingress in pairs:
                if cs_id not in requirements:
                    document = config.requirement_document(cs_id, {})
                    requirements[cs_id] = policy.requirement(document)
                request = SelectionRequest(
                    cs_id,
                    ingress,
                    now,
                    requirements[cs_id],
                    fallback_egresses=tuple(
                        ForwarderId(e) for e in config.fallback_egresses(cs_id)
                    ),
                    penalties=self._penalties(cs_id, config),
                )
                outcomes.append(select(self.index, request, config.settings))
        return outcomes

    # ------------------------------------------------------------------ provenance

    def steering_record(self, cs_id: CsId, ingress: ForwarderId, forwarder: str) -> str:
        """Keep the decision record of a service entry the steering installs at ``forwarder``
        (every candidate with its reasons, 6.2.3 Step 7); its decision-id."""
        config = self._config()
        now = self._clock()
        document = config.requirement_document(cs_id, {})
        with self._lock:
            self._turn += 1
            request = SelectionRequest(
                cs_id,
                ingress,
                now,
                policy.requirement(document),
                turn=self._turn,
                fallback_egresses=tuple(ForwarderId(e) for e in config.fallback_egresses(cs_id)),
                penalties=self._penalties(cs_id, config),
            )
            outcome = explain(self.cst, self.nst, request, config.settings)
            asked: Json = {"cs-id": cs_id, "ingress": ingress, "requester": f"steering {forwarder}"}
            record = DecisionRecord(
                str(self._turn), now, asked, document, outcome, "all", Trigger.RE_EVALUATION
            )
            self._keep(record, config)
        return record.decision_id

    def installed(self, forwarder: str, cs_id: CsId, entry: Json | None) -> None:
        """The steering intends ``entry`` (None: no entry) at ``forwarder`` from now on."""
        if self._archive is not None:
            decision = None if entry is None else str(entry.get("decision-id"))
            self._archive.install(forwarder, str(cs_id), decision, entry, self._clock())

    def steering_provenance(self, principal: Principal, members: Json) -> Json:
        """``cc:steering-provenance``: the decision of a forwarder's service entry at a time."""
        del principal
        if self._archive is None:
            return {}
        at = members.get("at")
        moment = parse_time(str(at)) if at is not None else self._clock()
        found = self._archive.installed(str(members["forwarder"]), str(members["cs-id"]), moment)
        return provenance_json(found)

    # ------------------------------------------------------------------ sessions

    def reroute(self, keys: Iterable[tuple[CsId, CsciId]]) -> None:
        """Re-route the affined sessions of CST entries that are unusable now (6.2.5), as the
        ingest does when an entry ages out, gets GAS 0, turns unhealthy or is removed."""
        self._entries_unusable(list(keys), self._clock())

    def _entries_unusable(self, keys: list[tuple[CsId, CsciId]], now: Timestamp) -> None:
        """CST entries that became unusable (GAS 0, aged out, unhealthy, removed): affined
        sessions bound to them are re-routed per policy (6.2.5 Re-routing on Failure).

        Called without the lock held, after the change is in the tables. An entry that is
        usable again by now (a newer report) is left alone; new requests never select an
        unusable entry (6.2.3 Step 1 screens it out), so nothing else is marked.
        """
        config = self._config()
        affinity = sessions.affinity_settings(config.policy)
        published: list[Json] = []
        with self._lock:
            self._affinity.purge(now, affinity.timeout)
            for key in keys:
                entry = self.cst.get(*key)
                if entry is None:
                    self._plausibility.forget(key)
                elif lookup(entry, HardConstraints(), now) is None:
                    continue
                for binding in self._affinity.bound_to(key):
                    published.extend(self._reroute(binding, affinity, config, now))
        for document in published:
            self._publish(document)

    def _reroute(
        self, binding: Binding, affinity: AffinitySettings, config: CpsConfig, now: Timestamp
    ) -> list[Json]:
        """Migrate (a re-routing selection) or terminate one affined session, under the lock;
        a migration that finds no CSCI-ID terminates. Returns the notifications to publish."""
        action = affinity.action_for(binding.cs_id)
        if action is Action.TERMINATE:
            self._affinity.remove(binding.session_id)
            return [sessions.rerouted_json(binding, action, None, None)]
        document = config.requirement_document(binding.cs_id, binding.override)
        self._turn += 1
        request = SelectionRequest(
            binding.cs_id,
            binding.ingress,
            now,
            policy.requirement(document),
            turn=self._turn,
            fallback_egresses=tuple(
                ForwarderId(e) for e in config.fallback_egresses(binding.cs_id)
            ),
            penalties=self._penalties(binding.cs_id, config),
        )
        outcome = self._decide(request, config, "examined")
        asked: Json = {
            "cs-id": binding.cs_id,
            "ingress": binding.ingress,
            "session-id": binding.session_id,
        }
        record = DecisionRecord(
            str(self._turn), now, asked, document, outcome, "examined", Trigger.RE_ROUTING
        )
        self._keep(record, config)
        moved = sessions.migrated(binding, outcome, record.decision_id, now)
        if moved is None:
            self._affinity.remove(binding.session_id)
            action = Action.TERMINATE
        else:
            self._affinity.put(moved, affinity.max_sessions)
            self._plausibility.steered(moved.key, binding.session_id, binding.ingress)
        rerouted = sessions.rerouted_json(binding, action, moved, record.decision_id)
        return [decisions.notification_json(record), rerouted]

    def _observed_json(self, key: tuple[CsId, CsciId]) -> Json | None:
        """The ``observed`` container of a CST entry (feedback, plausibility flags), if any;
        safe with or without the lock held (section 9)."""
        return self._plausibility.observed(key)

    def report_session_feedback(self, principal: Principal, members: Json) -> Json:
        """report-session-feedback: observed values for the plausibility checks (5.4.2, 9)."""
        settings = plausibility_settings(self._config().plausibility)
        key = (CsId(str(members["cs-id"])), CsciId(str(members["csci-id"])))
        session = None if "session-id" not in members else str(members["session-id"])
        timed = members.get("response-time")
        observed = None if timed is None else from_ms(str(timed))
        with self._lock:
            entry = self.cst.get(*key)
            if entry is None:
                raise plausibility.unknown_entry(*key)
            bound = self._affinity.get(SessionId(session)) if session is not None else None
            ingress = self._plausibility.ingress_of(session) or (bound.ingress if bound else None)
            expected = plausibility.expected_time(entry, self.nst, ingress)
            honored = members["outcome"] != "refused"
            sample = Sample(honored, observed, expected)
            if not self._plausibility.record(key, session, principal.user, sample, settings):
                raise plausibility.limit_reached(session, settings.max_feedback_per_session)
        return {}

    def affined_sessions_state(self) -> Json:
        """``affined-sessions``: the bindings in force (6.2.4, 6.2.5)."""
        timeout = sessions.affinity_settings(self._config().policy).timeout
        now = self._clock()
        with self._lock:
            self._affinity.purge(now, timeout)
            bound = [sessions.binding_json(b) for b in self._affinity]
        return {f"{MODULE}:affined-sessions": {"session": bound} if bound else {}}

    # ------------------------------------------------------------------ state

    def cst_state(self) -> Json:
        """``computing-service-table``, rendered now, with what feedback observed."""
        now = self._clock()
        with self._lock:
            entries = [
                render.cst_json(entry, self._cst_meta[key], now, self._observed_json(key))
                for cs in self.cst.services()
                for entry in self.cst.service(cs).values()
                for key in ((cs, entry.csci_id),)
            ]
        return {f"{MODULE}:computing-service-table": {"entry": entries} if entries else {}}

    def nst_state(self) -> Json:
        """``network-service-table``, rendered now."""
        now = self._clock()
        lifetime = self._config().settings.network_entry_lifetime
        with self._lock:
            entries = [
                render.nst_json(entry, self._nst_meta[key], now, lifetime)
                for key, entry in ((k, self.nst.get(*k)) for k in self._nst_meta)
                if entry is not None
            ]
        return {f"{MODULE}:network-service-table": {"entry": entries} if entries else {}}

    def decisions_state(self) -> Json:
        """``selection-decisions``: statistics and the kept decision records (those of before
        a restart first, while they are in the retained window)."""
        retention = self._config().decision_retention
        with self._lock:
            live = [decisions.record_json(r) for r in self._decisions]
            room = max(0, retention - len(live))
            oldest = rfc3339(self._clock() - self._max_age)
            restored = [r for r in self._restored if str(r.get("time", "")) >= oldest]
            records = (restored[-room:] if room else []) + live
            values: Json = {"statistics": self._statistics.as_json()}
        if records:
            values["decision"] = records
        return {f"{MODULE}:selection-decisions": values}

    def senders_state(self) -> Json:
        """``report-senders``: one entry per sender with its counters."""
        cst, nst = self._ingest.cst.owned, self._ingest.nst.owned
        with self._lock:
            senders = [
                render.sender_json(r, len(cst.get(s, ())) + len(nst.get(s, ())))
                for s, r in self._senders.items()
            ]
        return {f"{MODULE}:report-senders": {"sender": senders} if senders else {}}


def _rpc(handler: Callable[[Principal, Json], Json]) -> Callable[[Principal, Json], Json]:
    """A handler that sees identifiers as text and answers them in RFC 7951 form."""

    def typed(principal: Principal, members: Json) -> Json:
        found: Json = identifiers.as_json(handler(principal, identifiers.as_text(members)))
        return found

    return typed


def _state(provider: Callable[[], Json]) -> Callable[[], Json]:
    def typed() -> Json:
        found: Json = identifiers.as_json(provider())
        return found

    return typed


def register(registrations: Registrations, service: ServiceMetrics) -> None:
    """Add the RPC handlers and state providers of ietf-cats-service-metrics.

    Numeric identifiers become text on the way in and JSON numbers on the way out
    (:mod:`.identifiers`); report inputs use its flat ``items_as_text``, the hot path.
    """
    rpcs, state = registrations.rpcs, registrations.state
    rpcs[SchemaPath(f"/{MODULE}:report-service-metrics")] = service.report_service_metrics
    rpcs[SchemaPath(f"/{MODULE}:report-network-metrics")] = service.report_network_metrics
    rpcs[SchemaPath(f"/{MODULE}:select-service")] = _rpc(service.select_service)
    rpcs[plausibility.FEEDBACK] = _rpc(service.report_session_feedback)
    state[sessions.AFFINED] = _state(service.affined_sessions_state)
    state[CST] = _state(service.cst_state)
    state[NST] = service.nst_state
    state[DECISIONS] = _state(service.decisions_state)
    state[SENDERS] = service.senders_state
