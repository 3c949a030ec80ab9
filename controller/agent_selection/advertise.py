"""MSG-4 and MSG-7 into the candidate book (P3, 9.1, 10).

An advertisement names configured candidates only (anything else is refused, naming the
entry); one older than its source's last (by sequence-number) is ignored. The parts are
parsed before the lock is taken. Each advertiser (the authenticated user, so a renamed
``c-sma`` or ``c-nma`` leaf gains nothing) has ``rate-limits/max-advertisement-rate``
advertisements per second; further ones are refused (``resource-denied``, app tag
``rate-limited``) and dropped, changing nothing, until the next second (14).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from controller.agent_selection import config as cfg
from controller.agent_selection import views
from controller.agent_selection.candidates import CandidateBook
from controller.agent_selection.errors import rate_limited, refused
from controller.agent_selection.values import date_and_time
from controller.datastore.api import Principal
from controller.types import CsciId, Json, SourceId


def _sequence(members: Json) -> int | None:
    value = members.get("sequence-number")
    return None if value is None else int(str(value))


class Advertisements:
    """The handlers of advertise-capability and advertise-forwarding-view."""

    def __init__(
        self,
        config: cfg.ConfigSource,
        book: CandidateBook,
        lock: threading.Lock,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._book = book
        self._lock = lock
        self._clock = clock
        self._windows: dict[str, tuple[int, int]] = {}  # advertiser: (second, advertisements)

    def _admit(self, principal: Principal, config: cfg.AgentConfig, operation: str) -> None:
        """Count one advertisement of ``principal`` in this second, or refuse it (under the
        lock)."""
        limit = cfg.context(config.context)[1].max_advertisement_rate
        if limit is None:
            return
        second = int(self._clock())
        start, count = self._windows.get(principal.user, (second, 0))
        if start != second:
            count = 0
        if count >= limit:
            raise rate_limited(
                operation,
                f"{principal.user} sent more than {limit} advertisements in this second "
                "(rate-limits/max-advertisement-rate); dropped, retry in the next second",
            )
        self._windows[principal.user] = (second, count + 1)

    def advertise_capability(self, principal: Principal, members: Json) -> Json:
        """advertise-capability (MSG-4): the computing view of each candidate of a site; an
        advertisement older than its source's last one is ignored."""
        config = self._config()
        source = SourceId(str(members["c-sma"]))
        entries = list(members["candidate"])
        _known(config, entries, "advertise-capability")
        parts = [
            (CsciId(str(e["csci-id"])), views.computing(e.get("computing", {}))) for e in entries
        ]
        with self._lock:
            self._admit(principal, config, "advertise-capability")
            if self._book.fresh_sequence(source, _sequence(members)):
                self._book.advertised(source, parts)
                self._book.documents.advertised(entries, date_and_time(self._clock()))
        return {}

    def advertise_forwarding_view(self, principal: Principal, members: Json) -> Json:
        """advertise-forwarding-view (MSG-7): paths, endpoint costs, transfer windows."""
        config = self._config()
        source = SourceId(str(members["c-nma"]))
        entries = list(members["candidate"])
        _known(config, entries, "advertise-forwarding-view")
        parts = [(CsciId(str(e["csci-id"])), views.forwarding(e)) for e in entries]
        with self._lock:
            self._admit(principal, config, "advertise-forwarding-view")
            if self._book.fresh_sequence(source, _sequence(members)):
                self._book.viewed(parts)
                self._book.documents.viewed(entries, date_and_time(self._clock()))
        return {}


def _known(config: cfg.AgentConfig, entries: list[Json], operation: str) -> None:
    for entry in entries:
        csci_id = str(entry["csci-id"])
        if CsciId(csci_id) not in config.candidates:
            leaf = f"candidate[csci-id='{csci_id}']/csci-id"
            message = f"{csci_id} is not a configured candidate"
            raise refused(operation, leaf, message, "unknown-candidate")
