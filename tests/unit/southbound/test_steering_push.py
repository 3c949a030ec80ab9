"""Workers, reconciliation, fan-out results and the planner, over a fake session (the
:class:`SteeringSession` Protocol seam) and a fake running datastore; no socket."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from controller.datastore.api import (
    DatastoreName,
    Principal,
    ReadRequest,
    ReadResult,
    Revision,
)
from controller.errors import ErrorItem, ErrorType
from controller.selection.joint import FallbackLevel, Outcome, ResultKind
from controller.selection.joint.tracking import TableChanges
from controller.southbound.errors import PeerUnreachableError, SouthboundError
from controller.southbound.forwarders import SteeringService, status_json
from controller.southbound.intended import IntendedState
from controller.southbound.inventory import ForwarderSpec
from controller.southbound.push import ForwarderWorker, PushSettings, push_all
from controller.southbound.session import WriteSettings, Written
from controller.southbound.steering import Changes, Entry, EntryKey, applied, rule_entry
from controller.types import CsciId, CsId, ForwarderId

RULE = {
    "commitment-id": "c1",
    "cs-id": "ARS",
    "match": {"session-id": "s1"},
    "csci-id": "127.0.0.1:8801",
    "egress-forwarder": "10.0.0.2",
    "lifetime": 60,
}
SETTINGS = PushSettings(reconcile_interval=1000.0, backoff=0.01, max_backoff=0.05)


class FakeForwarder:
    """A forwarder's running steering and the session to it; ``down`` refuses every call."""

    def __init__(self) -> None:
        self.running: dict[EntryKey, Entry] = {}
        self.connections = 1
        self.down = False
        self.reads = 0
        self.writes: list[Changes] = []

    def _check(self) -> None:
        if self.down:
            raise PeerUnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "down"))

    def read(self) -> dict[EntryKey, Entry]:
        self._check()
        self.reads += 1
        return dict(self.running)

    def write(self, changes: Changes, settings: WriteSettings | None = None) -> Written:
        self._check()
        self.writes.append(changes)
        self.running = applied(self.running, changes)
        return Written(1, len(changes), confirmed=True)

    def close(self) -> None:
        pass


def test_a_worker_fills_repairs_and_pushes_only_differences() -> None:
    intended, fake = IntendedState(), FakeForwarder()
    fake.running[("rule", "stray")] = rule_entry({**RULE, "commitment-id": "stray"})
    worker = ForwarderWorker("a", fake, intended, SETTINGS)
    intended.intend_rule("a", RULE)
    status = worker.step()
    assert fake.reads == 1  # the first step reads what the forwarder holds
    assert [e.key for e in fake.writes[0].put] == [("rule", "c1")]
    assert fake.writes[0].remove == (("rule", "stray"),)
    assert status.in_sync
    assert status.acked == intended.generation("a")
    worker.step()
    assert len(fake.writes) == 1  # nothing differs: nothing written, nothing read
    assert fake.reads == 1
    fake.running = {}  # the forwarder restarted empty, on a new session
    fake.connections += 1
    status = worker.step()
    assert fake.reads == 2
    assert fake.running == intended.snapshot("a")[1]
    assert status.reconnects == 1
    assert status.repairs == 1


def test_in_sync_is_false_from_an_intended_change_until_a_push_acknowledges_it() -> None:
    intended, fake = IntendedState(), FakeForwarder()
    worker = ForwarderWorker("a", fake, intended, SETTINGS)
    intended.intend_rule("a", RULE)
    worker.step()
    state = status_json(worker.status, intended.counts("a"), intended.generation("a"))
    assert state["in-sync"] is True
    assert state["pushes"] == "1"
    intended.intend_rule("a", {**RULE, "csci-id": "127.0.0.1:8802"})  # not pushed yet
    state = status_json(worker.status, intended.counts("a"), intended.generation("a"))
    assert state["in-sync"] is False  # the forwarder does not hold what is intended now
    worker.step()
    state = status_json(worker.status, intended.counts("a"), intended.generation("a"))
    assert (state["in-sync"], state["pushes"]) == (True, "2")


def test_a_failure_backs_off_and_reads_again_after_it() -> None:
    intended, fake = IntendedState(), FakeForwarder()
    worker = ForwarderWorker("a", fake, intended, SETTINGS)
    worker.step()
    fake.down = True
    intended.intend_rule("a", RULE)
    status = worker.step()
    assert not status.in_sync
    assert not status.connected
    assert status.failures == 1
    assert status.last_error == "down"
    assert status.pending == 1
    fake.down = False
    status = worker.step()
    assert status.in_sync
    assert status.last_error is None
    assert fake.reads == 2  # unknown what the failed attempt left: read first


def test_push_all_returns_a_result_per_forwarder() -> None:
    intended = IntendedState()
    up, down = FakeForwarder(), FakeForwarder()
    down.down = True
    workers = [ForwarderWorker(n, f, intended, SETTINGS) for n, f in (("up", up), ("down", down))]
    for name in ("up", "down"):
        intended.intend_rule(name, RULE)
    for worker in workers:
        worker.start()
    try:
        results = push_all(workers, intended, timeout=5)
        assert [r.forwarder for r in results.failed] == ["down"]
        assert [r.forwarder for r in results.succeeded] == ["up"]
        assert results["up"].status.in_sync
        with pytest.raises(SouthboundError, match="down"):
            results.raise_on_error()
        down.down = False
        push_all(workers, intended, timeout=5).raise_on_error()  # retried, converged
        assert ("rule", "c1") in down.running
    finally:
        for worker in workers:
            worker.stop()


class FakeRunning:
    """Running with a forwarder inventory, as the server core's read returns it."""

    def __init__(self, inventory: dict[str, object]) -> None:
        self.document = json.dumps({"ietf-cats-steering:forwarders": inventory})

    def revision(self, datastore: DatastoreName, path: str | None) -> Revision:
        return Revision(str(hash(self.document)), datetime.now(UTC))

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        return ReadResult(self.document, self.revision(request.datastore, request.path))

    def reveal(self, secret: str) -> str:
        return secret


def test_the_planner_re_evaluates_only_the_affected_pairs() -> None:
    asked: list[tuple[CsId, ForwarderId]] = []
    chosen = {"ARS": "127.0.0.1:1"}

    def outcomes(pairs: Sequence[tuple[CsId, ForwarderId]]) -> list[Outcome]:
        asked.extend(pairs)
        return [
            Outcome(
                ResultKind.SELECTED,
                FallbackLevel.NONE,
                (),
                complete=False,
                csci_id=CsciId(chosen.get(cs, "127.0.0.1:9")),
                egress=ForwarderId("10.9.9.9"),
            )
            for cs, _ in pairs
        ]

    fakes: dict[str, FakeForwarder] = {}

    def sessions(spec: ForwarderSpec) -> FakeForwarder:
        return fakes.setdefault(spec.name, FakeForwarder())

    common = {"address": "127.0.0.1", "username": "cps", "role": ["ingress"]}
    running = FakeRunning(
        {
            "forwarder": [
                {"name": "a", "ingress-id": "10.0.0.1", "cs-id": ["ARS", "VRS"], **common},
                {"name": "b", "ingress-id": "10.0.0.2", "cs-id": ["ARS"], **common},
                {"name": "e", "role": ["egress"], "address": "127.0.0.1", "username": "cps"},
            ]
        }
    )
    service = SteeringService(lambda: running, outcomes, sessions=sessions, settings=SETTINGS)
    try:
        service.refresh()  # the first evaluation is of every pair
        assert sorted(asked) == sorted(
            [("ARS", "10.0.0.1"), ("VRS", "10.0.0.1"), ("ARS", "10.0.0.2")]
        )
        service.push(timeout=5).raise_on_error()
        assert fakes["a"].running[("service", "ARS")].members["csci-id"] == "127.0.0.1:1"
        assert fakes["e"].running == {}
        asked.clear()
        chosen["ARS"] = "127.0.0.1:2"
        service.refresh(TableChanges(ingresses=frozenset({ForwarderId("10.0.0.2")})))
        assert asked == [("ARS", "10.0.0.2")]  # an NST change at b's ingress only
        results = service.push(timeout=5)
        assert not results.failed
        assert fakes["b"].running[("service", "ARS")].members["csci-id"] == "127.0.0.1:2"
        assert fakes["a"].running[("service", "ARS")].members["csci-id"] == "127.0.0.1:1"
        asked.clear()
        service.refresh(TableChanges(cs_ids=frozenset({CsId("VRS")})))
        assert asked == [("VRS", "10.0.0.1")]
        state = service.state()["ietf-cats-steering:forwarders"]["forwarder"]
        assert [f["name"] for f in state] == ["a", "b", "e"]
        assert state[0]["state"]["intended-services"] == 2
        assert state[0]["state"]["session"] == "connected"
    finally:
        service.close()


def test_rules_go_through_the_same_intended_state() -> None:
    fake = FakeForwarder()
    running = FakeRunning(
        {
            "forwarder": [
                {"name": "e", "role": ["egress"], "address": "127.0.0.1", "username": "cps"},
            ]
        }
    )
    service = SteeringService(
        lambda: running, lambda pairs: [], sessions=lambda spec: fake, settings=SETTINGS
    )
    try:
        service.refresh()
        assert service.intend_rule("e", RULE)
        assert not service.intend_rule("e", RULE)
        service.push(timeout=5).raise_on_error()
        assert list(fake.running) == [("rule", "c1")]
        assert service.withdraw_rule("e", "c1")
        service.push(timeout=5).raise_on_error()
        assert fake.running == {}
        assert sum(len(c.put) for c in fake.writes) == 1  # the repeated rule was not re-sent
    finally:
        service.close()


def test_a_large_change_is_committed_in_parts() -> None:
    intended, fake = IntendedState(), FakeForwarder()
    settings = PushSettings(write=WriteSettings(commit_size=2))
    worker = ForwarderWorker("a", fake, intended, settings)
    for index in range(5):
        intended.intend_rule("a", {**RULE, "commitment-id": f"c{index}"})
    status = worker.step()
    assert [len(c) for c in fake.writes] == [2, 2, 1]
    assert status.entries_written == 5
    assert len(fake.running) == 5
