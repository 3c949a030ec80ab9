"""Steering entries as values: from an outcome, compared, diffed, batched, in XML (pure)."""

from __future__ import annotations

from lxml import etree

from controller.selection.joint import FallbackLevel, Outcome, ResultKind
from controller.southbound.steering import (
    BATCH,
    NC,
    NS,
    Changes,
    Entry,
    EntryKey,
    applied,
    batches,
    diff,
    edit_config,
    entries_of,
    parse_steering,
    rule_entry,
    service_entry,
)
from controller.types import CsciId, CsId, ForwarderId

ARS = CsId("ARS")


def outcome(result: ResultKind, csci: str | None = None, egress: str | None = None) -> Outcome:
    return Outcome(
        result,
        FallbackLevel.NONE,
        (),
        complete=False,
        csci_id=CsciId(csci) if csci else None,
        egress=ForwarderId(egress) if egress else None,
    )


def rule(commitment: str, csci: str = "127.0.0.1:1", **more: object) -> Entry:
    return rule_entry(
        {
            "cs-id": "ARS",
            "commitment-id": commitment,
            "csci-id": csci,
            "match": {"session-id": "s1", "step-id": 3},
            "egress-forwarder": "10.0.0.2",
            "lifetime": 60,
            **more,
        }
    )


def test_a_selected_result_is_normal_steering_with_a_stable_decision_id() -> None:
    entry = service_entry(ARS, outcome(ResultKind.SELECTED, "188.3.67.4:69", "188.3.67.4"))
    assert entry is not None
    assert entry.key == ("service", "ARS")
    assert entry.members["csci-id"] == "188.3.67.4:69"
    assert entry.members["egress-forwarder"] == "188.3.67.4"
    assert "fallback-mode" not in entry.members  # the default, normal
    again = service_entry(ARS, outcome(ResultKind.SELECTED, "188.3.67.4:69", "188.3.67.4"))
    assert again == entry
    assert again is not None
    assert again.members["decision-id"] == entry.members["decision-id"]
    moved = service_entry(ARS, outcome(ResultKind.SELECTED, "188.3.67.3:67", "188.3.67.3"))
    assert moved != entry


def test_fallback_results_map_to_fallback_modes() -> None:
    network = service_entry(ARS, outcome(ResultKind.EGRESS_ONLY, egress="188.3.67.3"))
    assert network is not None
    assert network.members["fallback-mode"] == "network-only"
    assert "csci-id" not in network.members
    default = service_entry(ARS, outcome(ResultKind.DEFAULT_ROUTE))
    assert default is not None
    assert default.members["fallback-mode"] == "default-route"
    assert "egress-forwarder" not in default.members
    assert service_entry(ARS, outcome(ResultKind.SERVICE_UNAVAILABLE)) is None


def test_entries_compare_by_canonical_content() -> None:
    assert rule("c1") == rule("c1", lifetime="60")  # JSON number or string: the same value
    assert rule("c1") != rule("c1", lifetime=61)
    one = rule_entry(
        {
            "commitment-id": "c",
            "cs-id": "ARS",
            "csci-id": "x",
            "endpoint": [{"prefix": "10.1.0.0/16"}],
        }
    )
    as_xml_reads = rule_entry(
        {
            "commitment-id": "c",
            "cs-id": "ARS",
            "csci-id": "x",
            "endpoint": {"prefix": "10.1.0.0/16"},
        }
    )
    assert one == as_xml_reads


def test_diff_puts_what_differs_and_removes_what_is_not_intended() -> None:
    intended = entries_of([rule("keep"), rule("change", "127.0.0.1:2"), rule("new")])
    actual = entries_of([rule("keep"), rule("change"), rule("stray")])
    changes = diff(intended, actual)
    assert sorted(e.key[1] for e in changes.put) == ["change", "new"]
    assert changes.remove == (("rule", "stray"),)
    assert applied(actual, changes) == intended
    assert len(diff(intended, intended)) == 0


def test_batches_hold_at_most_64_entries_puts_first() -> None:
    puts = tuple(rule(f"c{i}") for i in range(100))
    removes: tuple[EntryKey, ...] = tuple(("rule", f"r{i}") for i in range(40))
    parts = batches(Changes(puts, removes))
    assert [len(p) for p in parts] == [BATCH, BATCH, 12]
    assert parts[0].remove == ()
    assert [len(p.put) for p in parts] == [64, 36, 0]
    assert batches(Changes()) == []


def test_edit_config_replaces_and_removes_entries_and_reads_back() -> None:
    service = service_entry(ARS, outcome(ResultKind.SELECTED, "188.3.67.4:69", "188.3.67.4"))
    assert service is not None
    config = edit_config(Changes((service, rule("c1")), (("rule", "old"),)))
    steering = config[0]
    assert etree.QName(steering).namespace == NS
    operations = [(etree.QName(e).localname, e.get(f"{{{NC}}}operation")) for e in steering]
    assert operations == [("service", "replace"), ("rule", "replace"), ("rule", "remove")]
    assert steering[1].findtext(f"{{{NS}}}match/{{{NS}}}step-id") == "3"
    data = etree.Element(f"{{{NC}}}data")
    data.append(steering)
    for element in steering:
        element.attrib.pop(f"{{{NC}}}operation")
    read = parse_steering(data)
    assert read[("service", "ARS")] == service
    assert read[("rule", "c1")] == rule("c1")
    assert ("rule", "old") in read  # a bare key element parses as an entry with its key only
