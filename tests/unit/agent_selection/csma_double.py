"""An in-memory C-SMA behind the StateAgents seam: a state table, reservations, releases.

It answers query-state from its table, reserve-state idempotently by reservation id (a
repeated request gets the same reply and never a second reservation), and release-state by
dropping what it names. ``refuse`` and ``unreachable`` name candidates whose reservations are
refused or cannot be sent (the C-SMA is down when reserving); ``calls`` logs every call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from controller.errors import ErrorItem, ErrorType
from controller.southbound import PeerUnreachableError, Target
from controller.types import Json

AS = "ietf-cats-agent-selection"


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class CsmaDouble:
    """The C-SMA side of MSG-5/6, MSG-11/12 and MSG-16, in memory."""

    table: dict[tuple[str, str, str], Json] = field(default_factory=dict)
    refuse: set[str] = field(default_factory=set)
    unreachable: set[str] = field(default_factory=set)
    validity: float = 60.0
    clock: Callable[[], float] = time.time
    reservations: dict[str, tuple[Json, Json]] = field(default_factory=dict)
    calls: list[tuple[str, str, Json]] = field(default_factory=list)

    def hold(self, csci_id: str, tenant: str, key: str, **element: Any) -> None:
        """Put a present element in the table (accelerator memory unless told)."""
        entry: Json = {
            "reuse-key": key,
            "presence": "present",
            "residency": f"{AS}:accelerator-memory",
            "collected-at": _iso(self.clock()),
            "freshness-bound": "600000",
            "source": "csma-double",
            "confidence": "asserted",
        }
        entry.update(element)
        self.table[(csci_id, tenant, key)] = entry

    def _reach(self, target: Target, csci_ids: list[str]) -> None:
        if any(c in self.unreachable for c in csci_ids):
            item = ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"{target.name} down")
            raise PeerUnreachableError(item)

    def query_state(self, target: Target, members: Json) -> Json:
        """MSG-5 -> MSG-6."""
        self.calls.append(("query-state", target.name, members))
        ids = [str(c) for c in members.get("csci-id", ())]
        tenant = str(members["tenant"])
        candidates = []
        for csci_id in ids:
            elements = []
            for key in members.get("reuse-key", ()):
                found = self.table.get((csci_id, tenant, str(key)))
                elements.append(found or {"reuse-key": key, "presence": "absent"})
            entry: Json = {"csci-id": csci_id}
            if elements:
                entry["element"] = elements
            candidates.append(entry)
        found_output: Json = {"tenant": tenant}
        if candidates:
            found_output["candidate"] = candidates
        return found_output

    def reserve_state(self, target: Target, members: Json) -> Json:
        """MSG-11 -> MSG-12, idempotent by reservation id."""
        self.calls.append(("reserve-state", target.name, members))
        csci_id = str(members["csci-id"])
        self._reach(target, [csci_id])
        reservation_id = str(members["reservation-id"])
        kept = self.reservations.get(reservation_id)
        if kept is not None:
            return kept[1]
        if csci_id in self.refuse:
            reply: Json = {
                "reservation-id": reservation_id,
                "status": "refused",
                "refusal-reason": f"{AS}:insufficient-storage",
                "detail": "no room",
            }
            return reply
        now = self.clock()
        reply = {
            "reservation-id": reservation_id,
            "status": "accepted",
            "valid-from": _iso(now),
            "valid-until": _iso(now + self.validity),
        }
        self.reservations[reservation_id] = (members, reply)
        return reply

    def release_state(self, target: Target, members: Json) -> Json:
        """MSG-16: drop the reservation named, or every reservation of the session."""
        self.calls.append(("release-state", target.name, members))
        named = members.get("reservation-id")
        for reservation_id, (asked, _) in list(self.reservations.items()):
            same_session = asked["session-id"] == members["session-id"]
            if reservation_id == named or (named is None and same_session):
                del self.reservations[reservation_id]
        return {}

    def count(self, operation: str) -> int:
        """How many calls of ``operation`` were made."""
        return sum(1 for name, _, _ in self.calls if name == operation)

    def close(self) -> None:
        """Nothing to close in memory."""
