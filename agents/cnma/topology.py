"""The C-NMA's view of the underlay: forwarders, links and attachments (service-metrics-op 6.2.2).

The values the NST Generator filters, aggregates and indexes: nodes are CATS-Forwarders (or
transit P-routers) with a role; links carry the TEDB quantities an IGP TE / BGP-LS feed would
(RFC 7471, RFC 8570, RFC 8571): one-way delay and its min/max, jitter, available bandwidth,
loss, TE and IGP metrics, administrative group and color. Endpoint prefixes (tools and data
sources) and candidate instances are attached to nodes for the forwarding view of MSG-7
(agent-selection-mapping 7.2). Delays are whole microseconds, the selection core's time base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from controller.selection.units import Micros
from controller.types import CsciId, ForwarderId, Prefix

ZERO = Micros(0)


class Role(StrEnum):
    """The role of a node in the CATS domain (service-metrics-op 7.1)."""

    INGRESS = "ingress"
    EGRESS = "egress"
    TRANSIT = "transit"


class EndpointKind(StrEnum):
    """What an endpoint prefix is to a step (agent-selection-mapping 7.2 endpoint-cost)."""

    TOOL = "tool"
    DATA = "data"


@dataclass(frozen=True, slots=True)
class Node:
    """A CATS-Forwarder or transit router; its id is the forwarder-id the NST is keyed by."""

    id: ForwarderId
    role: Role


@dataclass(frozen=True, slots=True)
class Link:
    """One direction of a link with its TE attributes (RFC 7471 4, RFC 7308).

    ``min_delay``/``max_delay`` default to ``delay`` when the feed gives only the average.
    """

    source: ForwarderId
    target: ForwarderId
    delay: Micros
    jitter: Micros = ZERO
    bandwidth: int | None = None  # Mbps available
    loss_ppm: int = 0
    te_metric: int | None = None
    igp_metric: int = 1
    admin_group: int = 0
    color: int | None = None
    min_delay: Micros | None = None
    max_delay: Micros | None = None
    anomalous: bool = False

    def reversed(self) -> Link:
        """The same attributes in the other direction."""
        return Link(
            self.target,
            self.source,
            self.delay,
            self.jitter,
            self.bandwidth,
            self.loss_ppm,
            self.te_metric,
            self.igp_metric,
            self.admin_group,
            self.color,
            self.min_delay,
            self.max_delay,
            anomalous=self.anomalous,
        )


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A tool or data-source prefix reachable behind a node."""

    prefix: Prefix
    node: ForwarderId
    kind: EndpointKind


@dataclass(frozen=True, slots=True)
class Candidate:
    """A service contact instance and the egress forwarder it sits behind (MSG-7 candidate)."""

    csci_id: CsciId
    egress: ForwarderId


@dataclass(frozen=True, slots=True)
class Topology:
    """A consistent snapshot: every link, endpoint and candidate names a known node."""

    nodes: tuple[Node, ...]
    links: tuple[Link, ...]  # directed; a bidirectional link appears once per direction
    endpoints: tuple[Endpoint, ...] = ()
    candidates: tuple[Candidate, ...] = field(default=())

    def with_role(self, role: Role) -> tuple[ForwarderId, ...]:
        """The ids of the nodes of one role, in configuration order."""
        return tuple(node.id for node in self.nodes if node.role is role)

    @property
    def ingresses(self) -> tuple[ForwarderId, ...]:
        """Ingress CATS-Forwarders."""
        return self.with_role(Role.INGRESS)

    @property
    def egresses(self) -> tuple[ForwarderId, ...]:
        """Egress CATS-Forwarders."""
        return self.with_role(Role.EGRESS)
