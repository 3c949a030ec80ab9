"""P8's steering instruction (MSG-10): commitment -> steering rule, and what is handed when.

The service hands its instructions to a recording :class:`Steering` seam; every rule is checked
against ietf-cats-steering by libyang, and printed back by it unchanged (what a forwarder
returns in get-config must equal what the C-PS intends, or reconciliation never settles).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from controller.agent_selection import descriptors
from controller.agent_selection.sessions import CommitmentRecord, Session
from controller.agent_selection.steering import (
    Instructed,
    Placement,
    SteeringInstruction,
    instant,
    instructions,
    steering_rule,
)
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Schema
from controller.model.schema import InstanceKind
from controller.selection.mapping import Commitment
from controller.types import CommitmentId, CsciId, CsId, Json, Prefix, SessionId
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import Harness, harness

ST = "ietf-cats-steering"


class Recorder:
    """A Steering seam that records what it is handed, fails while ``fail`` is set, and places
    no rule while ``missing`` names what is missing (no egress, no forwarder)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, SteeringInstruction]] = []
        self.fail = False
        self.missing: str | None = None

    def _take(self, what: str, instruction: SteeringInstruction) -> None:
        if self.fail:
            item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "forwarders unreachable")
            raise CatsError(item)
        self.calls.append((what, instruction))

    def instruct(self, instruction: SteeringInstruction) -> Placement:
        self._take("instruct", instruction)
        return Placement(pending=self.missing)

    def withdraw(self, instruction: SteeringInstruction) -> None:
        self._take("withdraw", instruction)

    def held(self) -> dict[str, SteeringInstruction]:
        """What a forwarder holds after every call, in order: rules by commitment id."""
        found: dict[str, SteeringInstruction] = {}
        for what, instruction in self.calls:
            if what == "instruct":
                found[instruction.commitment_id] = instruction
            else:
                found.pop(instruction.commitment_id, None)
        return found

    def trace(self) -> list[tuple[str, str]]:
        return [(what, i.commitment_id) for what, i in self.calls]


def _rule_document(rule: Json) -> str:
    return json.dumps({f"{ST}:steering": {"rule": [rule]}})


def _printed(schema: Schema, rule: Json) -> Json:
    """The rule as libyang prints it back (a forwarder's get-config)."""
    tree = schema.context.parse_data_mem(
        _rule_document(rule), "json", strict=True, validate_present=False, parse_only=True
    )
    assert tree is not None
    try:
        printed: Json = json.loads(tree.print_mem("json", with_siblings=True))
    finally:
        tree.free()
    (found,) = printed[f"{ST}:steering"]["rule"]
    return {k.split(":")[-1]: v for k, v in found.items()}


def _admitted(schema: Schema, recorder: Recorder, session: str = "s-84") -> Harness:
    h = harness(schema, drafts.example_84(0.5), steering=recorder)
    reply = h.call("submit-descriptor", {"descriptor": drafts.descriptor_84(session)})
    assert reply["selected"] == "C"
    return h


# ---------------------------------------------------------------- the mapping


def test_p8_admission_hands_one_instruction_that_maps_to_a_valid_rule(schema: Schema) -> None:
    recorder = Recorder()
    h = _admitted(schema, recorder)
    assert recorder.trace() == [("instruct", "cm-s-84-1")]
    (_, instruction) = recorder.calls[0]
    (commitment,) = h.session("s-84")["commitment"]
    assert instruction.instruction_id == commitment["steering-instruction-id"]
    rule = steering_rule(instruction, "CF-3")
    assert rule == {
        "commitment-id": "cm-s-84-1",
        "cs-id": drafts.SERVICE,
        "match": {"session-id": "s-84", "first-step": 1, "last-step": 1},
        "csci-id": "C",
        "egress-forwarder": "CF-3",
        "installed-at": instant(h.clock.now),
        "lifetime": 600,
        "expires-at": instant(h.clock.now + 600),
        "decision-id": "s-84/1",
    }
    schema.validate(_rule_document(rule), InstanceKind.CONFIG)
    assert commitment["expires-at"].removesuffix("Z") == rule["expires-at"].removesuffix("+00:00")


def test_the_rule_names_endpoints_supersedes_and_rounds_the_lifetime_up(schema: Schema) -> None:
    instruction = SteeringInstruction(
        CommitmentId("cm-s-2"),
        "si-cm-s-2",
        SessionId("s"),
        CsId("agent"),
        CsciId("10.0.0.9:80"),
        30,
        None,
        1_800_000_000.25,
        90.5,
        (Prefix("192.0.2.0/24"), Prefix("198.51.100.7/32"), Prefix("192.0.2.0/24")),
        "s/7",
        CommitmentId("cm-s-1"),
    )
    rule = steering_rule(instruction, "198.51.100.1")
    assert rule["match"] == {"session-id": "s", "first-step": 30}  # open-ended range
    assert rule["lifetime"] == 91
    assert rule["expires-at"] == "2027-01-15T08:01:30.750+00:00"
    assert rule["endpoint"] == [{"prefix": "192.0.2.0/24"}, {"prefix": "198.51.100.7/32"}]
    assert rule["supersedes"] == "cm-s-1"
    schema.validate(_rule_document(rule), InstanceKind.CONFIG)


def test_the_rule_is_what_libyang_prints_back_so_reconciliation_settles(schema: Schema) -> None:
    instruction = SteeringInstruction(
        CommitmentId("cm-s-1"),
        "si",
        SessionId("s"),
        CsId("agent"),
        CsciId("C"),
        3,
        5,
        1_800_000_000.0,
        600.0,
        (Prefix("192.0.2.0/24"),),
        "s/1",
    )
    rule = steering_rule(instruction, "CF-3")
    assert _printed(schema, rule) == rule


def _session(**changes: Any) -> Session:
    desc = descriptors.descriptor(drafts.descriptor_84("s-1"))
    commitment = Commitment(CommitmentId("cm-s-1-1"), CsciId("C"), 1, 1000.0, 600.0, 1)
    entry = CommitmentRecord(commitment, "si-cm-s-1-1", record_id=1)
    session = Session(
        SessionId("s-1"),
        desc.tenant,
        desc.service_id,
        1000.0,
        {},
        desc,
        commitments=(entry,),
        current=entry.commitment_id,
    )
    return replace(session, **changes)


def _with_commitment(**changes: Any) -> Session:
    session = _session()
    (entry,) = session.commitments
    changed = replace(entry, commitment=replace(entry.commitment, **changes))
    return replace(session, commitments=(changed,), current=changed.commitment_id)


@pytest.mark.parametrize(
    ("session", "now", "handed"),
    [
        (_session(), 1000.0, 1),
        (_session(state="paused"), 1599.0, 1),
        (_with_commitment(commitment_id=CommitmentId("c" * 128)), 1000.0, 1),
        (_session(), 1600.0, 0),  # expired at created-at + lifetime
        (_session(state="closed"), 1000.0, 0),
        (_session(state="failed"), 1000.0, 0),
        (_session(current=None), 1000.0, 0),
        (_session(commitments=(replace(_session().commitments[0], state="superseded"),)),
         1000.0, 0),
        (_with_commitment(lifetime=None), 1000.0, 0),  # MSG-10 carries a lifetime
        (_with_commitment(commitment_id=CommitmentId("c" * 129)), 1000.0, 0),  # not a key
    ],
)  # fmt: skip
def test_only_the_active_unexpired_commitment_of_an_open_session_is_handed(
    session: Session, now: float, handed: int
) -> None:
    assert len(instructions(session, now)) == handed


def test_instructed_hands_differences_only() -> None:
    ledger = Instructed()
    session = _session()
    first = instructions(session, 1000.0)
    handing = ledger.differences(session.session_id, first)
    assert [i.commitment_id for i in handing.instruct] == ["cm-s-1-1"]
    ledger.record(session.session_id, first)
    assert not ledger.differences(session.session_id, instructions(session, 1000.0))
    assert ledger.expired(1599.0) == []
    assert ledger.expired(1600.0) == [session.session_id]
    gone = ledger.differences(session.session_id, {})
    assert [i.commitment_id for i in gone.withdraw] == ["cm-s-1-1"]


# ---------------------------------------------------------------- what the service hands


def test_a_repeated_instruction_is_handed_once_and_a_revision_keeps_the_key(
    schema: Schema,
) -> None:
    recorder = Recorder()
    h = _admitted(schema, recorder)
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 1})
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 1})
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-84")})  # same instant
    assert recorder.trace() == [("instruct", "cm-s-84-1")]
    h.clock.now += 10
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 2})
    assert recorder.trace() == [("instruct", "cm-s-84-1"), ("instruct", "cm-s-84-1")]
    (held,) = recorder.held().values()  # revised: still one rule
    assert (held.first_step, held.last_step, held.installed_at) == (1, 2, h.clock.now)


def test_a_handoff_commit_instructs_the_new_rule_before_it_withdraws_the_old(
    schema: Schema,
) -> None:
    recorder = Recorder()
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68, steering=recorder)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_68("s-68", 29)})
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-68", "turn-id": 1, "step-id": 30})
    assert set(recorder.held()) == {"cm-s-68-1"}  # reserved, not committed: the source holds
    (handoff,) = h.session("s-68")["handoff"]
    notice = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "target",
        "status": "completed",
        "usable-key": ["ctx"],
        "at": drafts.iso(h.clock.now),
    }
    before = len(recorder.calls)
    h.call("state-transfer-notice", notice)
    h.call("state-transfer-notice", notice)  # repeated: nothing more is handed
    assert recorder.trace()[before:] == [("instruct", "cm-s-68-2"), ("withdraw", "cm-s-68-1")]
    (held,) = recorder.held().values()
    assert (held.csci_id, held.supersedes, held.first_step) == ("B", "cm-s-68-1", 30)


def test_an_aborted_handoff_leaves_the_source_rule_alone(schema: Schema) -> None:
    recorder = Recorder()
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68, steering=recorder)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_68("s-ab", 29)})
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-ab", "turn-id": 1, "step-id": 30})
    (handoff,) = h.session("s-ab")["handoff"]
    failed = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "source",
        "status": "failed",
        "at": drafts.iso(h.clock.now),
    }
    h.call("state-transfer-notice", failed)
    assert h.session("s-ab")["handoff"][0]["state"] == "aborted"
    assert [w for w, _ in recorder.calls] == ["instruct"] * len(recorder.calls)
    assert set(recorder.held()) == {"cm-s-ab-1"}


def test_close_withdraws_the_rule_and_a_repeated_close_hands_nothing(schema: Schema) -> None:
    recorder = Recorder()
    h = _admitted(schema, recorder)
    h.call("close-session", {"session-id": "s-84"})
    h.call("close-session", {"session-id": "s-84"})
    assert recorder.trace() == [("instruct", "cm-s-84-1"), ("withdraw", "cm-s-84-1")]


def test_an_expired_commitment_is_withdrawn_by_the_sweep_and_renewed_at_the_next_step(
    schema: Schema,
) -> None:
    recorder = Recorder()
    h = _admitted(schema, recorder)
    h.clock.now += 599
    h.service.sweep()
    assert recorder.trace() == [("instruct", "cm-s-84-1")]
    h.clock.now += 1
    h.service.sweep()
    h.service.sweep()
    assert recorder.trace() == [("instruct", "cm-s-84-1"), ("withdraw", "cm-s-84-1")]
    specs = drafts.example_84(0.5)  # fresh advertisements: the old ones are stale by now
    h.call("advertise-capability", drafts.capability(specs, h.clock.now, sequence=2))
    h.call("advertise-forwarding-view", drafts.forwarding(specs, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 2})
    assert recorder.trace()[2:] == [("instruct", "cm-s-84-1")]  # renewed, the same commitment
    assert recorder.held()["cm-s-84-1"].installed_at == h.clock.now


def test_a_hand_off_that_fails_is_tried_again_at_the_next_sweep(schema: Schema) -> None:
    recorder = Recorder()
    recorder.fail = True
    h = _admitted(schema, recorder)  # the decision stands although steering failed
    assert recorder.calls == []
    h.service.sweep()
    assert recorder.calls == []
    recorder.fail = False
    h.service.sweep()
    assert recorder.trace() == [("instruct", "cm-s-84-1")]
    h.service.sweep()
    assert recorder.trace() == [("instruct", "cm-s-84-1")]


def test_start_hands_every_commitment_held_before_the_sweeper_runs(schema: Schema) -> None:
    """What agent selection holds at start is intended when it starts, which the C-PS does
    before its steering workers first reconcile (controller.app.install_cps)."""
    recorder = Recorder()
    recorder.fail = True
    h = _admitted(schema, recorder)  # held, not handed
    recorder.fail = False
    h.service.start()
    try:
        assert recorder.trace() == [("instruct", "cm-s-84-1")]  # at once, not at a sweep
    finally:
        h.service.close()


# ---------------------------------------------------------------- long session ids

LONG = "tenant-1/agent-run-2026-11-30/" + "x" * 220 + "-tail"


def _rules_fit(schema: Schema, recorder: Recorder) -> None:
    """Every rule handed is a valid ietf-cats-steering rule."""
    for _, instruction in recorder.calls:
        schema.validate(_rule_document(steering_rule(instruction, "CF-3")), InstanceKind.CONFIG)


def test_a_255_character_session_id_is_committed_handed_and_rendered(schema: Schema) -> None:
    assert len(LONG) == 255
    recorder = Recorder()
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68, steering=recorder)
    reply = h.call("submit-descriptor", {"descriptor": drafts.descriptor_68(LONG, 29)})
    first = reply["commitment"]["commitment-id"]
    assert len(first) <= 128
    assert first.startswith("cm-tenant-1/agent-run-2026-11-30/")
    assert [(w, i.session_id) for w, i in recorder.calls] == [("instruct", LONG)]
    (_, handed) = recorder.calls[0]
    assert handed.commitment_id == first
    rule = steering_rule(handed, "CF-3")
    assert rule["match"]["session-id"] == LONG  # the rule matches the whole session id
    assert len(rule["decision-id"]) <= 128
    session = h.session(LONG)  # the state validates with libyang
    assert session["current-commitment"] == first
    (commitment,) = session["commitment"]
    assert commitment["steering-instruction-id"] == handed.instruction_id
    # A move: the handoff and its reservation carry derived ids too.
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": LONG, "turn-id": 1, "step-id": 30})
    (handoff,) = h.session(LONG)["handoff"]
    (reserve,) = [m for name, _, m in h.csma.calls if name == "reserve-state"]
    assert (
        h.checked_input("reserve-state", reserve)["reservation-id"]
        == (handoff["reservation"]["reservation-id"])
    )
    notice = {
        "handoff-id": handoff["handoff-id"],
        "reporter": "target",
        "status": "completed",
        "usable-key": ["ctx"],
        "at": drafts.iso(h.clock.now),
    }
    h.call("state-transfer-notice", notice)
    h.call("state-transfer-notice", notice)  # repeated: the same handoff, no second commitment
    h.call("step-boundary", {"session-id": LONG, "turn-id": 1, "step-id": 30})
    session = h.session(LONG)
    second = session["current-commitment"]
    assert [c["commitment-id"] for c in session["commitment"]] == [first, second]
    assert session["handoff"][0]["commitment-id"] == second
    assert h.csma.count("reserve-state") == 1
    assert recorder.trace()[-2:] == [("instruct", second), ("withdraw", first)]
    assert recorder.held()[second].supersedes == first
    _rules_fit(schema, recorder)


# ---------------------------------------------------------------- expired commitments


def test_an_expired_commitment_shows_as_expired_until_it_is_renewed(schema: Schema) -> None:
    recorder = Recorder()
    h = _admitted(schema, recorder)
    h.clock.now += 599
    h.service.sweep()
    (commitment,) = h.session("s-84")["commitment"]
    assert commitment["state"] == "active"
    h.clock.now += 1
    h.service.sweep()
    assert recorder.trace()[-1] == ("withdraw", "cm-s-84-1")
    session = h.session("s-84")
    (commitment,) = session["commitment"]
    assert commitment["state"] == "expired"  # its rule withdrawn: no longer active
    assert session["current-commitment"] == "cm-s-84-1"
    specs = drafts.example_84(0.5)
    h.call("advertise-capability", drafts.capability(specs, h.clock.now, sequence=2))
    h.call("advertise-forwarding-view", drafts.forwarding(specs, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 2})
    (commitment,) = h.session("s-84")["commitment"]
    assert commitment["state"] == "active"  # renewed, its rule instructed again
    assert recorder.trace()[-1] == ("instruct", "cm-s-84-1")


# ---------------------------------------------------------------- incomplete hand-offs


def test_a_rule_not_placed_is_handed_again_at_each_sweep_until_it_is(schema: Schema) -> None:
    recorder = Recorder()
    recorder.missing = "no egress forwarder known for C"
    h = _admitted(schema, recorder)
    assert recorder.trace() == [("instruct", "cm-s-84-1")]
    h.service.sweep()
    h.service.sweep()
    assert recorder.trace() == [("instruct", "cm-s-84-1")] * 3  # once a sweep
    recorder.missing = None
    h.service.sweep()  # placed now
    h.service.sweep()
    h.call("step-boundary", {"session-id": "s-84", "turn-id": 1, "step-id": 1})
    assert recorder.trace() == [("instruct", "cm-s-84-1")] * 4


def test_a_pending_instruction_is_handed_again_and_withdrawn_like_any_other() -> None:
    ledger = Instructed()
    session = _session()
    first = instructions(session, 1000.0)
    ledger.record(session.session_id, first, pending={CommitmentId("cm-s-1-1")})
    assert ledger.differences(session.session_id, first).instruct == tuple(first.values())
    assert ledger.differences(session.session_id, {}).withdraw == tuple(first.values())
    ledger.record(session.session_id, first)  # placed now
    assert not ledger.differences(session.session_id, first)
