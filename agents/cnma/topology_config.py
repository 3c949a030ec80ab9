"""The ``[topology]`` and ``[[probes]]`` tables of the configuration, read into values.

``[[topology.nodes]]`` id (forwarder-id), role (ingress, egress, transit).
``[[topology.links]]`` from, to, delay (ms), and optionally jitter (ms), bandwidth (Mbps),
loss (ppm), te-metric, igp-metric (default 1), admin-group (integer or hex string), color,
min-delay, max-delay (ms), anomalous, bidirectional (default true).
``[[topology.endpoints]]`` prefix, node, kind (tool, data).
``[[topology.candidates]]`` csci-id, egress.
``[[probes]]`` ingress, egress, target (``host:port``), method (udp-echo, tcp-connect), count,
timeout (s), use (replace, bound).
"""

from __future__ import annotations

import re

from agents.cnma.probe import Probe, ProbeMethod, ProbeUse
from agents.cnma.topology import Candidate, Endpoint, EndpointKind, Link, Node, Role, Topology
from agents.common.config import Table
from controller.selection.units import Micros
from controller.types import CsciId, ForwarderId, Prefix

_CSCI_ID = re.compile(r"[A-Za-z0-9_.:/\[\]\-]+")
_HEX = re.compile(r"(0x)?[0-9a-fA-F]+")
_MAX_PROBES = 100


def _admin_group(table: Table) -> int:
    value = table.values.get("admin-group", 0)
    if isinstance(value, str) and _HEX.fullmatch(value.replace(":", "")):
        return int(value.replace(":", "").removeprefix("0x"), 16)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise table.error("admin-group", f"expected a bit mask (integer or hex), got {value!r}")


def _link(table: Table, nodes: set[str]) -> list[Link]:
    table.allow(
        "from",
        "to",
        "delay",
        "jitter",
        "bandwidth",
        "loss",
        "te-metric",
        "igp-metric",
        "admin-group",
        "color",
        "min-delay",
        "max-delay",
        "anomalous",
        "bidirectional",
    )
    ends = [table.forwarder("from"), table.forwarder("to")]
    for name, end in zip(("from", "to"), ends, strict=True):
        if end not in nodes:
            raise table.error(name, f"no node {end!r} in topology.nodes")
    if ends[0] == ends[1]:
        raise table.error("to", "a link joins two different nodes")
    link = Link(
        ForwarderId(ends[0]),
        ForwarderId(ends[1]),
        table.millis("delay"),
        table.millis("jitter", Micros(0)),
        table.integer("bandwidth", None),
        table.integer("loss", 0, maximum=1_000_000),
        table.integer("te-metric", None),
        table.integer("igp-metric", 1),
        _admin_group(table),
        table.integer("color", None),
        table.millis("min-delay", None),
        table.millis("max-delay", None),
        anomalous=table.boolean("anomalous", default=False),
    )
    if link.min_delay is not None and link.min_delay > link.delay:
        raise table.error("min-delay", "min-delay exceeds delay")
    if link.max_delay is not None and link.max_delay < link.delay:
        raise table.error("max-delay", "max-delay is below delay")
    return [link, link.reversed()] if table.boolean("bidirectional", default=True) else [link]


def _nodes(tables: list[Table]) -> list[Node]:
    nodes: dict[str, Node] = {}
    for table in tables:
        table.allow("id", "role")
        node = Node(ForwarderId(table.forwarder("id")), table.choice("role", Role))
        if node.id in nodes:
            raise table.error("id", f"duplicate node {node.id!r}")
        nodes[node.id] = node
    return list(nodes.values())


def read_topology(table: Table) -> Topology:
    """The topology: nodes first, then links, endpoints and candidates that refer to them."""
    table.allow("nodes", "links", "endpoints", "candidates")
    nodes = _nodes(table.tables("nodes", required=True))
    roles = {node.id: node.role for node in nodes}
    links: dict[tuple[str, str], Link] = {}
    for entry in table.tables("links"):
        for link in _link(entry, set(roles)):
            if (link.source, link.target) in links:
                raise entry.error("to", f"duplicate link {link.source} -> {link.target}")
            links[(link.source, link.target)] = link
    endpoints: dict[str, Endpoint] = {}
    for entry in table.tables("endpoints"):
        entry.allow("prefix", "node", "kind")
        endpoint = Endpoint(
            Prefix(entry.prefix("prefix")),
            ForwarderId(entry.forwarder("node")),
            entry.choice("kind", EndpointKind),
        )
        if endpoint.node not in roles:
            raise entry.error("node", f"no node {endpoint.node!r} in topology.nodes")
        if endpoint.prefix in endpoints:
            raise entry.error("prefix", f"duplicate endpoint prefix {endpoint.prefix}")
        endpoints[endpoint.prefix] = endpoint
    candidates: dict[str, Candidate] = {}
    for entry in table.tables("candidates"):
        entry.allow("csci-id", "egress")
        csci = entry.text("csci-id")
        if not _CSCI_ID.fullmatch(csci) or csci in candidates:
            raise entry.error("csci-id", f"not a new CSCI-ID: {csci!r}")
        egress = entry.forwarder("egress")
        if roles.get(ForwarderId(egress)) is not Role.EGRESS:
            raise entry.error("egress", f"{egress!r} is not an egress node")
        candidates[csci] = Candidate(CsciId(csci), ForwarderId(egress))
    return Topology(
        tuple(nodes), tuple(links.values()), tuple(endpoints.values()), tuple(candidates.values())
    )


def _count(table: Table) -> int:
    count: int = table.integer("count", 5, maximum=_MAX_PROBES)
    if count == 0:
        raise table.error("count", "a probe sends at least one round trip")
    return count


def read_probes(tables: list[Table], topology: Topology) -> tuple[Probe, ...]:
    """The probes; each names an (Ingress, Egress) pair of the topology, at most once."""
    probes: dict[tuple[str, str], Probe] = {}
    for table in tables:
        table.allow("ingress", "egress", "target", "method", "count", "timeout", "use")
        ingress, egress = table.forwarder("ingress"), table.forwarder("egress")
        if ingress not in topology.ingresses:
            raise table.error("ingress", f"{ingress!r} is not an ingress node")
        if egress not in topology.egresses:
            raise table.error("egress", f"{egress!r} is not an egress node")
        host, port = table.endpoint("target")
        probe = Probe(
            ForwarderId(ingress),
            ForwarderId(egress),
            host,
            port,
            table.choice("method", ProbeMethod, ProbeMethod.UDP_ECHO),
            _count(table),
            table.seconds("timeout", 0.5),
            table.choice("use", ProbeUse, ProbeUse.REPLACE),
        )
        if probe.key in probes:
            raise table.error("egress", f"a second probe for {ingress} -> {egress}")
        probes[probe.key] = probe
    return tuple(probes.values())
