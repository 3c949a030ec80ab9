"""controller.agent_selection.forwarders, the adapter of the steering seam: commitments
into the southbound's intended state of the forwarders concerned, and the C-PS's start order
(agent draft P8, MSG-10).

The SteeringService is the real one, not started: its intended state is what its workers
would write to the forwarders.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from controller.agent_selection import AgentSelection, steering_rule
from controller.agent_selection.forwarders import ForwarderSteering
from controller.agent_selection.steering import SteeringInstruction
from controller.app import install_cps
from controller.datastore.api import Registrations
from controller.heap import Settled
from controller.model import Schema
from controller.server import Composed, Host, ServeSettings
from controller.service_metrics import ServiceMetrics
from controller.southbound.forwarders import SteeringService
from controller.southbound.inventory import Inventory, parse_inventory
from controller.types import CommitmentId, CsciId, CsId, SessionId
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import Harness, harness

ST = "ietf-cats-steering"
AGENT = CsId("agent")
INSTRUCTION = SteeringInstruction(
    CommitmentId("cm-s-1"),
    "si-cm-s-1",
    SessionId("s"),
    AGENT,
    CsciId("C"),
    1,
    1,
    1_800_000_000.0,
    600.0,
    (),
    "s/1",
)


def _forwarder(name: str, roles: list[str], cs_ids: list[str]) -> dict[str, Any]:
    return {"name": name, "address": "127.0.0.1", "username": "cps", "role": roles, "cs-id": cs_ids}


def _inventory(*forwarders: dict[str, Any]) -> Inventory:
    listed = {"forwarder": list(forwarders)} if forwarders else {}
    return parse_inventory({f"{ST}:forwarders": listed})


class Bed:
    """A SteeringService, an inventory that can change and the egress of each instance."""

    def __init__(self) -> None:
        self.steering = SteeringService(self._no_core, lambda pairs: [])
        self.inventory = _inventory(
            _forwarder("in-a", ["ingress"], ["agent", "ARS"]),
            _forwarder("in-b", ["ingress"], ["ARS"]),  # another service
            _forwarder("out-c", ["egress"], ["agent"]),  # not an ingress
            _forwarder("both-d", ["ingress", "egress"], ["agent"]),
        )
        self.egresses = {CsciId("C"): "CF-3"}
        self.seam = ForwarderSteering(
            self.steering, lambda: self.inventory, lambda cs, csci: self.egresses.get(csci)
        )

    @staticmethod
    def _no_core() -> Any:
        raise AssertionError("the planner is not started")

    def rules(self, forwarder: str) -> dict[str, dict[str, Any]]:
        _, entries = self.steering.intended.snapshot(forwarder)
        return {key: e.members for (kind, key), e in entries.items() if kind == "rule"}

    def generation(self, forwarder: str) -> int:
        return self.steering.intended.generation(forwarder)


@pytest.fixture
def bed() -> Bed:
    return Bed()


def test_the_rule_goes_to_the_ingress_forwarders_of_the_service_only(bed: Bed) -> None:
    bed.seam.instruct(INSTRUCTION)
    expected = steering_rule(INSTRUCTION, "CF-3")
    assert bed.rules("in-a") == {"cm-s-1": expected}
    assert bed.rules("both-d") == {"cm-s-1": expected}
    assert bed.rules("in-b") == {}
    assert bed.rules("out-c") == {}


def test_a_repeated_instruction_changes_nothing_and_a_revision_replaces_the_rule(
    bed: Bed,
) -> None:
    bed.seam.instruct(INSTRUCTION)
    generation = bed.generation("in-a")
    bed.seam.instruct(INSTRUCTION)
    bed.seam.instruct(replace(INSTRUCTION))
    assert bed.generation("in-a") == generation  # nothing for a worker to write
    bed.seam.instruct(replace(INSTRUCTION, last_step=2))
    (rule,) = bed.rules("in-a").values()
    assert rule["match"]["last-step"] == 2
    assert bed.generation("in-a") == generation + 1


def test_withdraw_removes_the_rule_from_every_forwarder_it_was_given_to(bed: Bed) -> None:
    bed.seam.instruct(INSTRUCTION)
    bed.inventory = _inventory(_forwarder("in-b", ["ingress"], ["ARS"]))  # in-a left it
    bed.seam.withdraw(INSTRUCTION)
    bed.seam.withdraw(INSTRUCTION)  # repeated: nothing left to remove
    assert bed.rules("in-a") == {}
    assert bed.rules("both-d") == {}


def test_a_revision_follows_the_inventory(bed: Bed) -> None:
    bed.seam.instruct(INSTRUCTION)
    bed.inventory = _inventory(_forwarder("in-e", ["ingress"], ["agent"]))
    bed.seam.instruct(replace(INSTRUCTION, last_step=2))
    assert bed.rules("in-a") == {}
    assert list(bed.rules("in-e")) == ["cm-s-1"]


def test_no_rule_without_an_egress_for_the_instance(bed: Bed) -> None:
    bed.egresses = {}
    placement = bed.seam.instruct(INSTRUCTION)
    assert placement.pending == "no egress forwarder known for C"
    assert not placement.complete
    assert bed.rules("in-a") == {}
    assert bed.generation("in-a") == 0
    bed.egresses = {CsciId("C"): "CF-3"}  # configured later: the next instruction places it
    placement = bed.seam.instruct(INSTRUCTION)
    assert placement.complete
    assert placement.forwarders == {"in-a", "both-d"}
    assert list(bed.rules("in-a")) == ["cm-s-1"]


def test_no_forwarder_handling_the_service_is_pending(bed: Bed) -> None:
    bed.inventory = _inventory(_forwarder("in-b", ["ingress"], ["ARS"]))
    placement = bed.seam.instruct(INSTRUCTION)
    assert placement.pending == "no forwarder handles agent"
    bed.inventory = _inventory(_forwarder("in-e", ["ingress"], ["agent"]))
    assert bed.seam.instruct(INSTRUCTION).forwarders == {"in-e"}
    assert list(bed.rules("in-e")) == ["cm-s-1"]


def test_a_revision_without_an_egress_keeps_the_rule_placed_before_until_withdrawn(
    bed: Bed,
) -> None:
    bed.seam.instruct(INSTRUCTION)
    bed.egresses = {}
    placement = bed.seam.instruct(replace(INSTRUCTION, last_step=2))
    assert (placement.forwarders, placement.complete) == (frozenset({"in-a", "both-d"}), False)
    (rule,) = bed.rules("in-a").values()
    assert rule["match"]["last-step"] == 1  # the rule as placed before
    bed.seam.withdraw(INSTRUCTION)
    assert bed.rules("in-a") == {}
    assert bed.rules("both-d") == {}


# ---------------------------------------------------------------- through the handlers


def _admitted(schema: Schema, bed: Bed) -> Harness:
    h = harness(schema, drafts.example_84(0.5), steering=bed.seam)
    reply = h.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-84")})
    assert reply["selected"] == "C"
    return h


def test_an_egress_configured_later_gets_the_rule_at_the_next_sweep(
    schema: Schema, bed: Bed
) -> None:
    bed.egresses = {}
    h = _admitted(schema, bed)
    h.service.sweep()
    assert bed.rules("in-a") == {}
    bed.egresses = {CsciId("C"): "CF-3"}
    h.service.sweep()  # not at the commitment's next revision: at the next sweep
    (rule,) = bed.rules("in-a").values()
    assert (rule["commitment-id"], rule["egress-forwarder"]) == ("cm-s-84-1", "CF-3")
    assert bed.rules("both-d") == bed.rules("in-a")
    generation = bed.generation("in-a")
    h.service.sweep()  # placed: nothing more to hand
    assert bed.generation("in-a") == generation


def test_a_forwarder_added_later_gets_the_rule_at_the_next_sweep(schema: Schema, bed: Bed) -> None:
    bed.inventory = _inventory()
    h = _admitted(schema, bed)
    h.service.sweep()
    bed.inventory = _inventory(_forwarder("in-e", ["ingress"], ["agent"]))
    h.service.sweep()
    assert list(bed.rules("in-e")) == ["cm-s-84-1"]
    h.call("close-session", {"session-id": "s-84"})
    assert bed.rules("in-e") == {}


def test_a_rule_still_pending_at_close_is_never_placed(schema: Schema, bed: Bed) -> None:
    bed.egresses = {}
    h = _admitted(schema, bed)
    h.call("close-session", {"session-id": "s-84"})
    bed.egresses = {CsciId("C"): "CF-3"}
    h.service.sweep()
    assert bed.rules("in-a") == {}
    assert bed.generation("in-a") == 0


def test_install_cps_starts_agent_selection_before_the_steering_workers(tmp_path: Path) -> None:
    """A commitment agent selection holds at start is intended before the steering workers
    first reconcile (which removes from a forwarder every rule not intended)."""

    def no_core() -> Any:
        raise AssertionError("nothing is started here")

    host = Host(ServeSettings(state_dir=tmp_path), no_core, lambda document: None)
    hosted = install_cps(Registrations(), host)
    assert isinstance(hosted, Composed)
    kinds = [type(part) for part in hosted.parts]
    assert kinds == [ServiceMetrics, AgentSelection, SteeringService, Settled]  # heap last
