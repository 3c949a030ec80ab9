"""Path choice and link-to-path aggregation (service-metrics-op 6.2.2)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.cnma.config import CnmaConfig
from agents.cnma.paths import (
    AdminGroupRule,
    JitterRule,
    PathMetric,
    PathPolicy,
    aggregate,
    combine_jitter,
    combine_loss,
    endpoint_costs,
    network_service_table,
)
from agents.cnma.topology import Link, Node, Role, Topology
from controller.selection.units import Micros
from controller.types import ForwarderId

INGRESS, CF2, CF3 = ForwarderId("10.0.0.1"), ForwarderId("188.3.67.3"), ForwarderId("188.3.67.4")


def link(a: str, b: str, delay_us: int, **values: object) -> Link:
    return Link(ForwarderId(a), ForwarderId(b), Micros(delay_us), **values)  # type: ignore[arg-type]


def test_section_7_1_delays_and_aggregates(example: CnmaConfig) -> None:
    table = network_service_table(example.topology, example.policy)
    assert set(table) == {(INGRESS, CF2), (INGRESS, CF3)}
    cf2, cf3 = table[(INGRESS, CF2)], table[(INGRESS, CF3)]
    assert (cf2.delay, cf3.delay) == (8000, 6000)
    assert cf2.nodes == (INGRESS, "P1", CF2)
    assert (cf2.jitter, cf2.bandwidth, cf2.loss_ppm) == (400, 1000, 110)
    assert (cf3.jitter, cf3.bandwidth, cf3.loss_ppm) == (300, 2500, 60)
    assert (cf2.admin_group, cf2.color, cf2.te_metric, cf2.igp_metric) == (0x5, 100, 30, 20)
    assert (cf2.min_delay, cf2.max_delay, cf2.hop_count) == (7500, 9000, 2)
    assert (cf3.min_delay, cf3.max_delay) == (6000, 6000)


@pytest.mark.parametrize(
    ("metric", "nodes", "delay"),
    [
        (PathMetric.IGP, (INGRESS, "P1", CF2), 8000),  # IGP 20 < 30
        (PathMetric.TE, (INGRESS, "P1", CF2), 8000),  # TE 30 < 50
        (PathMetric.DELAY, (INGRESS, CF2), 7000),  # the direct link is 1 ms faster
        (PathMetric.HOPS, (INGRESS, CF2), 7000),
    ],
)
def test_path_choice_follows_the_metric(
    example: CnmaConfig, metric: PathMetric, nodes: tuple[str, ...], delay: int
) -> None:
    policy = replace(example.policy, metric=metric)
    chosen = network_service_table(example.topology, policy)[(INGRESS, CF2)]
    assert (chosen.nodes, chosen.delay) == (nodes, delay)


def test_direct_path_aggregates_one_link(example: CnmaConfig) -> None:
    policy = replace(example.policy, metric=PathMetric.DELAY)
    direct = network_service_table(example.topology, policy)[(INGRESS, CF2)]
    assert (direct.hop_count, direct.color, direct.admin_group) == (1, 200, 8)
    assert direct.loss_ppm == 1000


def test_equal_cost_tie_goes_to_lower_delay_then_node_order() -> None:
    nodes = (
        Node(INGRESS, Role.INGRESS),
        Node(ForwarderId("A"), Role.TRANSIT),
        Node(ForwarderId("B"), Role.TRANSIT),
        Node(CF3, Role.EGRESS),
    )
    links = (
        link("10.0.0.1", "A", 3000),
        link("A", "188.3.67.4", 3000),
        link("10.0.0.1", "B", 1000),
        link("B", "188.3.67.4", 1000),
    )
    table = network_service_table(Topology(nodes, links), PathPolicy(PathMetric.IGP))
    assert table[(INGRESS, CF3)].nodes == (INGRESS, "B", CF3)
    same = tuple(replace(each, delay=Micros(1000)) for each in links)
    table = network_service_table(Topology(nodes, same), PathPolicy(PathMetric.IGP))
    assert table[(INGRESS, CF3)].nodes == (INGRESS, "A", CF3)


def test_unreachable_egress_has_no_entry() -> None:
    nodes = (Node(INGRESS, Role.INGRESS), Node(CF2, Role.EGRESS), Node(CF3, Role.EGRESS))
    only_cf2 = Topology(nodes, (link("10.0.0.1", "188.3.67.3", 5),))
    table = network_service_table(only_cf2, PathPolicy())
    assert set(table) == {(INGRESS, CF2)}


def test_links_are_directed() -> None:
    nodes = (Node(INGRESS, Role.INGRESS), Node(CF2, Role.EGRESS))
    one_way = Topology(nodes, (link("188.3.67.3", "10.0.0.1", 5),))
    assert network_service_table(one_way, PathPolicy()) == {}


def test_loss_combines_as_one_minus_product_of_survival() -> None:
    assert combine_loss([]) == 0
    assert combine_loss([10, 100]) == 110  # 109.999 ppm
    assert combine_loss([500_000, 500_000]) == 750_000
    assert combine_loss([1_000_000, 3]) == 1_000_000


def test_jitter_sum_and_root_sum_square() -> None:
    jitters = [Micros(300), Micros(400)]
    assert combine_jitter(jitters, JitterRule.SUM) == 700
    assert combine_jitter(jitters, JitterRule.RSS) == 500
    assert combine_jitter([Micros(1), Micros(1)], JitterRule.RSS) == 1  # 1.414 rounds down
    assert combine_jitter([], JitterRule.RSS) == 0


def test_admin_group_or_and_and() -> None:
    links = [link("a", "b", 1, admin_group=0b0110), link("b", "c", 1, admin_group=0b0011)]
    nodes = [ForwarderId(n) for n in "abc"]
    anyof = aggregate(nodes[0], nodes, links, PathPolicy(admin_group=AdminGroupRule.ANY))
    allof = aggregate(nodes[0], nodes, links, PathPolicy(admin_group=AdminGroupRule.ALL))
    assert (anyof.admin_group, allof.admin_group) == (0b0111, 0b0010)


def test_unknown_bandwidth_and_mixed_color_are_absent() -> None:
    links = [link("a", "b", 1, bandwidth=100, color=1), link("b", "c", 1, color=2)]
    nodes = [ForwarderId(n) for n in "abc"]
    path = aggregate(nodes[0], nodes, links, PathPolicy())
    assert (path.bandwidth, path.color) == (None, None)


def test_te_metric_defaults_to_igp_metric() -> None:
    links = [link("a", "b", 1, igp_metric=7), link("b", "c", 1, igp_metric=2, te_metric=5)]
    nodes = [ForwarderId(n) for n in "abc"]
    assert aggregate(nodes[0], nodes, links, PathPolicy()).te_metric == 12


def test_endpoint_cost_is_from_the_instance_egress(example: CnmaConfig) -> None:
    costs = endpoint_costs(example.topology, example.policy)
    from_cf3 = costs["188.3.67.4:69"]  # type: ignore[index]
    tool, data = from_cf3["203.0.113.0/24"], from_cf3["198.51.100.0/24"]  # type: ignore[index]
    assert tool is not None
    assert (tool.delay, tool.hop_count) == (0, 0)
    assert data is not None
    assert data.delay == 4000
    from_cf2 = costs["188.3.67.3:67"]  # type: ignore[index]
    assert from_cf2["203.0.113.0/24"].delay == 10_000  # type: ignore[index, union-attr]
