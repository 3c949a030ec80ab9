"""The intended steering state of every forwarder: what the C-PS wants each one to hold.

Service entries come from the re-evaluation of the joint selection per (CS-ID, ingress)
(service-metrics-op 6.2.3 step 7, 6.2.5 re-routing); rules come from the agent sessions'
commitments (agent draft 9.1 MSG-10) through :meth:`IntendedState.intend_rule` and
:meth:`IntendedState.withdraw_rule`. Each forwarder's state carries a generation that grows
with every change, so a push can tell when a forwarder has acknowledged a given state.
Thread-safe; values only (entries are frozen).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from controller.southbound.steering import Entry, EntryKey, rule_entry
from controller.types import CsId, Json

ForwarderName = str


class IntendedState:
    """Entries by forwarder, with a generation per forwarder."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._entries: dict[ForwarderName, dict[EntryKey, Entry]] = {}
        self._generations: dict[ForwarderName, int] = {}

    def _changed(self, forwarder: ForwarderName) -> None:
        self._generations[forwarder] = self._generations.get(forwarder, 0) + 1

    def set_services(self, forwarder: ForwarderName, services: Mapping[CsId, Entry | None]) -> bool:
        """Set (an Entry) or clear (None) the service entry of each CS-ID; whether any changed."""
        with self._guard:
            entries = self._entries.setdefault(forwarder, {})
            changed = False
            for cs_id, entry in services.items():
                key: EntryKey = ("service", cs_id)
                if entry is None:
                    changed = entries.pop(key, None) is not None or changed
                elif entries.get(key) != entry:
                    entries[key] = entry
                    changed = True
            if changed:
                self._changed(forwarder)
            return changed

    def retain_services(self, forwarder: ForwarderName, cs_ids: Iterable[CsId]) -> bool:
        """Drop the service entries of CS-IDs the forwarder no longer handles."""
        kept = set(cs_ids)
        with self._guard:
            entries = self._entries.get(forwarder, {})
            gone = [k for k in entries if k[0] == "service" and k[1] not in kept]
            for key in gone:
                del entries[key]
            if gone:
                self._changed(forwarder)
            return bool(gone)

    def intend_rule(self, forwarder: ForwarderName, rule: Json) -> bool:
        """Install (or revise) the rule of a commitment at a forwarder (MSG-10); ``rule`` is
        the ``steering/rule`` entry as RFC 7951 members. Whether the intended state changed
        (an identical instruction does not change it)."""
        entry = rule_entry(rule)
        with self._guard:
            entries = self._entries.setdefault(forwarder, {})
            if entries.get(entry.key) == entry:
                return False
            entries[entry.key] = entry
            self._changed(forwarder)
            return True

    def withdraw_rule(self, forwarder: ForwarderName, commitment_id: str) -> bool:
        """Remove the rule of a commitment from a forwarder; whether it was intended."""
        with self._guard:
            entries = self._entries.get(forwarder, {})
            if entries.pop(("rule", commitment_id), None) is None:
                return False
            self._changed(forwarder)
            return True

    def snapshot(self, forwarder: ForwarderName) -> tuple[int, dict[EntryKey, Entry]]:
        """The generation and a copy of the forwarder's intended entries."""
        with self._guard:
            return self._generations.get(forwarder, 0), dict(self._entries.get(forwarder, {}))

    def entry(self, forwarder: ForwarderName, key: EntryKey) -> tuple[int, Entry | None]:
        """The generation and one intended entry of the forwarder (without a copy of all)."""
        with self._guard:
            generation = self._generations.get(forwarder, 0)
            return generation, self._entries.get(forwarder, {}).get(key)

    def generation(self, forwarder: ForwarderName) -> int:
        """The forwarder's current generation (0: never changed)."""
        with self._guard:
            return self._generations.get(forwarder, 0)

    def counts(self, forwarder: ForwarderName) -> tuple[int, int]:
        """Intended (service entries, rules) of the forwarder."""
        with self._guard:
            entries = self._entries.get(forwarder, {})
            services = sum(1 for kind, _ in entries if kind == "service")
            return services, len(entries) - services
