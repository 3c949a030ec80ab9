"""agents.forwarder.model: RFC 7951 steering documents as values."""

from __future__ import annotations

from datetime import UTC, datetime

from agents.forwarder import model
from agents.forwarder.values import EntryKey, FallbackMode, Kind, locator
from controller.types import CommitmentId, CsId
from tests.unit.forwarder.helpers import A, rule, service, steering


def test_defaults_are_filled_in() -> None:
    found = steering([service()], [rule("c1")], **{"forwarder-id": "192.0.2.1"})
    entry = found.services[CsId("ARS")]
    assert (entry.mode, entry.csci_id, entry.egress) == (FallbackMode.NORMAL, A, "egress-1")
    assert found.rules[CommitmentId("c1")].priority == 128
    assert found.affinity.enabled
    assert found.affinity.flow_timeout == 120
    assert found.forwarder_id == "192.0.2.1"


def test_numbers_and_decimals_become_python_values() -> None:
    monitored = rule("c1", match={"session-id": "s", "first-step": 3})
    monitored["progress-monitoring"] = {"expected-duration": "50.000", "tail-factor": "1.50"}
    monitored["installed-at"] = "2026-11-30T12:00:00Z"
    found = steering([service("7") | {"cs-id": 7}], [monitored])
    assert "7" in found.services
    parsed = found.rules[CommitmentId("c1")]
    assert parsed.match.first_step == 3
    assert parsed.progress is not None
    assert parsed.progress.threshold_s == 0.075
    assert parsed.expiry.installed_at == datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp()


def test_fingerprint_ignores_key_order() -> None:
    assert model.fingerprint({"a": 1, "b": [2]}) == model.fingerprint({"b": [2], "a": 1})


def test_entry_paths_round_trip() -> None:
    key = EntryKey(Kind.RULE, "it's")
    path = model.entry_path(key)
    assert path == '/ietf-cats-steering:steering/rule[commitment-id="it\'s"]'
    assert model.entry_of(path + "/match/session-id") == key
    assert model.entry_of("/ietf-cats-steering:steering/flow-affinity") is None
    service_path = "/ietf-cats-steering:steering/service[cs-id='ARS']"
    assert model.entry_of(service_path) == EntryKey(Kind.SERVICE, "ARS")


def test_read_entry_of_a_missing_entry_is_none() -> None:
    key = EntryKey(Kind.SERVICE, "ARS")
    assert model.read_entry(None, key) is None
    found = model.read_entry({"ietf-cats-steering:service": [service()]}, key)
    assert found is not None
    assert found.key == key


def test_locators() -> None:
    assert locator("10.0.0.1:80") is not None
    assert locator("[2001:db8::1]:443") is not None
    assert locator("10.0.0.1") is None
    assert locator("sci-a") is None
