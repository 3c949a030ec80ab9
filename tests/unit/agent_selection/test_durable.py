"""An agent session as a cluster keeps it (controller.agent_selection.durable), and two C-PS
replicas sharing their sessions through the SharedRecords seam (docs/cluster.md, "Agent
sessions")."""

from __future__ import annotations

import array
import dataclasses
import math
import os
import pickle
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client import REGISTRY

from controller.agent_selection.durable import DurableError, decode, encode
from controller.agent_selection.sessions import Session
from controller.model import Schema
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import Harness, harness
from tests.unit.agent_selection.shared_double import SharedDouble
from tests.unit.agent_selection.test_steering import Recorder


def _moving(schema: Schema, **options: Any) -> Harness:
    """The 6.8 session at step 30 with its handoff to B reserved (two decision records, two
    commitments' worth of history, a handoff in flight)."""
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68, **options)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_68("s-68", 29)})
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("advertise-capability", drafts.capability(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-68", "turn-id": 1, "step-id": 30})
    return h


def _equal(one: Any, other: Any) -> bool:
    """Equal values, field by field, ``nan`` equal to itself (the valuations hold it)."""
    if type(one) is not type(other):
        return False
    if dataclasses.is_dataclass(one):
        return all(
            _equal(getattr(one, f.name), getattr(other, f.name)) for f in dataclasses.fields(one)
        )
    if isinstance(one, (tuple, list, array.array)):
        return len(one) == len(other) and all(map(_equal, one, other))
    if isinstance(one, Mapping):
        return one.keys() == other.keys() and all(_equal(one[k], other[k]) for k in one)
    if isinstance(one, float) and math.isnan(one):
        return math.isnan(other)
    return bool(one == other)


def _count(result: str) -> float:
    found = REGISTRY.get_sample_value(
        "cats_agent_selection_sessions_kept_total", {"result": result}
    )
    return found or 0.0


def _kept(h: Harness, double: SharedDouble, name: str = "s-68") -> Session:
    return decode(double.values[name][1])


def test_a_session_reads_back_as_the_same_value(schema: Schema) -> None:
    double = SharedDouble()
    h = _moving(schema, records=double.replica())
    data = double.values["s-68"][1]
    session = decode(data)
    assert session.handoffs[0].state.value == "reserved"
    assert len(session.records) == 2
    assert _equal(decode(encode(session)), session)
    assert not _equal(replace(session, step=31), session)
    assert len(data) < 4096  # zlib over the pickle (2.4 kB measured)
    assert session.in_force is not None
    assert session.in_force.commitment.commitment_id == "cm-s-68-1"
    assert h.session("s-68")["current-commitment"] == "cm-s-68-1"


class _Runs:
    """A value whose unpickling would call a function."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.getcwd, ())


@pytest.mark.parametrize(
    "data",
    [
        zlib.compress(pickle.dumps(_Runs())),
        zlib.compress(pickle.dumps({"session-id": "s"})),
        zlib.compress(b"not a pickle"),
        b"not zlib",
    ],
    ids=["names-a-function", "not-a-session", "not-a-pickle", "not-compressed"],
)
def test_bytes_that_are_not_a_session_are_refused_without_running_them(data: bytes) -> None:
    with pytest.raises(DurableError):
        decode(data)


@contextmanager
def _started(*harnesses: Harness) -> Iterator[None]:
    for each in harnesses:
        each.service.start()
    try:
        yield
    finally:
        for each in harnesses:
            each.service.close()


def test_a_session_admitted_on_one_replica_goes_on_on_another(schema: Schema) -> None:
    """Admitted on A: B answers for it (its state, a step boundary), steers its commitment as
    its own, and A sees what B changed; each change is one put."""
    double = SharedDouble()
    specs = drafts.example_84(0.5)
    recorder = Recorder()
    a = harness(schema, specs, records=double.replica())
    b = harness(schema, specs, steering=recorder, records=double.replica())
    with _started(a, b):
        a.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-84")})
        assert _same(a, b)
        assert list(recorder.held()) == ["cm-s-84-1"]  # B would push it, were it to lead
        puts = double.replicas[0].puts
        assert puts == 1  # the RPC's changes (session, decision, commitment) in one put

        b.clock.now = a.clock.now = a.clock.now + 10
        b.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 2})
        (commitment,) = a.session("s-84")["commitment"]
        assert commitment["steps"] == {"first": 1, "last": 2}
        assert _same(a, b)
        assert recorder.held()["cm-s-84-1"].last_step == 2


def test_a_change_on_a_stale_replica_is_dropped_for_the_newer_one(schema: Schema) -> None:
    """B missed A's change (its watch is late): B's own put is refused, A's value adopted."""
    double = SharedDouble()
    specs = drafts.example_84(0.5)
    a = harness(schema, specs, records=double.replica())
    b_records = double.replica()
    b = harness(schema, specs, records=b_records)
    with _started(a, b):
        a.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-84")})
        late = b_records.event
        b_records.event = lambda name: None  # type: ignore[method-assign]
        a.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 2})
        before = _count("overtaken")
        b.call("step-boundary", {"session-id": "s-84", "boundary": "pause"})
        assert _count("overtaken") == before + 1
        b_records.event = late  # type: ignore[method-assign]
        assert _kept(a, double, "s-84").step == 2
        assert _same(a, b)  # B took A's value: not paused, at step 2
        assert b.session("s-84")["state"] != "paused"
        assert b.session("s-84")["commitment"][0]["steps"] == {"first": 1, "last": 2}


def test_a_closed_session_is_forgotten_everywhere_after_its_retention(schema: Schema) -> None:
    double = SharedDouble()
    specs = drafts.example_84(0.5)
    a = harness(schema, specs, records=double.replica())
    b = harness(schema, specs, records=double.replica())
    with _started(a, b):
        a.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-84")})
        a.call("close-session", {"session-id": "s-84"})
        assert b.session("s-84")["state"] == "closed"
        for each in (a, b):
            each.clock.now += 10**6
        a.service.sweep()  # the leader's sweep purges it and deletes its key
        assert "s-84" not in double.values
        assert "session" not in b.state()


def _same(a: Harness, b: Harness, session_id: str = "s-84") -> bool:
    """Whether both replicas serve the session alike (reuse-key handles aside: each replica
    scopes them under its own secret)."""
    mine, theirs = a.session(session_id), b.session(session_id)
    names = ("state", "current-step", "commitment", "current-commitment", "handoff")
    return all(mine.get(n) == theirs.get(n) for n in names) and len(
        mine.get("decision-record", [])
    ) == len(theirs.get("decision-record", []))


def _two(schema: Schema) -> tuple[Harness, Harness, SharedDouble]:
    """A with the 6.8 handoff to B reserved (kept); replica B following the same sessions."""
    double = SharedDouble()
    a = _moving(schema, records=double.replica())
    b = harness(schema, drafts.example_68(b_delay=0.3), drafts.CONTEXT_68, records=double.replica())
    b.clock.now = a.clock.now
    return a, b, double


def test_a_handoff_reserved_on_a_replica_that_died_completes_on_another(schema: Schema) -> None:
    """The target's completion reaches replica B (A is gone): B commits the handoff, the
    session moves as one value (handoff committed and the new commitment current)."""
    a, b, double = _two(schema)
    with _started(b):
        (handoff,) = b.session("s-68")["handoff"]
        assert handoff["state"] == "reserved"
        notice = {
            "handoff-id": handoff["handoff-id"],
            "reporter": "target",
            "status": "completed",
            "usable-key": ["ctx"],
            "at": drafts.iso(b.clock.now),
        }
        b.call("state-transfer-notice", notice)
        kept = _kept(b, double)
        assert kept.handoffs[0].state.value == "committed"
        assert kept.in_force is not None
        assert kept.in_force.commitment.csci_id == "B"
        assert kept.current == kept.in_force.commitment_id != "cm-s-68-1"
    assert a.session("s-68")["current-commitment"] == "cm-s-68-1"  # A, dead, never heard


def test_a_handoff_nobody_completes_is_aborted_by_the_leaders_sweep(schema: Schema) -> None:
    """No notice comes: the leader's sweep aborts the handoff once its reservation ends (its
    reason in the handoff record) and the session stays at the source, its rule kept."""
    recorder = Recorder()
    double = SharedDouble()
    a = _moving(schema, records=double.replica())
    b = harness(
        schema,
        drafts.example_68(b_delay=0.3),
        drafts.CONTEXT_68,
        steering=recorder,
        records=double.replica(),
    )
    b.clock.now = a.clock.now
    with _started(b):
        assert list(recorder.held()) == ["cm-s-68-1"]
        b.clock.now += 61  # past the reservation (60 s), within the commitment (300 s)
        b.service.sweep()
        kept = _kept(b, double)
        (handoff,) = kept.handoffs
        assert handoff.state.value == "aborted"
        assert handoff.abort_reason is not None
        assert handoff.abort_reason.value in {"reservation-expired", "handoff-timeout"}
        assert kept.current == "cm-s-68-1"
        rendered = b.session("s-68")["handoff"][0]
        assert rendered["abort-reason"].endswith(handoff.abort_reason.value)
        assert list(recorder.held()) == ["cm-s-68-1"]  # the source's rule stays
