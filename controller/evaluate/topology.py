"""The topology of an evaluation: regions, ingresses, sites with serving instances, delays.

A JSON file (``data/three-regions.json`` is the default) with strict keys: an unknown key or a
wrong type is refused naming the file and the dotted key. Delays are round-trip times in
milliseconds between regions (an ingress or a site is in one region); bandwidths between
sites, for moving KV-cache blocks, in Gbit/s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.evaluate.errors import invalid
from controller.evaluate.shipped import DEFAULT_TOPOLOGY

_TOP = frozenset(
    {
        "name",
        "description",
        "sources",
        "block-tokens",
        "kv-bytes-per-token",
        "cps-region",
        "rtt-ms",
        "transfer-gbps",
        "instance-types",
        "ingresses",
        "sites",
    }
)
_TYPE = frozenset(
    {"prefill-tokens-per-s", "decode-tokens-per-s", "batch-limit", "kv-blocks", "source"}
)


@dataclass(frozen=True, slots=True)
class InstanceType:
    """A serving instance: prefill rate, per-sequence decode rate, batch and KV capacity."""

    name: str
    prefill_rate: float
    decode_rate: float
    batch_limit: int
    kv_blocks: int


@dataclass(frozen=True, slots=True)
class Instance:
    """One serving instance: its identifier (the CSCI-ID), site, region and type."""

    index: int
    name: str
    site: str
    region: str
    spec: InstanceType


@dataclass(frozen=True, slots=True)
class Ingress:
    """An ingress: where requests enter, and its share of the conversations."""

    index: int
    name: str
    region: str
    share: float


@dataclass(frozen=True, slots=True)
class Topology:
    """Everything the simulator and the policies know of the network and the sites."""

    name: str
    block_tokens: int
    kv_bytes_per_token: int
    cps_region: str
    rtt_ms: Mapping[str, Mapping[str, float]]
    transfer_gbps: Mapping[str, Mapping[str, float]]
    ingresses: tuple[Ingress, ...]
    instances: tuple[Instance, ...]

    def rtt(self, source: str, target: str) -> float:
        """Round-trip time in seconds between two regions."""
        return self.rtt_ms[source][target] / 1000.0

    def bandwidth(self, source: str, target: str) -> float | None:
        """Bytes per second for KV transfer between two regions' sites, None if none."""
        gbps = self.transfer_gbps.get(source, {}).get(target)
        return None if gbps is None else gbps * 1e9 / 8

    @property
    def block_bytes(self) -> int:
        """The bytes of one full KV-cache block."""
        return self.block_tokens * self.kv_bytes_per_token

    @property
    def capacity(self) -> float:
        """Prompt tokens per second all instances prefill together."""
        return sum(i.spec.prefill_rate for i in self.instances)

    @property
    def sites(self) -> tuple[str, ...]:
        """The site names in order of first appearance."""
        return tuple(dict.fromkeys(i.site for i in self.instances))


def _number(doc: Mapping[str, Any], key: str, where: str, *, integral: bool = False) -> float:
    value = doc.get(key)
    kinds = int if integral else int | float
    if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
        kind = "a positive integer" if integral else "a positive number"
        raise invalid(f"expected {kind}, got {value!r}", f"{where}.{key}")
    return float(value)


def _object(doc: object, where: str, allowed: frozenset[str] | None = None) -> Mapping[str, Any]:
    if not isinstance(doc, dict):
        raise invalid("expected an object", where)
    if allowed is not None:
        unknown = sorted(set(doc) - allowed)
        if unknown:
            raise invalid(f"unknown key {unknown[0]!r}", f"{where}.{unknown[0]}")
    return doc


def _matrix(doc: object, where: str, regions: set[str]) -> dict[str, dict[str, float]]:
    rows = _object(doc, where)
    matrix: dict[str, dict[str, float]] = {}
    for source, row in rows.items():
        if source not in regions:
            raise invalid(f"unknown region {source!r}", f"{where}.{source}")
        cells = _object(row, f"{where}.{source}")
        matrix[source] = {}
        for target in cells:
            if target not in regions:
                raise invalid(f"unknown region {target!r}", f"{where}.{source}.{target}")
            matrix[source][target] = _number(cells, target, f"{where}.{source}")
    return matrix


def _types(doc: object, where: str) -> dict[str, InstanceType]:
    found: dict[str, InstanceType] = {}
    for name, spec in _object(doc, where).items():
        at = f"{where}.{name}"
        item = _object(spec, at, _TYPE)
        found[name] = InstanceType(
            name,
            _number(item, "prefill-tokens-per-s", at),
            _number(item, "decode-tokens-per-s", at),
            int(_number(item, "batch-limit", at, integral=True)),
            int(_number(item, "kv-blocks", at, integral=True)),
        )
    return found


def _list(doc: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
    items = doc.get(key)
    if not isinstance(items, list) or not items:
        raise invalid("expected a non-empty list", f"{where}.{key}")
    return [_object(item, f"{where}.{key}[{n}]") for n, item in enumerate(items)]


def _text(doc: Mapping[str, Any], key: str, where: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise invalid("expected a string", f"{where}.{key}")
    return value


def _region(doc: Mapping[str, Any], where: str, rtt: Mapping[str, Mapping[str, float]]) -> str:
    region = _text(doc, "region", where)
    if region not in rtt or any(region not in row for row in rtt.values()):
        raise invalid(f"region {region!r} has no row and column in rtt-ms", f"{where}.region")
    return region


def parse(doc: object, source: str = "topology") -> Topology:
    """A topology from its JSON document."""
    top = _object(doc, source, _TOP)
    rtt = _object(top.get("rtt-ms"), f"{source}.rtt-ms")
    regions = set(rtt)
    matrix = _matrix(rtt, f"{source}.rtt-ms", regions)
    transfer = _matrix(top.get("transfer-gbps", {}), f"{source}.transfer-gbps", regions)
    types = _types(top.get("instance-types"), f"{source}.instance-types")
    ingresses = []
    for n, item in enumerate(_list(top, "ingresses", source)):
        at = f"{source}.ingresses[{n}]"
        _object(item, at, frozenset({"name", "region", "share"}))
        ingresses.append(
            Ingress(
                n, _text(item, "name", at), _region(item, at, matrix), _number(item, "share", at)
            )
        )
    instances: list[Instance] = []
    for n, item in enumerate(_list(top, "sites", source)):
        at = f"{source}.sites[{n}]"
        _object(item, at, frozenset({"name", "region", "instances", "instance-type"}))
        name, region = _text(item, "name", at), _region(item, at, matrix)
        kind = _text(item, "instance-type", at)
        if kind not in types:
            raise invalid(f"unknown instance type {kind!r}", f"{at}.instance-type")
        for k in range(int(_number(item, "instances", at, integral=True))):
            instances.append(Instance(len(instances), f"{name}-{k + 1}", name, region, types[kind]))
    cps = _text(top, "cps-region", source)
    if cps not in regions:
        raise invalid(f"unknown region {cps!r}", f"{source}.cps-region")
    return Topology(
        _text(top, "name", source),
        int(_number(top, "block-tokens", source, integral=True)),
        int(_number(top, "kv-bytes-per-token", source, integral=True)),
        cps,
        matrix,
        transfer,
        tuple(ingresses),
        tuple(instances),
    )


def load(path: Path = DEFAULT_TOPOLOGY) -> Topology:
    """Read a topology file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise invalid(f"cannot read the topology: {exc}", str(path)) from exc
    return parse(doc, path.name)
