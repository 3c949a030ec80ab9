"""The C-PS service-metrics application: report and select RPCs, tables, decisions, senders.

:class:`ServiceMetrics` owns the CST, the NST, the report-sender ledger and the bounded list of
decision records behind one lock; its handlers are registered with the server core by
:func:`register` (service-metrics-op 6.2, 8). The configuration comes from running through a
:class:`ConfigSource`, parsed once per revision of running.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from controller.cps import decisions, ingest, policy, render
from controller.cps.decisions import DecisionRecord, Statistics
from controller.cps.ingest import Attribution, SenderRecord
from controller.cps.policy import MODULE, CpsConfig, Json
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Principal,
    ReadRequest,
    Registrations,
    ServerCore,
)
from controller.selection import (
    CsciId,
    CsId,
    ForwarderId,
    SelectionIndex,
    SelectionRequest,
    explain,
    select,
)
from controller.selection.units import Timestamp

CST = f"/{MODULE}:computing-service-table"
NST = f"/{MODULE}:network-service-table"
DECISIONS = f"/{MODULE}:selection-decisions"
SENDERS = f"/{MODULE}:report-senders"
_CONFIG = ("selection-policy", "update-control", "csci-attachments")


class ConfigSource(Protocol):
    """Where the handlers get the configuration in force."""

    def __call__(self) -> CpsConfig:
        """The parsed selection-policy, update-control and csci-attachments of running."""
        ...


class RunningConfig:
    """Reads the C-PS configuration from running, cached by the revision of running."""

    def __init__(self, core: Callable[[], ServerCore]) -> None:
        self._core = core
        self._guard = threading.Lock()
        self._cached: tuple[str, CpsConfig] | None = None

    def __call__(self) -> CpsConfig:
        core = self._core()
        etag = core.revision(DatastoreName.RUNNING, None).etag
        with self._guard:
            if self._cached is not None and self._cached[0] == etag:
                return self._cached[1]
        containers = [self._read(core, name) for name in _CONFIG]
        parsed = policy.config(*containers)
        with self._guard:
            self._cached = (etag, parsed)
        return parsed

    @staticmethod
    def _read(core: ServerCore, name: str) -> Json:
        path = f"/{MODULE}:{name}"
        document = core.read(ReadRequest(DatastoreName.RUNNING, path), SYSTEM).document
        loaded: Any = json.loads(document) if document else {}
        found = loaded.get(f"{MODULE}:{name}", {}) if isinstance(loaded, dict) else {}
        return found if isinstance(found, dict) else {}


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
    ) -> None:
        self._config = config
        self._clock = clock
        self._publish = publish
        self._lock = threading.Lock()
        self.index = SelectionIndex()
        self.cst = self.index.cst
        self.nst = self.index.nst
        self._cst_meta: dict[tuple[str, str], Attribution] = {}
        self._nst_meta: dict[tuple[ForwarderId, ForwarderId], Attribution] = {}
        self._senders: dict[str, SenderRecord] = {}
        self._decisions: deque[DecisionRecord] = deque()
        self._statistics = Statistics()
        self._turn = 0

    # ------------------------------------------------------------------ reports

    def _admit(
        self, operation: str, principal: Principal, members: Json, config: CpsConfig
    ) -> tuple[SenderRecord, int]:
        """The sender's record if the report passes the checks; refuses it otherwise."""
        now = self._clock()
        sequence = int(str(members["sequence-number"]))
        timestamp = ingest.parse_time(str(members["timestamp"]))
        sender = principal.user
        record = self._senders.get(sender) or SenderRecord(sender, ingest.COMPONENT[operation], now)
        refusal = ingest.check_report(
            record, sequence, timestamp, now, config.update.max_clock_skew
        )
        if refusal is not None:
            self._senders[sender] = ingest.refused(record, refusal.reason)
            raise refusal.error(operation)
        return record, sequence

    def report_service_metrics(self, principal: Principal, members: Json) -> Json:
        """report-service-metrics: CST entries from a C-SMA (6.2.1, 8)."""
        config = self._config()
        now = self._clock()
        with self._lock:
            record, sequence = self._admit(ingest.SERVICE_REPORT, principal, members, config)
            accepted, refused = 0, []
            for item in members.get("entry", ()):
                attachment = config.attachments.get(str(item["csci-id"]))
                if not ingest.authorized(attachment, principal.user):
                    refused.append(_refused_entry(item, principal.user))
                    continue
                entry = ingest.cst_entry(item, now, config.update, attachment, members.get("site"))
                old = self.cst.get(entry.cs_id, entry.csci_id)
                self.index.put_cst(entry)
                key = (entry.cs_id, entry.csci_id)
                changed = ingest.cst_changed(old, entry)
                last_changed = now if changed else self._cst_meta[key].last_changed
                self._cst_meta[key] = Attribution(
                    principal.user,
                    sequence,
                    last_changed,
                    ingest.reported(item, ingest.CST_PASS_THROUGH),
                )
                accepted += 1
            self._senders[principal.user] = ingest.accepted(
                record, sequence, now, accepted, refused_entries=len(refused)
            )
        reply: Json = {"accepted-entries": accepted}
        if refused:
            reply["refused-entry"] = refused
        return reply

    def report_network_metrics(self, principal: Principal, members: Json) -> Json:
        """report-network-metrics: NST entries from a C-NMA (6.2.2, 8)."""
        config = self._config()
        now = self._clock()
        with self._lock:
            record, sequence = self._admit(ingest.NETWORK_REPORT, principal, members, config)
            paths = members.get("path", ())
            for item in paths:
                entry = ingest.nst_entry(item, now)
                old = self.nst.get(entry.ingress, entry.egress)
                self.index.put_nst(entry)
                key = (entry.ingress, entry.egress)
                changed = ingest.nst_changed(old, entry)
                last_changed = now if changed else self._nst_meta[key].last_changed
                self._nst_meta[key] = Attribution(
                    principal.user,
                    sequence,
                    last_changed,
                    ingest.reported(item, ingest.NST_PASS_THROUGH),
                    delay_in_us="delay-us" in item,
                )
            self._senders[principal.user] = ingest.accepted(
                record, sequence, now, len(paths), refused_entries=0
            )
        return {"accepted-entries": len(paths)}

    # ------------------------------------------------------------------ selection

    def select_service(self, principal: Principal, members: Json) -> Json:
        """select-service: the Joint Selection Algorithm with every candidate (6.2.3-6.2.5)."""
        config = self._config()
        cs_id = str(members["cs-id"])
        document = config.requirement_document(cs_id, members.get("requirement", {}))
        requirement = policy.requirement(document)
        asked: Json = {"cs-id": members["cs-id"], "ingress": members["ingress"]}
        for name in ("session-id", "dry-run"):
            if name in members:
                asked[name] = members[name]
        asked["requester"] = principal.user
        now = self._clock()
        with self._lock:
            self._turn += 1
            request = SelectionRequest(
                CsId(cs_id),
                ForwarderId(str(members["ingress"])),
                now,
                requirement,
                turn=self._turn,
                fallback_egresses=tuple(ForwarderId(e) for e in config.fallback_egresses(cs_id)),
            )
            report = str(members.get("candidate-report", "all"))
            if report == "all":
                outcome = explain(self.cst, self.nst, request, config.settings)
            else:
                outcome = select(self.index, request, config.settings)
            if report == "none":
                outcome = replace(outcome, candidates=())
            record = DecisionRecord(str(self._turn), now, asked, document, outcome, report)
            self._decisions.append(record)
            while len(self._decisions) > config.decision_retention:
                self._decisions.popleft()
            self._statistics = self._statistics.counted(outcome)
        return {"decision-id": record.decision_id, **decisions.outcome_json(outcome, report)}

    # ------------------------------------------------------------------ sessions

    def _entries_unusable(self, keys: list[tuple[CsId, CsciId]], now: Timestamp) -> None:
        """CST entries that became unusable (GAS 0, aged out, unhealthy, removed): affined
        sessions bound to them are re-routed per policy (6.2.5 Re-routing on Failure).

        Called without the lock held, after the change is in the tables.
        """
        del keys, now  # the sessions work fills this in (issue 5)

    def _observed_json(self, key: tuple[CsId, CsciId]) -> Json | None:
        """The ``observed`` container of a CST entry (feedback, plausibility flags), if any."""
        del key  # the plausibility work fills this in (issue 5)
        return None

    # ------------------------------------------------------------------ state

    def cst_state(self) -> Json:
        """``computing-service-table``, rendered now."""
        now = self._clock()
        with self._lock:
            entries = [
                render.cst_json(entry, self._cst_meta[(cs, entry.csci_id)], now)
                for cs in self.cst.services()
                for entry in self.cst.service(cs).values()
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
        """``selection-decisions``: statistics and the kept decision records."""
        with self._lock:
            records = [decisions.record_json(r) for r in self._decisions]
            values: Json = {"statistics": self._statistics.as_json()}
        if records:
            values["decision"] = records
        return {f"{MODULE}:selection-decisions": values}

    def senders_state(self) -> Json:
        """``report-senders``: one entry per sender with its counters."""
        with self._lock:
            owned: dict[str, int] = {}
            for meta in (*self._cst_meta.values(), *self._nst_meta.values()):
                owned[meta.sender] = owned.get(meta.sender, 0) + 1
            senders = [render.sender_json(r, owned.get(s, 0)) for s, r in self._senders.items()]
        return {f"{MODULE}:report-senders": {"sender": senders} if senders else {}}


def _refused_entry(item: Json, sender: str) -> Json:
    return {
        "cs-id": item["cs-id"],
        "csci-id": item["csci-id"],
        "reason": f"{MODULE}:sender-not-authorized",
        "detail": f"{sender} is not an authorized-sender of {item['csci-id']}",
    }


def register(registrations: Registrations, service: ServiceMetrics) -> None:
    """Add the RPC handlers and state providers of ietf-cats-service-metrics."""
    registrations.rpcs[f"/{MODULE}:report-service-metrics"] = service.report_service_metrics
    registrations.rpcs[f"/{MODULE}:report-network-metrics"] = service.report_network_metrics
    registrations.rpcs[f"/{MODULE}:select-service"] = service.select_service
    registrations.state[CST] = service.cst_state
    registrations.state[NST] = service.nst_state
    registrations.state[DECISIONS] = service.decisions_state
    registrations.state[SENDERS] = service.senders_state
