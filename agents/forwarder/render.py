"""The forwarder's state and notifications as RFC 7951 JSON of ietf-cats-steering (pure).

``counters`` of each service entry and rule and the ``summary`` are rendered when read; the
notifications are ``rule-expired`` (agent draft 6.5, 8.1 P8) and ``step-progress``, the MSG-14
content of a forwarder (agent draft 8.1 P10, 8.3 T8, 9.1, M35).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.common.clock import date_and_time
from agents.forwarder.model import MODULE
from agents.forwarder.table import Status, Table
from agents.forwarder.values import EntryKey, EntryState, Kind, Request, Rule
from controller.types import CommitmentId, CsId, ForwarderId, Json


@dataclass(frozen=True, slots=True)
class Counters:
    """What the data plane counted for one entry."""

    flows: int = 0
    packets: int = 0
    bytes: int = 0
    last_match: float | None = None
    repeated: int = 0  # rules: edits that re-sent the instruction unchanged
    expirations: int = 0  # service entries: times the entry expired


@dataclass(frozen=True, slots=True)
class Totals:
    """Summary counters since ``discontinuity``."""

    discontinuity: float
    last_change: float
    rule_expirations: int = 0
    service_expirations: int = 0
    tail_events: int = 0


def _counters(status: Status, counters: Counters, flows: int, kind: Kind) -> Json:
    found: Json = {
        "state": status.state.value,
        "matched-flows": str(counters.flows),
        "matched-packets": str(counters.packets),
        "matched-bytes": str(counters.bytes),
        "active-flows": flows,
    }
    optional = {
        "reason": status.reason,
        "activated-at": status.activated_at and date_and_time(status.activated_at),
        "effective-expires-at": status.expires_at and date_and_time(status.expires_at),
        "last-match": counters.last_match and date_and_time(counters.last_match),
    }
    found.update({name: value for name, value in optional.items() if value})
    if kind is Kind.RULE:
        found["repeated-instructions"] = str(counters.repeated)
        if status.superseded_by is not None:
            found["superseded-by"] = status.superseded_by
    else:
        found["expirations"] = str(counters.expirations)
    return found


def state(
    table: Table,
    counters: Mapping[EntryKey, Counters],
    flows: Mapping[EntryKey, int],
    totals: Totals,
) -> Json:
    """``steering`` state: per-entry counters and the summary."""
    empty = Counters()
    services, rules = [], []
    for key, status in table.status.items():
        body = _counters(status, counters.get(key, empty), flows.get(key, 0), key.kind)
        if key.kind is Kind.SERVICE:
            services.append({"cs-id": _cs(key.name), "counters": body})
        else:
            rules.append({"commitment-id": key.name, "counters": body})
    states = [(k.kind, s.state) for k, s in table.status.items()]
    summary = {
        "active-services": states.count((Kind.SERVICE, EntryState.ACTIVE)),
        "active-rules": states.count((Kind.RULE, EntryState.ACTIVE)),
        "expired-rules": states.count((Kind.RULE, EntryState.EXPIRED)),
        "superseded-rules": states.count((Kind.RULE, EntryState.SUPERSEDED)),
        "failed-entries": sum(state is EntryState.FAILED for _, state in states),
        "active-flows": sum(flows.values()),
        "rule-expirations": str(totals.rule_expirations),
        "service-expirations": str(totals.service_expirations),
        "tail-events": str(totals.tail_events),
        "last-change": date_and_time(totals.last_change),
        "discontinuity-time": date_and_time(totals.discontinuity),
    }
    steering: Json = {"summary": summary}
    if services:
        steering["service"] = services
    if rules:
        steering["rule"] = rules
    return {f"{MODULE}:steering": steering}


def rule_expired(table: Table, key: EntryKey, counters: Counters) -> Json:
    """The rule-expired notification of an entry that reached its expiry time."""
    status = table.status[key]
    assert status.expires_at is not None
    body: Json = {"entry-kind": key.kind.value, "expired-at": date_and_time(status.expires_at)}
    if key.kind is Kind.RULE:
        rule = table.steering.rules[CommitmentId(key.name)]
        body.update({"commitment-id": rule.commitment_id, "cs-id": _cs(rule.cs_id)})
        if rule.match.session_id is not None:
            body["session-id"] = rule.match.session_id
    else:
        service = table.steering.services[CsId(key.name)]
        body["cs-id"] = _cs(service.cs_id)
        if service.commitment_id is not None:
            body["commitment-id"] = service.commitment_id
    body["matched-flows"] = str(counters.flows)
    return {f"{MODULE}:rule-expired": body}


def _cs(cs_id: str) -> object:
    """A cs-id as RFC 7951 prints it: the uint32 member of the union is a JSON number."""
    if cs_id.isdigit() and str(int(cs_id)) == cs_id and int(cs_id) < 2**32:
        return int(cs_id)
    return cs_id


def step_progress(
    forwarder: ForwarderId | None,
    rule: Rule,
    request: Request,
    elapsed_ms: float,
    now: float,
) -> Json:
    """The step-progress notification of a tail event (elapsed beyond expectation x factor)."""
    assert rule.progress is not None
    body: Json = {
        "commitment-id": rule.commitment_id,
        "cs-id": _cs(rule.cs_id),
        "csci-id": rule.csci_id,
        "elapsed": f"{elapsed_ms:.3f}",
        "expected": f"{rule.progress.expected_ms:.3f}",
        "tail-factor": f"{rule.progress.tail_factor:.2f}",
        "collected-at": date_and_time(now),
        "confidence": "asserted",
    }
    if forwarder is not None:
        body["forwarder-id"] = forwarder
        body["source"] = forwarder
    attribution = {
        "session-id": request.session_id,
        "turn-id": request.turn_id,
        "step-id": request.step_id,
    }
    body.update({name: value for name, value in attribution.items() if value is not None})
    return {f"{MODULE}:step-progress": body}
