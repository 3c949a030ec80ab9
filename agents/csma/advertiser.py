"""The C-SMA's advertising loop: advertise-capability (MSG-4) to the C-PS, refreshed.

At start and every ``[advertising] interval`` the loop advertises what
:func:`agents.csma.capability.advertisement` builds from the configuration and the site's
entries, as the C-SMA's own user over a transport of its own (the same C-PS login as its
reports). Periodic only: an advertisement states a freshness bound of three intervals, and
SCI reports arrive far faster than the C-PS's advertisement rate limit allows. Sequence
numbers persist in ``STATE_DIR/advertising`` (agents.common.sequence). A refusal is logged
item by item; a C-PS that does not serve agent selection (operation-not-supported) is logged
once; either way the next interval asks again. When the C-PS is unreachable (it starts after
the C-SMA, or restarts), or there is nothing to advertise yet, the loop asks again after
``RETRY_S``, doubled on each further miss up to the interval: a C-SMA started before its C-PS
is advertised within a second or two of the C-PS's start, not an interval later. Each attempt
counts in ``cats_csma_advertisements_total`` by result (sent: accepted by the C-PS; refused;
unsupported; unreachable) on the management listener's /metrics.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from prometheus_client import Counter

from agents.common.restconf import RefusedError, Transport, UnreachableError
from agents.common.sequence import SequenceStore
from agents.csma.capability import MODULE, OPERATION, Advertised, advertisement
from agents.csma.config import CsmaConfig
from agents.csma.values import Entry, EntryKey

LOG = logging.getLogger("agents.csma.advertiser")
ADVERTISEMENTS = Counter(
    "cats_csma_advertisements_total",
    "advertise-capability (MSG-4) attempts by result",
    ["result"],
)
Snapshot = Callable[[], Mapping[EntryKey, Entry]]
RETRY_S = 1.0  # the first wait after a miss (unreachable, or nothing to advertise yet)


class Advertiser:
    """The loop; ``wake`` asks for an advertisement now, ``stop`` ends it."""

    def __init__(
        self,
        config: Callable[[], CsmaConfig],
        snapshot: Snapshot,
        transport: Transport,
        store: SequenceStore,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.peer = "C-PS"  # the replica's URL in a cluster's logs
        self._config, self._snapshot = config, snapshot
        self._transport, self._store, self._clock = transport, store, clock
        self.stop, self.wake = threading.Event(), threading.Event()
        self.sent = 0
        self._unsupported_logged = False

    def run(self) -> None:
        """Advertise until ``stop`` is set."""
        retry = RETRY_S
        try:
            while not self.stop.is_set():
                interval = self._config().advertising.interval
                if interval <= 0:
                    self.stop.wait(1.0)
                    continue
                if self.tick():
                    delay, retry = interval, RETRY_S
                else:  # missed: sooner than the interval, backing off to it
                    delay, retry = min(retry, interval), min(retry * 2, interval)
                self.wake.wait(delay)
                self.wake.clear()
        finally:
            self._transport.close()

    def tick(self) -> bool:
        """Send one advertisement of what the C-SMA knows now (nothing when it knows nothing).

        Returns whether the C-PS answered it (accepted, refused or unsupported): False when
        there was nothing to advertise or the C-PS could not be reached, which the loop asks
        again about sooner than the interval."""
        config = self._config()
        instances = [Advertised(i.csci_id, i.cs_id, i.capability) for i in config.instances]
        bound_ms = int(config.advertising.interval * 3 * 1000)
        entries = self._snapshot()
        probe = advertisement(config.name, instances, entries, self._clock(), bound_ms)
        if probe is None:
            return False
        members = {**probe, "sequence-number": str(self._store.next())}
        try:
            self._transport.invoke(MODULE, OPERATION, members)
        except UnreachableError as exc:
            ADVERTISEMENTS.labels("unreachable").inc()
            LOG.warning("advertise-capability: %s unreachable: %s", self.peer, exc)
            return False
        except RefusedError as exc:
            if exc.items[0].tag == "operation-not-supported":
                ADVERTISEMENTS.labels("unsupported").inc()
                if not self._unsupported_logged:
                    LOG.warning(
                        "%s does not serve advertise-capability; asked again later", self.peer
                    )
                    self._unsupported_logged = True
                return True
            ADVERTISEMENTS.labels("refused").inc()
            for item in exc.items:
                LOG.error("advertise-capability refused by %s: %s", self.peer, item)
            return True
        ADVERTISEMENTS.labels("sent").inc()
        self.sent += 1
        LOG.info(
            "advertise-capability %s to %s: %d instances",
            members["sequence-number"],
            self.peer,
            len(members["candidate"]),
        )
        return True
