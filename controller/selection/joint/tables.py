"""The Computing Service Table and the Network Service Table (service-metrics-op 6.2.1, 6.2.2).

Entries are frozen values; a report replaces an entry. The tables are plain indexed maps: the
CST by CS-ID for the Step 1 lookup, the NST by (Ingress, Egress) for the Step 3 lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from controller.selection.joint.vocabulary import Health, Metric
from controller.selection.units import Micros, Timestamp
from controller.types import CsciId, CsId, ForwarderId


@dataclass(frozen=True, slots=True)
class CstEntry:
    """One (CS-ID, CSCI-ID) entry of the CST (6.2.1), with its attachment attributes.

    ``egress`` is the attachment in force (configured, else reported); ``region``,
    ``provider`` and ``under_maintenance`` come from the CSCI-ID attachment (6.2.4 overrides).
    ``estimated`` names the values the report gave as estimates rather than measurements
    (``confidence estimated``: the Computing Time); every candidate built on the entry says so.
    """

    cs_id: CsId
    csci_id: CsciId
    gas: int
    computing_time: Micros
    last_updated: Timestamp
    expiry: Timestamp
    price: int | None = None
    reputation: int | None = None
    security_level: int | None = None
    security_level_validated: bool = False
    health: Health = Health.HEALTHY
    egress: ForwarderId | None = None
    site: str | None = None
    region: str | None = None
    provider: str | None = None
    under_maintenance: bool = False
    estimated: tuple[Metric, ...] = ()

    def expired(self, now: Timestamp) -> bool:
        """Soft state: past its Expiry Time the entry is unreachable, GAS = 0 (6.2.1, 8)."""
        return now >= self.expiry


@dataclass(frozen=True, slots=True)
class PathAttributes:
    """TE attributes of an NST path (6.2.2): affinity bits, color, metrics."""

    admin_group: int | None = None
    color: int | None = None
    te_metric: int | None = None
    igp_metric: int | None = None


@dataclass(frozen=True, slots=True)
class NstEntry:
    """One (Ingress, Egress) entry of the NST (6.2.2); delays on the common time base."""

    ingress: ForwarderId
    egress: ForwarderId
    network_delay: Micros
    last_updated: Timestamp
    jitter: Micros | None = None
    bandwidth: int | None = None
    loss_rate: int | None = None
    attributes: PathAttributes = PathAttributes()


class ComputingServiceTable:
    """The CST keyed by (CS-ID, CSCI-ID) and indexed by CS-ID (6.2.1)."""

    def __init__(self) -> None:
        self._by_cs: dict[CsId, dict[CsciId, CstEntry]] = {}

    def put(self, entry: CstEntry) -> CstEntry | None:
        """Insert or replace an entry; returns the entry it replaced."""
        entries = self._by_cs.setdefault(entry.cs_id, {})
        old = entries.get(entry.csci_id)
        entries[entry.csci_id] = entry
        return old

    def remove(self, cs_id: CsId, csci_id: CsciId) -> CstEntry | None:
        """Withdraw an entry; returns it (None if absent)."""
        entries = self._by_cs.get(cs_id)
        if entries is None:
            return None
        old = entries.pop(csci_id, None)
        if not entries:
            del self._by_cs[cs_id]
        return old

    def get(self, cs_id: CsId, csci_id: CsciId) -> CstEntry | None:
        """The entry of (CS-ID, CSCI-ID), if any."""
        return self._by_cs.get(cs_id, {}).get(csci_id)

    def service(self, cs_id: CsId) -> dict[CsciId, CstEntry]:
        """All entries of a CS-ID (Step 1 lookup); do not mutate the returned map."""
        return self._by_cs.get(cs_id, {})

    def services(self) -> Iterator[CsId]:
        """The CS-IDs with at least one entry."""
        return iter(self._by_cs)

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._by_cs.values())


class NetworkServiceTable:
    """The NST keyed by (Ingress, Egress) (6.2.2), indexed by Ingress and by Egress."""

    def __init__(self) -> None:
        self._paths: dict[tuple[ForwarderId, ForwarderId], NstEntry] = {}
        self._by_ingress: dict[ForwarderId, dict[ForwarderId, NstEntry]] = {}
        self._by_egress: dict[ForwarderId, dict[ForwarderId, NstEntry]] = {}

    def put(self, entry: NstEntry) -> NstEntry | None:
        """Insert or replace the entry of (Ingress, Egress); returns the one it replaced."""
        key = (entry.ingress, entry.egress)
        old = self._paths.get(key)
        self._paths[key] = entry
        self._by_ingress.setdefault(entry.ingress, {})[entry.egress] = entry
        self._by_egress.setdefault(entry.egress, {})[entry.ingress] = entry
        return old

    def remove(self, ingress: ForwarderId, egress: ForwarderId) -> NstEntry | None:
        """Withdraw the entry of (Ingress, Egress); returns it (None if absent)."""
        old = self._paths.pop((ingress, egress), None)
        if old is not None:
            for index, outer, inner in (
                (self._by_ingress, ingress, egress),
                (self._by_egress, egress, ingress),
            ):
                paths = index[outer]
                del paths[inner]
                if not paths:
                    del index[outer]
        return old

    def get(self, ingress: ForwarderId, egress: ForwarderId) -> NstEntry | None:
        """Path_i = NST[Ingress, Egress_i] (6.2.3 Step 3)."""
        return self._paths.get((ingress, egress))

    def from_ingress(self, ingress: ForwarderId) -> dict[ForwarderId, NstEntry]:
        """Every path from one Ingress, by Egress; do not mutate the returned map."""
        return self._by_ingress.get(ingress, {})

    def to_egress(self, egress: ForwarderId) -> dict[ForwarderId, NstEntry]:
        """Every path to one Egress, by Ingress; do not mutate the returned map."""
        return self._by_egress.get(egress, {})

    def __len__(self) -> int:
        return len(self._paths)
