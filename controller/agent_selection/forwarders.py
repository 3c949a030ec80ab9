"""The :class:`Steering` seam over the southbound (agent draft 8.1 P8, 9.1 MSG-10).

A commitment's ``steering/rule`` is intended at every ingress forwarder of the inventory that
handles the session's CS-ID, with the egress its instance is attached to, and withdrawn from
every forwarder it was intended at. The southbound's SteeringService writes the differences
with edit-config.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from controller.agent_selection.steering import Placement, SteeringInstruction, steering_rule
from controller.southbound.forwarders import SteeringService
from controller.southbound.inventory import Inventory
from controller.types import CsciId, CsId

LOG = logging.getLogger("catsctl.serve")


class ForwarderSteering:
    """The agent-selection :class:`Steering` seam over the southbound (agent draft 8.1 P8, 9.1
    MSG-10): a commitment's ``steering/rule`` is intended at every ingress forwarder of the
    inventory that handles the session's CS-ID, with the egress its instance is attached to,
    and withdrawn from every forwarder it was intended at. The SteeringService's intended state
    is keyed by commitment id, so instructing twice is one rule; its workers write the
    differences with edit-config. The forwarders and the egress are looked up at each
    instruction: one with no egress known or no forwarder concerned yet is reported pending,
    and agent selection hands it again at its next sweep until it is placed."""

    def __init__(
        self,
        steering: SteeringService,
        inventory: Callable[[], Inventory],
        egress: Callable[[CsId, CsciId], str | None],
    ) -> None:
        self._steering = steering
        self._inventory = inventory
        self._egress = egress
        self._guard = threading.Lock()
        self._placed: dict[str, frozenset[str]] = {}  # commitment id: forwarder names
        self._pending: dict[str, str] = {}  # commitment id: what was missing, logged once

    def concerned(self, cs_id: CsId) -> frozenset[str]:
        """The ingress forwarders of the inventory that handle ``cs_id``."""
        forwarders = self._inventory().forwarders
        return frozenset(f.name for f in forwarders if f.ingress and cs_id in f.cs_ids)

    def instruct(self, instruction: SteeringInstruction) -> Placement:
        """Intend the rule at the forwarders concerned (and no longer at any other); pending
        while no egress is known for the instance (a normal rule names it; a rule placed
        before stays as it was) or no forwarder handles the service."""
        commitment_id = instruction.commitment_id
        egress = self._egress(instruction.cs_id, instruction.csci_id)
        if egress is None:
            with self._guard:
                placed = self._placed.get(commitment_id, frozenset())
            missing = f"no egress forwarder known for {instruction.csci_id}"
            return self._pending_at(commitment_id, placed, missing)
        names = self.concerned(instruction.cs_id)
        rule = steering_rule(instruction, egress)
        with self._guard:
            before = self._placed.get(commitment_id, frozenset())
            self._placed[commitment_id] = names
        for name in sorted(names):
            self._steering.intend_rule(name, rule)
        for name in sorted(before - names):
            self._steering.withdraw_rule(name, commitment_id)
        if not names:
            return self._pending_at(
                commitment_id, names, f"no forwarder handles {instruction.cs_id}"
            )
        with self._guard:
            missing_before = self._pending.pop(commitment_id, None)
        if missing_before is not None:
            LOG.info("commitment %s: steering rule placed at %s", commitment_id, sorted(names))
        return Placement(names)

    def _pending_at(self, commitment_id: str, placed: frozenset[str], missing: str) -> Placement:
        """A pending placement, logged when what is missing changes (not at each retry)."""
        with self._guard:
            changed = self._pending.get(commitment_id) != missing
            self._pending[commitment_id] = missing
        if changed:
            LOG.warning("commitment %s: %s, steering rule pending", commitment_id, missing)
        return Placement(placed, missing)

    def withdraw(self, instruction: SteeringInstruction) -> None:
        """Withdraw the rule from every forwarder it was intended at."""
        with self._guard:
            names = self._placed.pop(instruction.commitment_id, frozenset())
            self._pending.pop(instruction.commitment_id, None)
        for name in sorted(names):
            self._steering.withdraw_rule(name, instruction.commitment_id)
