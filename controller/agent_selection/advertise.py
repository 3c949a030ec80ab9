"""MSG-4 and MSG-7 into the candidate book (P3, 9.1, 10).

An advertisement names configured candidates only (anything else is refused, naming the
entry); one older than its source's last (by sequence-number) is ignored. The parts are
parsed before the lock is taken.
"""

from __future__ import annotations

import threading

from controller.agent_selection import config as cfg
from controller.agent_selection import views
from controller.agent_selection.candidates import CandidateBook
from controller.agent_selection.errors import refused
from controller.agent_selection.values import Json
from controller.datastore.api import Principal
from controller.selection.mapping.vocabulary import SourceId
from controller.selection.vocabulary import CsciId


def _sequence(members: Json) -> int | None:
    value = members.get("sequence-number")
    return None if value is None else int(str(value))


class Advertisements:
    """The handlers of advertise-capability and advertise-forwarding-view."""

    def __init__(self, config: cfg.ConfigSource, book: CandidateBook, lock: threading.Lock) -> None:
        self._config = config
        self._book = book
        self._lock = lock

    def advertise_capability(self, principal: Principal, members: Json) -> Json:
        """advertise-capability (MSG-4): the computing view of each candidate of a site; an
        advertisement older than its source's last one is ignored."""
        del principal
        config = self._config()
        source = SourceId(str(members["c-sma"]))
        entries = list(members["candidate"])
        _known(config, entries, "advertise-capability")
        parts = [(CsciId(str(e["csci-id"])), views.computing(e.get("computing", {})))
                 for e in entries]  # fmt: skip
        with self._lock:
            if self._book.fresh_sequence(source, _sequence(members)):
                self._book.advertised(source, parts)
        return {}

    def advertise_forwarding_view(self, principal: Principal, members: Json) -> Json:
        """advertise-forwarding-view (MSG-7): paths, endpoint costs, transfer windows."""
        del principal
        config = self._config()
        source = SourceId(str(members["c-nma"]))
        entries = list(members["candidate"])
        _known(config, entries, "advertise-forwarding-view")
        parts = [(CsciId(str(e["csci-id"])), views.forwarding(e)) for e in entries]
        with self._lock:
            if self._book.fresh_sequence(source, _sequence(members)):
                self._book.viewed(parts)
        return {}


def _known(config: cfg.AgentConfig, entries: list[Json], operation: str) -> None:
    for entry in entries:
        csci_id = str(entry["csci-id"])
        if CsciId(csci_id) not in config.candidates:
            leaf = f"candidate[csci-id='{csci_id}']/csci-id"
            message = f"{csci_id} is not a configured candidate"
            raise refused(operation, leaf, message, "unknown-candidate")
