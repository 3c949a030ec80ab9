"""Report types, ownership, aging, refusals and the sender ledger of the C-PS ingest
(service-metrics-op 6.2.1, 6.2.2, 8, 9) on a real ServiceMetrics with an injected clock."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.selection.joint import Metric, from_ms
from controller.service_metrics.ingest import cst_changed, cst_entry, cst_values, micros
from controller.service_metrics.ledger import FILE_NAME
from controller.service_metrics.policy import config
from controller.types import Json
from tests.unit.service_metrics.reporting import (
    OTHER,
    SCI3,
    SCI4,
    SM,
    SSMA,
    Built,
    entry,
    error_of,
    path,
)

# ---------------------------------------------------------------- report types (8)


def test_full_report_removes_the_unlisted_entries_of_its_site() -> None:
    built = Built()
    built.report(entry(SCI3), entry(SCI4), site="SS3", kind="full")
    built.report(entry("10.9.9.9:1"), site="SS9")
    built.events("cst-entry-changed")
    reply = built.report(entry(SCI3), site="SS3", kind="full")
    assert reply == {"accepted-entries": 1}
    assert set(built.cst()) == {SCI3, "10.9.9.9:1"}
    (removed,) = built.events("cst-entry-changed")
    assert (removed["csci-id"], removed["change"], removed["gas"]) == (SCI4, "removed", 0)


def test_full_report_without_site_covers_all_entries_of_the_sender() -> None:
    built = Built()
    built.report(entry(SCI3), site="SS3")
    built.report(entry("10.9.9.9:1"), site="SS9")
    built.report(entry(SCI4, gas=0), kind="full")
    assert set(built.cst()) == {SCI4}


def test_delta_keeps_other_entries_and_refreshes_only_its_own() -> None:
    built = Built({"heartbeat-interval": 10, "expiry-multiplier": 2})
    built.report(entry(SCI3), entry(SCI4))
    built.at(5)
    built.report(entry(SCI4))
    rows = built.cst()
    assert rows[SCI3]["expiry-time"] == "2026-11-30T10:00:20.000000Z"
    assert rows[SCI4]["expiry-time"] == "2026-11-30T10:00:25.000000Z"
    assert rows[SCI4]["sequence"] == "2"


def test_heartbeat_refreshes_expiry_without_changing_values() -> None:
    built = Built({"heartbeat-interval": 10, "expiry-multiplier": 2})
    built.report(entry(SCI3, gas=70, price=4))
    built.events("cst-entry-changed")
    built.at(15)
    assert built.report(kind="heartbeat") == {"accepted-entries": 0}
    row = built.cst()[SCI3]
    assert (row["gas"], row["price"], row["sequence"]) == (70, 4, "2")
    assert row["last-updated"] == "2026-11-30T10:00:15.000000Z"
    assert row["expiry-time"] == "2026-11-30T10:00:35.000000Z"
    assert row["freshness-bound"] == "20000.000"
    assert row["last-changed"] == "2026-11-30T10:00:00.000000Z"
    built.at(30)
    built.service.sweep()
    assert built.cst()[SCI3]["aged-out"] is False
    assert built.events("cst-entry-changed") == []


def test_heartbeat_does_not_bring_back_an_aged_out_entry() -> None:
    built = Built({"heartbeat-interval": 1, "expiry-multiplier": 2})
    built.report(entry(SCI3))
    built.at(2)
    built.service.sweep()
    built.at(2.5)
    built.report(kind="heartbeat")
    row = built.cst()[SCI3]
    assert (row["aged-out"], row["gas"], row["reported-gas"]) == (True, 0, 100)
    built.report(entry(SCI3))
    assert (built.cst()[SCI3]["aged-out"], built.cst()[SCI3]["gas"]) == (False, 100)


# ---------------------------------------------------------------- ownership (9)


def test_entry_of_another_sender_is_refused_until_it_ages_out() -> None:
    built = Built({"heartbeat-interval": 5, "expiry-multiplier": 1})
    built.report(entry(SCI3, gas=10))
    built.published.clear()
    reply = built.report(entry(SCI3, gas=999), entry(SCI4), sender=OTHER)
    assert reply["accepted-entries"] == 1
    assert reply["refused-entry"] == [
        {
            "cs-id": "ARS",
            "csci-id": SCI3,
            "reason": f"{SM}:entry-owned-by-other-sender",
            "detail": "held for c-sma-ss3 until 2026-11-30T10:00:05.000000Z",
        },
    ]
    assert built.cst()[SCI3]["gas"] == 10
    assert built.counters(OTHER)["refused-not-authorized"] == "1"
    (refused,) = built.events("report-refused")
    assert refused == {
        "sender": "c-sma-ss2",
        "operation": "report-service-metrics",
        "sequence-number": "2",
        "reason": f"{SM}:entry-owned-by-other-sender",
        "entries": 1,
        "detail": "1 entries refused",
    }
    built.at(5)
    assert built.report(entry(SCI3, gas=20), sender=OTHER) == {"accepted-entries": 1}
    row = built.cst()[SCI3]
    assert (row["source"], row["gas"]) == ("c-sma-ss2", 20)
    senders = built.service.senders_state()[f"{SM}:report-senders"]["sender"]
    assert {s["source"]: s["entries"] for s in senders} == {"c-sma-ss3": 0, "c-sma-ss2": 2}


def test_path_of_another_cnma_is_refused_until_stale() -> None:
    built = Built({"network-entry-lifetime": 10})
    built.paths(path("cf-3", "6"))
    reply = built.paths(path("cf-3", "1"), path("cf-2", "8"), sender=OTHER)
    assert reply["accepted-entries"] == 1
    (refused,) = reply["refused-path"]
    assert (refused["egress"], refused["reason"]) == ("cf-3", f"{SM}:entry-owned-by-other-sender")
    built.at(10.5)
    assert built.paths(path("cf-3", "1"), sender=OTHER) == {"accepted-entries": 1}
    assert built.nst()["cf-3"]["source"] == "c-sma-ss2"


# ---------------------------------------------------------------- aging (6.2.1, 8)


def test_entry_ages_out_and_is_purged_a_lifetime_later() -> None:
    built = Built({"heartbeat-interval": 1, "expiry-multiplier": 2})
    built.report(entry(SCI3, gas=70), entry(SCI4))
    built.at(1)
    built.report(entry(SCI4))
    built.published.clear()
    built.at(2)
    built.service.sweep()
    (aged,) = built.events("cst-entry-changed")
    assert (aged["csci-id"], aged["change"], aged["gas"]) == (SCI3, "aged-out", 0)
    row = built.cst()[SCI3]
    assert (row["aged-out"], row["gas"], row["reported-gas"]) == (True, 0, 70)
    assert built.cst()[SCI4]["aged-out"] is False
    built.at(3)
    built.service.sweep()
    assert [(e["csci-id"], e["change"]) for e in built.events("cst-entry-changed")] == [
        (SCI4, "aged-out")
    ]
    built.at(4)
    built.service.sweep()
    assert [(e["csci-id"], e["change"]) for e in built.events("cst-entry-changed")] == [
        (SCI3, "removed")
    ]
    assert set(built.cst()) == {SCI4}


def test_aged_out_entry_is_excluded_from_selection() -> None:
    built = Built({"heartbeat-interval": 1, "expiry-multiplier": 1})
    built.report(entry(SCI3))
    built.paths(path("188.3.67.4", "6"))
    built.at(1)
    built.service.sweep()
    reply = built.service.select_service(
        Principal("cf"), {"cs-id": "ARS", "ingress": "10.0.0.1", "candidate-report": "examined"}
    )
    assert reply["result"] != "selected"
    full = built.service.select_service(Principal("cf"), {"cs-id": "ARS", "ingress": "10.0.0.1"})
    (candidate,) = full["candidate"]
    assert candidate["reason"] == f"{SM}:entry-expired"


def test_nst_entry_goes_stale_and_is_purged() -> None:
    built = Built({"network-entry-lifetime": 5})
    built.paths(path("cf-3", "6"))
    assert [e["change"] for e in built.events("nst-entry-changed")] == ["added"]
    built.at(5)
    built.service.sweep()
    assert built.events("nst-entry-changed") == []
    built.at(5.5)
    built.service.sweep()
    (stale,) = built.events("nst-entry-changed")
    assert (stale["change"], stale["network-delay"]) == ("stale", "6.000")
    assert built.nst()["cf-3"]["stale"] is True
    built.at(10.5)
    built.service.sweep()
    (removed,) = built.events("nst-entry-changed")
    assert removed == {
        "ingress": "10.0.0.1",
        "egress": "cf-3",
        "change": "removed",
        "previous-network-delay": "6.000",
    }
    assert built.nst() == {}


def test_nst_updates_are_announced_only_when_values_change() -> None:
    built = Built()
    built.paths(path("cf-3", "6"))
    built.paths(path("cf-3", "6"))
    built.paths(path("cf-3", "7.5"))
    changes = [
        (e["change"], e.get("previous-network-delay")) for e in built.events("nst-entry-changed")
    ]
    assert changes == [("added", None), ("updated", "6.000")]
    built.paths(path("cf-2", "1"), kind="full")
    assert [(e["egress"], e["change"]) for e in built.events("nst-entry-changed")] == [
        ("cf-2", "added"),
        ("cf-3", "removed"),
    ]


# ---------------------------------------------------------------- refusals and the ledger (9)


def test_refused_reports_are_announced_and_change_nothing() -> None:
    built = Built()
    built.report(entry(SCI3, gas=5))
    built.published.clear()
    with pytest.raises(CatsError) as caught:
        built.report(entry(SCI3, gas=9), sequence=1)
    assert error_of(caught)[1] == "sequence-not-increasing"
    built.at(20)
    with pytest.raises(CatsError):
        built.service.report_service_metrics(
            SSMA,
            {
                "sequence-number": "5",
                "timestamp": "2026-11-30T10:00:00+00:00",
                "entry": [entry(SCI3, gas=9)],
            },
        )
    reasons = [
        (e["reason"], e["sequence-number"], e["entries"]) for e in built.events("report-refused")
    ]
    assert reasons == [
        (f"{SM}:sequence-not-increasing", "1", 1),
        (f"{SM}:clock-skew-exceeded", "5", 1),
    ]
    assert built.cst()[SCI3]["gas"] == 5
    assert built.published == []


def test_ledger_survives_a_restart_so_a_replay_is_refused(tmp_path: Path) -> None:
    first = Built(state=tmp_path)
    first.report(entry(SCI3))
    first.report(entry(SCI3, gas=5))
    assert not (tmp_path / FILE_NAME).exists()  # written behind, not per report
    first.service.close()
    second = Built(state=tmp_path)
    with pytest.raises(CatsError) as caught:
        second.report(entry(SCI3), sequence=2)
    assert error_of(caught)[1] == "sequence-not-increasing"
    counters = second.counters()
    assert (counters["reports-accepted"], counters["refused-sequence"]) == ("2", "1")
    second.report(entry(SCI3), sequence=3)


def test_sweep_writes_the_ledger_at_most_once_a_second(tmp_path: Path) -> None:
    built = Built(state=tmp_path)
    built.report(entry(SCI3))
    built.service.sweep()
    ledger = tmp_path / FILE_NAME
    written = ledger.read_bytes()
    built.report(entry(SCI3))
    built.at(0.5)
    built.service.sweep()
    assert ledger.read_bytes() == written
    built.at(1)
    built.service.sweep()
    assert ledger.read_bytes() != written
    assert b'"last_sequence":2' in ledger.read_bytes()


def test_sweeper_thread_starts_and_stops() -> None:
    built = Built({"heartbeat-interval": 1, "expiry-multiplier": 1})
    built.report(entry(SCI3))
    built.at(5)
    built.service.start()
    try:
        deadline = time.monotonic() + 60  # the sweeper runs at once; a loaded machine is slow
        while not built.events("cst-entry-changed"):
            if time.monotonic() > deadline:
                pytest.fail("the sweeper did not age the entry out")
            time.sleep(0.02)
    finally:
        built.service.close()
    assert built.cst()[SCI3]["aged-out"] is True


def test_a_shorter_heartbeat_ages_new_entries_out_first() -> None:
    built = Built()
    built.report(entry(SCI4))  # expires after 180 s
    built.config.parsed = config({}, {"heartbeat-interval": 1, "expiry-multiplier": 1}, {})
    built.at(1)
    built.report(entry(SCI3))
    built.published.clear()
    built.at(2)
    built.service.sweep()
    assert [(e["csci-id"], e["change"]) for e in built.events("cst-entry-changed")] == [
        (SCI3, "aged-out")
    ]


def test_a_network_entry_lifetime_set_later_applies_to_held_paths() -> None:
    built = Built()
    built.paths(path("cf-3", "6"))
    built.published.clear()
    built.config.parsed = config({}, {"network-entry-lifetime": 5}, {})
    built.at(6)
    built.service.sweep()
    assert [e["change"] for e in built.events("nst-entry-changed")] == ["stale"]


def affined(built: Built) -> Json:
    built.paths(path("188.3.67.4", "6"))
    asked = {
        "cs-id": "ARS",
        "ingress": "10.0.0.1",
        "session-id": "s-1",
        "requirement": {"session-affinity": True},
    }
    return built.service.select_service(Principal("cf"), asked)


def test_withdrawal_reroutes_the_affined_sessions() -> None:
    built = Built()
    built.report(entry(SCI3))
    assert affined(built)["csci-id"] == SCI3
    built.published.clear()
    built.report(entry(SCI3, gas=0))
    (rerouted,) = built.events("session-rerouted")
    assert (rerouted["session-id"], rerouted["previous-csci-id"], rerouted["action"]) == (
        "s-1",
        SCI3,
        "terminate",
    )


def test_aging_and_full_report_removal_reroute_the_affined_sessions() -> None:
    built = Built({"heartbeat-interval": 1, "expiry-multiplier": 1})
    built.report(entry(SCI3))
    affined(built)
    built.published.clear()
    built.at(1)
    built.service.sweep()
    assert [e["previous-csci-id"] for e in built.events("session-rerouted")] == [SCI3]
    built.report(entry(SCI4))
    affined(built)
    built.published.clear()
    built.report(entry(SCI3), kind="full")
    assert [e["previous-csci-id"] for e in built.events("session-rerouted")] == [SCI4]


def test_nst_heartbeat_keeps_paths_from_going_stale() -> None:
    built = Built({"network-entry-lifetime": 5})
    built.paths(path("cf-3", "6"))
    built.at(4)
    assert built.paths(kind="heartbeat") == {"accepted-entries": 0}
    built.at(8)
    built.service.sweep()
    row = built.nst()["cf-3"]
    assert (row["stale"], row["sequence"], row["network-delay"]) == (False, "2", "6.000")
    assert row["last-updated"] == "2026-11-30T10:00:04.000000Z"
    built.at(9.5)
    built.service.sweep()
    assert built.nst()["cf-3"]["stale"] is True


def test_a_failed_ledger_write_is_logged_and_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    built = Built(state=blocked)
    built.report(entry(SCI3))
    built.service.sweep()
    assert "the report-sender ledger could not be written" in caplog.text
    blocked.unlink()
    blocked.mkdir()
    built.at(1)
    built.service.sweep()  # nothing new was reported: written because the last write failed
    assert b'"last_sequence":1' in (blocked / FILE_NAME).read_bytes()


# ---------------------------------------------------------------- milliseconds


@pytest.mark.parametrize(
    "value", ["0", "7", "12.5", "12.50", "12.345", "0.001", "007.1", "5.", "1_000", "١٢", 3]
)
def test_micros_agrees_with_from_ms(value: str | int) -> None:
    assert micros(value) == from_ms(str(value))


@pytest.mark.parametrize("value", ["1.2345", "-1", "x", "", "1e3.5"])
def test_micros_refuses_what_from_ms_refuses(value: str) -> None:
    with pytest.raises((ValueError, ArithmeticError)) as expected:
        from_ms(value)
    with pytest.raises(type(expected.value)):
        micros(value)


def test_numeric_identifiers_key_the_same_entry_as_their_text() -> None:
    """cs-id and csci-id are unions with uint32 members, which RFC 7951 prints as numbers:
    a report of cs-id 7 / csci-id 42 updates one entry, not a new one each time."""
    built = Built()
    built.report({**entry("42", gas=100), "cs-id": 7, "csci-id": 42})
    built.report({**entry("42", gas=102), "cs-id": 7, "csci-id": 42})
    assert built.cst() == {"42": {**built.cst()["42"], "gas": 102}}
    changes = [e["change"] for e in built.events("cst-entry-changed")]
    assert changes == ["added"]  # the second report changed GAS below the thresholds


def test_an_estimated_entry_keeps_its_computing_time_as_an_estimate() -> None:
    """5.3.2: confidence estimated marks the Computing Time; a measurement replacing it with
    the same value is still a change of the entry (last-changed)."""
    reported = {"cs-id": "ARS", "csci-id": "a:1", "gas": 10, "computing-time": "40"}
    estimated = cst_entry({**reported, "confidence": "estimated"}, 0.0, 30.0, None, None)
    measured = cst_entry({**reported, "confidence": "asserted"}, 0.0, 30.0, None, None)
    assert estimated.estimated == (Metric.COMPUTING_TIME,)
    assert measured.estimated == cst_entry(reported, 0.0, 30.0, None, None).estimated == ()
    assert cst_changed(estimated, measured)
    assert cst_values(estimated) != cst_values(measured)
