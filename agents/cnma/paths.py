"""The NST Generator: path choice, link-to-path aggregation, indexing (service-metrics-op 6.2.2).

Step 1 (filtering) keeps the Ingress and Egress CATS-Forwarders of the topology; step 2
(aggregation) folds the link metrics of the chosen path into path metrics; step 3 (indexing)
keys the result by (Ingress, Egress). The aggregation rules:

- delay, min-delay, max-delay, TE metric, IGP metric and hop count add along the path;
- jitter adds as well (``JitterRule.SUM``, the default: an upper bound on the path's delay
  variation whatever the correlation of the links) or combines as the root of the sum of
  squares (``JitterRule.RSS``: independent link variations, whose variances add);
- available bandwidth is the minimum over the links; unknown on any link makes it unknown;
- loss combines as ``1 - prod(1 - p_i)``, rounded to whole ppm;
- the administrative group is the OR of the link groups (``AdminGroupRule.ANY``: the path
  touches a link of the group, what exclude-any and include-any affinities test, RFC 3630 and
  RFC 7308) or their AND (``AdminGroupRule.ALL``: every link is in the group, include-all);
- color is the links' common color, absent when they differ; anomalous is the OR.

The chosen path is the shortest by the configured metric (IGP, TE, delay or hops); ties go to
the lower delay, then to the lexicographically smaller node sequence, so the choice is stable.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

import networkx as nx

from agents.cnma.topology import Link, Topology
from controller.selection.units import Micros
from controller.types import CsciId, ForwarderId, Prefix

PPM = 1_000_000
_MAX_EQUAL_PATHS = 64  # equal-cost paths examined for the tie-break

PathKey = tuple[ForwarderId, ForwarderId]
"""(Ingress, Egress): the NST index (service-metrics-op 6.2.2 step 3)."""


class PathMetric(StrEnum):
    """What "shortest" means for the path choice."""

    IGP = "igp"
    TE = "te"
    DELAY = "delay"
    HOPS = "hops"


class JitterRule(StrEnum):
    """How link jitter combines into path jitter."""

    SUM = "sum"
    RSS = "rss"


class AdminGroupRule(StrEnum):
    """How link administrative groups combine into the path's (OR or AND)."""

    ANY = "or"
    ALL = "and"


@dataclass(frozen=True, slots=True)
class PathPolicy:
    """The path choice and aggregation settings."""

    metric: PathMetric = PathMetric.IGP
    jitter: JitterRule = JitterRule.SUM
    admin_group: AdminGroupRule = AdminGroupRule.ANY


@dataclass(frozen=True, slots=True)
class PathMetrics:
    """The aggregated metrics of one chosen path: one NST entry's values."""

    ingress: ForwarderId
    egress: ForwarderId
    nodes: tuple[ForwarderId, ...]
    delay: Micros
    jitter: Micros
    bandwidth: int | None
    loss_ppm: int
    admin_group: int
    color: int | None
    te_metric: int
    igp_metric: int
    min_delay: Micros
    max_delay: Micros
    anomalous: bool
    measured: bool = False  # delay/jitter come from an active probe (confidence asserted)

    @property
    def key(self) -> PathKey:
        """(Ingress, Egress)."""
        return (self.ingress, self.egress)

    @property
    def hop_count(self) -> int:
        """Number of links of the path."""
        return len(self.nodes) - 1


def combine_loss(losses_ppm: Sequence[int]) -> int:
    """Path loss ``1 - prod(1 - p_i)`` in whole ppm (half rounds up)."""
    survival = Fraction(1)
    for loss in losses_ppm:
        survival *= Fraction(PPM - loss, PPM)
    return math.floor((1 - survival) * PPM + Fraction(1, 2))


def combine_jitter(jitters: Sequence[Micros], rule: JitterRule) -> Micros:
    """Path jitter: the sum (upper bound) or the root of the sum of squares, in whole us."""
    if rule is JitterRule.SUM:
        return Micros(sum(jitters))
    squares = sum(j * j for j in jitters)
    root = math.isqrt(squares)
    return Micros(root + 1 if squares - root * root > root else root)  # nearest integer


def _common(values: Sequence[int | None]) -> int | None:
    distinct = set(values)
    return values[0] if len(distinct) == 1 else None


def _admin_group(groups: Sequence[int], rule: AdminGroupRule) -> int:
    if not groups:
        return 0
    folded = groups[0]
    for group in groups[1:]:
        folded = folded | group if rule is AdminGroupRule.ANY else folded & group
    return folded


def aggregate(
    ingress: ForwarderId, nodes: Sequence[ForwarderId], links: Sequence[Link], policy: PathPolicy
) -> PathMetrics:
    """The path metrics of ``links`` (in path order from ``ingress``), per the module rules."""
    bandwidths = [link.bandwidth for link in links]
    return PathMetrics(
        ingress,
        nodes[-1],
        tuple(nodes),
        delay=Micros(sum(link.delay for link in links)),
        jitter=combine_jitter([link.jitter for link in links], policy.jitter),
        bandwidth=None if None in bandwidths or not links else min(b or 0 for b in bandwidths),
        loss_ppm=combine_loss([link.loss_ppm for link in links]),
        admin_group=_admin_group([link.admin_group for link in links], policy.admin_group),
        color=_common([link.color for link in links]) if links else None,
        te_metric=sum(_te(link) for link in links),
        igp_metric=sum(link.igp_metric for link in links),
        min_delay=Micros(sum(_or(link.min_delay, link.delay) for link in links)),
        max_delay=Micros(sum(_or(link.max_delay, link.delay) for link in links)),
        anomalous=any(link.anomalous for link in links),
    )


def _or(value: Micros | None, default: Micros) -> int:
    return default if value is None else value


def _te(link: Link) -> int:
    """The TE metric, defaulting to the IGP metric (RFC 3630 2.5.5)."""
    return link.igp_metric if link.te_metric is None else link.te_metric


_WEIGHTS: Mapping[PathMetric, Callable[[Link], int]] = {
    PathMetric.IGP: lambda link: link.igp_metric,
    PathMetric.TE: _te,
    PathMetric.DELAY: lambda link: link.delay,
    PathMetric.HOPS: lambda link: 1,
}


def graph(topology: Topology) -> nx.DiGraph[ForwarderId]:
    """The directed TEDB graph; each edge holds its :class:`Link` under ``"link"``."""
    built: nx.DiGraph[ForwarderId] = nx.DiGraph()
    built.add_nodes_from(node.id for node in topology.nodes)
    for link in topology.links:
        built.add_edge(link.source, link.target, link=link)
    return built


def _links(tedb: nx.DiGraph[ForwarderId], nodes: Sequence[ForwarderId]) -> list[Link]:
    return [tedb.edges[a, b]["link"] for a, b in itertools.pairwise(nodes)]


def choose_path(
    tedb: nx.DiGraph[ForwarderId], source: ForwarderId, target: ForwarderId, policy: PathPolicy
) -> PathMetrics | None:
    """The shortest path by the policy's metric with the stable tie-break; None if unreachable."""
    cost = _WEIGHTS[policy.metric]

    def weight(u: Any, v: Any, data: dict[str, Any]) -> int:
        del u, v
        return cost(data["link"])

    try:
        found = nx.all_shortest_paths(tedb, source, target, weight=weight)
        shortest = list(itertools.islice(found, _MAX_EQUAL_PATHS))
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None
    best = min(shortest, key=lambda nodes: (sum(k.delay for k in _links(tedb, nodes)), nodes))
    return aggregate(source, best, _links(tedb, best), policy)


def network_service_table(topology: Topology, policy: PathPolicy) -> dict[PathKey, PathMetrics]:
    """One entry per reachable (Ingress, Egress) pair (service-metrics-op 6.2.2 steps 1-3)."""
    tedb = graph(topology)
    table: dict[PathKey, PathMetrics] = {}
    for ingress in topology.ingresses:
        for egress in topology.egresses:
            path = choose_path(tedb, ingress, egress, policy)
            if path is not None:
                table[path.key] = path
    return table


def endpoint_costs(
    topology: Topology, policy: PathPolicy
) -> dict[CsciId, dict[Prefix, PathMetrics | None]]:
    """Per candidate, the path from its egress to each endpoint prefix (None: unreachable).

    endpoint-cost is "the per-prefix cost from the instance to the tools and data sources of a
    step" (ietf-cats-agent-selection, agent-selection-mapping 7.2); the instance is reached
    through its egress forwarder, so the cost is the path from that forwarder.
    """
    tedb = graph(topology)
    costs: dict[CsciId, dict[Prefix, PathMetrics | None]] = {}
    for candidate in topology.candidates:
        costs[candidate.csci_id] = {
            endpoint.prefix: choose_path(tedb, candidate.egress, endpoint.node, policy)
            for endpoint in topology.endpoints
        }
    return costs
