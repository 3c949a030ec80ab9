"""The ``topology`` and ``probes`` of the C-NMA's configuration, read into values.

The data is ``cats-cnma-config``'s, validated by libyang (agents.cnma.config): nodes (``id``,
``role``), links (``from``, ``to`` naming nodes; ``delay``, ``jitter``, ``min-delay``,
``max-delay`` in ms; ``bandwidth`` Mbps, ``loss`` ppm, ``te-metric``, ``igp-metric``,
``admin-group`` as an integer or hex string, ``color``, ``anomalous``, ``bidirectional``),
endpoints (``prefix``, ``node``, ``kind``), candidates (``csci-id``, an egress node) and probes
(an ingress and an egress node, ``target`` ``host:port``, ``method``, ``count``,
``timeout-ms``, ``use``). The module checks the references, the roles and the ranges; what is
left here is the one rule it cannot state: a bidirectional link's reverse must not be given
again.
"""

from __future__ import annotations

from decimal import Decimal

from agents.cnma.probe import Probe, ProbeMethod, ProbeUse
from agents.cnma.topology import Candidate, Endpoint, EndpointKind, Link, Node, Role, Topology
from agents.common.config import ConfigError
from controller.selection.units import Micros
from controller.types import CsciId, ForwarderId, Json, Prefix


def micros(value: str) -> Micros:
    """A validated cats-t:milliseconds as whole microseconds (three fraction digits)."""
    return Micros(int(Decimal(value) * 1000))


def _optional_micros(entry: Json, name: str) -> Micros | None:
    return None if name not in entry else micros(entry[name])


def _admin_group(value: int | str) -> int:
    if isinstance(value, int):
        return value
    return int(value.replace(":", "").removeprefix("0x"), 16)


def _link(entry: Json) -> list[Link]:
    link = Link(
        ForwarderId(entry["from"]),
        ForwarderId(entry["to"]),
        micros(entry["delay"]),
        micros(entry["jitter"]),
        entry.get("bandwidth"),
        entry["loss"],
        entry.get("te-metric"),
        entry["igp-metric"],
        _admin_group(entry["admin-group"]),
        entry.get("color"),
        _optional_micros(entry, "min-delay"),
        _optional_micros(entry, "max-delay"),
        anomalous=entry["anomalous"],
    )
    return [link, link.reversed()] if entry["bidirectional"] else [link]


def read_topology(document: Json, where: str, file: str) -> Topology:
    """The validated ``topology`` container at data path ``where`` of ``file``; a link given
    in both directions is refused at its data path, the file named as libyang's refusals do."""
    nodes = tuple(
        Node(ForwarderId(node["id"]), Role(node["role"])) for node in document.get("nodes", ())
    )
    links: dict[tuple[str, str], Link] = {}
    for entry in document.get("links", ()):
        for link in _link(entry):
            if (link.source, link.target) in links:
                path = f"{where}/links[from='{entry['from']}'][to='{entry['to']}']"
                message = f"{file}: duplicate link {link.source} -> {link.target}"
                raise ConfigError.at(path, message)
            links[(link.source, link.target)] = link
    endpoints = tuple(
        Endpoint(Prefix(item["prefix"]), ForwarderId(item["node"]), EndpointKind(item["kind"]))
        for item in document.get("endpoints", ())
    )
    candidates = tuple(
        Candidate(CsciId(str(item["csci-id"])), ForwarderId(item["egress"]))
        for item in document.get("candidates", ())
    )
    return Topology(nodes, tuple(links.values()), endpoints, candidates)


def read_probes(entries: list[Json]) -> tuple[Probe, ...]:
    """The validated ``probes`` (keyed by the (Ingress, Egress) pair, so each pair once)."""
    probes = []
    for entry in entries:
        host, _, port = entry["target"].rpartition(":")
        probes.append(
            Probe(
                ForwarderId(entry["ingress"]),
                ForwarderId(entry["egress"]),
                host.strip("[]"),
                int(port),
                ProbeMethod(entry["method"]),
                entry["count"],
                entry["timeout-ms"] / 1000,
                ProbeUse(entry["use"]),
            )
        )
    return tuple(probes)
