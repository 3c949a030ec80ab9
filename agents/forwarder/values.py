"""The values of the forwarder: steering entries as the C-PS configures them (ietf-cats-steering)
and what a client request carries. All frozen; the forwarding table is built from them.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from enum import StrEnum

from controller.types import CommitmentId, CsciId, CsId, ForwarderId, SessionId

_LOCATOR = re.compile(r"(?P<host>\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):(?P<port>\d{1,5})")


class FallbackMode(StrEnum):
    """cats-st:fallback-mode (service-metrics-op 6.2.5)."""

    NORMAL = "normal"
    NETWORK_ONLY = "network-only"
    DEFAULT_ROUTE = "default-route"


class EntryState(StrEnum):
    """cats-st:entry-state."""

    ACTIVE = "active"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    FAILED = "failed"


class Kind(StrEnum):
    """A per-service entry or a steering rule (rule-expired ``entry-kind``)."""

    SERVICE = "service"
    RULE = "rule"


@dataclass(frozen=True, slots=True, order=True)
class EntryKey:
    """Names one entry: ``(service, cs-id)`` or ``(rule, commitment-id)``."""

    kind: Kind
    name: str


@dataclass(frozen=True, slots=True)
class Locator:
    """A CSCI-ID that is an IP:port locator (service-metrics-op 2, 7.1: '188.3.67.3:67')."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        """``http://host:port`` (IPv6 in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def locator(csci_id: str) -> Locator | None:
    """The locator a CSCI-ID names, or None when it is an address, number or identifier."""
    found = _LOCATOR.fullmatch(csci_id)
    if found is None:
        return None
    return Locator(found["host"].strip("[]"), int(found["port"]))


@dataclass(frozen=True, slots=True)
class Expiry:
    """The lifetime of an instruction (cats-st grouping ``expiry``), in Unix seconds."""

    installed_at: float | None = None
    lifetime: int | None = None
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class FlowMatch:
    """Flow criteria of a rule (5-tuple or prefixes)."""

    source_prefix: str | None = None
    destination_prefix: str | None = None
    protocol: int | None = None
    source_port: int | None = None
    destination_port: int | None = None

    @property
    def criteria(self) -> int:
        """How many criteria are given (specificity)."""
        return sum(
            value is not None
            for value in (
                self.source_prefix,
                self.destination_prefix,
                self.protocol,
                self.source_port,
                self.destination_port,
            )
        )


@dataclass(frozen=True, slots=True)
class Match:
    """What a rule steers: session, turn, step(s) and flow (agent draft 6.1, 7.1)."""

    session_id: SessionId | None = None
    turn_id: int | None = None
    step_id: int | None = None
    first_step: int | None = None
    last_step: int | None = None
    flow: FlowMatch = field(default_factory=FlowMatch)

    @property
    def specificity(self) -> int:
        """The number of criteria; a step counts more than a range (ties of priority)."""
        steps = 2 if self.step_id is not None else int(self.first_step is not None)
        given = (self.session_id is not None) + (self.turn_id is not None)
        return given + steps + self.flow.criteria


@dataclass(frozen=True, slots=True)
class Progress:
    """progress-monitoring: the expectation of the step (agent draft 8.1 P10, M35)."""

    expected_ms: float
    tail_factor: float

    @property
    def threshold_s(self) -> float:
        """Elapsed seconds beyond which a running step is a tail event."""
        return self.expected_ms * self.tail_factor / 1000


@dataclass(frozen=True, slots=True)
class ServiceEntry:
    """A per-service default rule (service-metrics-op 6.2.3 step 7, 6.2.5)."""

    cs_id: CsId
    mode: FallbackMode = FallbackMode.NORMAL
    csci_id: CsciId | None = None
    egress: ForwarderId | None = None
    local_csci_ids: tuple[CsciId, ...] = ()
    commitment_id: CommitmentId | None = None
    expiry: Expiry = field(default_factory=Expiry)
    fingerprint: str = ""  # the canonical form of the configured entry

    @property
    def key(self) -> EntryKey:
        """Its entry key."""
        return EntryKey(Kind.SERVICE, self.cs_id)


@dataclass(frozen=True, slots=True)
class Rule:
    """A steering rule: the MSG-10 instruction of a commitment (agent draft 9.1)."""

    commitment_id: CommitmentId
    cs_id: CsId
    csci_id: CsciId
    match: Match = field(default_factory=Match)
    mode: FallbackMode = FallbackMode.NORMAL
    egress: ForwarderId | None = None
    expiry: Expiry = field(default_factory=Expiry)
    priority: int = 128
    supersedes: CommitmentId | None = None
    progress: Progress | None = None
    fingerprint: str = ""

    @property
    def key(self) -> EntryKey:
        """Its entry key."""
        return EntryKey(Kind.RULE, self.commitment_id)


@dataclass(frozen=True, slots=True)
class Affinity:
    """flow-affinity (service-metrics-op 6.2.4, 6.2.5)."""

    enabled: bool = True
    flow_timeout: int = 120  # seconds; 0: no inactivity timeout


@dataclass(frozen=True, slots=True)
class Steering:
    """The whole steering configuration of this forwarder."""

    forwarder_id: ForwarderId | None = None
    roles: frozenset[str] = frozenset()
    affinity: Affinity = field(default_factory=Affinity)
    services: dict[CsId, ServiceEntry] = field(default_factory=dict)
    rules: dict[CommitmentId, Rule] = field(default_factory=dict)

    def entries(self) -> dict[EntryKey, ServiceEntry | Rule]:
        """Every entry by key."""
        found: dict[EntryKey, ServiceEntry | Rule] = {s.key: s for s in self.services.values()}
        found.update({r.key: r for r in self.rules.values()})
        return found

    def entry(self, key: EntryKey) -> ServiceEntry | Rule | None:
        """One entry by key (None when it is not configured)."""
        if key.kind is Kind.RULE:
            return self.rules.get(CommitmentId(key.name))
        return self.services.get(CsId(key.name))


@dataclass(frozen=True, slots=True)
class Request:
    """What the data plane knows of a client request (the C-TC's attribution, 6.1)."""

    cs_id: CsId
    session_id: SessionId | None = None
    turn_id: int | None = None
    step_id: int | None = None
    source: str = "127.0.0.1"
    source_port: int = 0
    destination: str = "127.0.0.1"
    destination_port: int = 0
    protocol: int = 6  # TCP: HTTP

    def flow_key(self) -> tuple[object, ...]:
        """The flow of the request: its step of a session, else its client connection."""
        if self.session_id is not None:
            return (self.cs_id, "session", self.session_id, self.turn_id, self.step_id)
        return (self.cs_id, "connection", self.source, self.source_port)


def in_prefix(address: str, prefix: str) -> bool:
    """Whether an address is within a prefix (False for anything unparsable)."""
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return False
