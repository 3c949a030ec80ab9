"""ietf-cats-steering configuration (RFC 7951 JSON, validated by the server core) as values.

libyang has checked types, ranges, musts and mandatory nodes, so this only converts: numbers
printed as JSON numbers or strings (unions, decimal64) become str, int or float, defaults
are filled in. Each entry keeps a fingerprint, its canonical JSON, which tells a repeated
instruction (MSG-10 idempotence) from a revised one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agents.common.clock import epoch
from agents.forwarder.values import (
    Affinity,
    EntryKey,
    Expiry,
    FallbackMode,
    FlowMatch,
    Kind,
    Match,
    Progress,
    Rule,
    ServiceEntry,
    Steering,
)
from controller.types import CommitmentId, CsciId, CsId, DataPath, ForwarderId, SessionId

MODULE = "ietf-cats-steering"
ROOT = DataPath(f"/{MODULE}:steering")
Json = Mapping[str, Any]
_ENTRY = re.compile(
    rf"^{re.escape(ROOT)}/(?:{MODULE}:)?(?P<kind>rule|service)"
    r"\[(?:commitment-id|cs-id)=(?P<q>['\"])(?P<key>.*?)(?P=q)\]"
)
_KEY_LEAF = {Kind.RULE: "commitment-id", Kind.SERVICE: "cs-id"}


def fingerprint(entry: Json) -> str:
    """The canonical form of a configured entry (key order and number spelling aside)."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), default=str)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    return None if value is None else int(str(value))


def expiry(entry: Json) -> Expiry:
    """The ``expiry`` grouping of an entry."""
    installed, expires = entry.get("installed-at"), entry.get("expires-at")
    return Expiry(
        epoch(str(installed)) if installed is not None else None,
        _int(entry.get("lifetime")),
        epoch(str(expires)) if expires is not None else None,
    )


def service_entry(entry: Json) -> ServiceEntry:
    """One ``service`` list entry."""
    return ServiceEntry(
        CsId(str(entry["cs-id"])),
        FallbackMode(entry.get("fallback-mode", FallbackMode.NORMAL)),
        CsciId(str(entry["csci-id"])) if "csci-id" in entry else None,
        ForwarderId(str(entry["egress-forwarder"])) if "egress-forwarder" in entry else None,
        tuple(CsciId(str(c)) for c in entry.get("local-csci-id", ())),
        CommitmentId(str(entry["commitment-id"])) if "commitment-id" in entry else None,
        expiry(entry),
        fingerprint(entry),
    )


def match(entry: Json) -> Match:
    """The ``match`` container of a rule."""
    flow: Json = entry.get("flow", {})
    session = entry.get("session-id")
    return Match(
        SessionId(str(session)) if session is not None else None,
        _int(entry.get("turn-id")),
        _int(entry.get("step-id")),
        _int(entry.get("first-step")),
        _int(entry.get("last-step")),
        FlowMatch(
            _text(flow.get("source-prefix")),
            _text(flow.get("destination-prefix")),
            _int(flow.get("protocol")),
            _int(flow.get("source-port")),
            _int(flow.get("destination-port")),
        ),
    )


def rule(entry: Json) -> Rule:
    """One ``rule`` list entry."""
    monitoring: Json | None = entry.get("progress-monitoring")
    progress = None
    if monitoring is not None:
        progress = Progress(
            float(str(monitoring["expected-duration"])), float(str(monitoring["tail-factor"]))
        )
    supersedes = entry.get("supersedes")
    return Rule(
        CommitmentId(str(entry["commitment-id"])),
        CsId(str(entry["cs-id"])),
        CsciId(str(entry["csci-id"])),
        match(entry.get("match", {})),
        FallbackMode(entry.get("fallback-mode", FallbackMode.NORMAL)),
        ForwarderId(str(entry["egress-forwarder"])) if "egress-forwarder" in entry else None,
        expiry(entry),
        int(entry.get("priority", 128)),
        CommitmentId(str(supersedes)) if supersedes is not None else None,
        progress,
        fingerprint(entry),
    )


def steering(document: Json | None) -> Steering:
    """The whole configuration from a read of :data:`ROOT` (None or {}: nothing configured)."""
    body: Json = (document or {}).get(f"{MODULE}:steering", {})
    affinity: Json = body.get("flow-affinity", {})
    forwarder = body.get("forwarder-id")
    services = (service_entry(e) for e in body.get("service", ()))
    rules = (rule(e) for e in body.get("rule", ()))
    return Steering(
        ForwarderId(str(forwarder)) if forwarder is not None else None,
        frozenset(str(r) for r in body.get("role", ())),
        Affinity(bool(affinity.get("enabled", True)), int(affinity.get("flow-timeout", 120))),
        {s.cs_id: s for s in services},
        {r.commitment_id: r for r in rules},
    )


def entry_of(path: str) -> EntryKey | None:
    """The entry a changed data path is in (None: outside the service and rule lists)."""
    found = _ENTRY.match(path)
    if found is None:
        return None
    return EntryKey(Kind(found["kind"]), found["key"])


def entry_path(key: EntryKey) -> DataPath:
    """The data path of an entry (the key quoted as libyang accepts it)."""
    quote = '"' if "'" in key.name else "'"
    return DataPath(f"{ROOT}/{key.kind.value}[{_KEY_LEAF[key.kind]}={quote}{key.name}{quote}]")


def read_entry(document: Json | None, key: EntryKey) -> ServiceEntry | Rule | None:
    """The entry in the read of :func:`entry_path` (None when it is gone)."""
    if not document:
        return None
    (value,) = document.values()
    entries = value if isinstance(value, list) else [value]
    if not entries:
        return None
    return rule(entries[0]) if key.kind is Kind.RULE else service_entry(entries[0])
