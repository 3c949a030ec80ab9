"""The C-SMA's values: identifiers, health and the metrics of one SCI as the cache keeps them.

Frozen dataclasses, no behaviour beyond small derivations (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from controller.types import CsciId, CsId

#: The key of a CST entry: (CS-ID, CSCI-ID) (service-metrics-op 6.2.1).
EntryKey = tuple[CsId, CsciId]

MS = Decimal("0.001")


class Health(StrEnum):
    """cats-t:health-status (sci-implementation 5.2)."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNHEALTHY = "unhealthy"
    UNKNOWN = "unknown"


class Confidence(StrEnum):
    """cats-t:confidence of an advertised entry (agent-selection-mapping 7.4).

    ``asserted``: the SCI measured the Computing Time; ``derived``: an aggregate computed
    from measured members; ``estimated``: no member measured it, the value is the configured
    estimate (service-metrics-op 5.3.2: "initialize this metric based on service reference
    information").
    """

    ASSERTED = "asserted"
    DERIVED = "derived"
    ESTIMATED = "estimated"


#: Better health first: the health of an aggregate is the best of its members'.
HEALTH_ORDER = (Health.HEALTHY, Health.DEGRADED, Health.UNHEALTHY, Health.UNKNOWN)


def sci_health(healthy: int, degraded: int, unhealthy: int, unknown: int) -> Health:
    """An SCI's health from its Health Summary (Table 1): the best state of its instances."""
    for health, count in zip(HEALTH_ORDER, (healthy, degraded, unhealthy, unknown), strict=True):
        if count:
            return health
    return Health.UNKNOWN


@dataclass(frozen=True, slots=True)
class SciMetrics:
    """What one accepted SCI report says (sci-implementation Table 1), as the C-SMA uses it."""

    cs_id: CsId
    csci_id: CsciId
    gas: int
    computing_time: Decimal | None  # ms; None when the SCI had no estimate
    health: Health
    collected_at: str  # yang:date-and-time of the report's timestamp
    price: int | None = None  # optional-metrics cost
    reputation: int | None = None
    security_level: int | None = None  # optional-metrics security-label

    @property
    def key(self) -> EntryKey:
        """(CS-ID, CSCI-ID)."""
        return (self.cs_id, self.csci_id)


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of report-service-metrics as the C-SMA advertises it (6.2.1, 8)."""

    cs_id: CsId
    csci_id: CsciId
    gas: int
    computing_time: Decimal  # ms
    health: Health
    collected_at: str
    price: int | None = None
    reputation: int | None = None
    security_level: int | None = None
    aggregated: bool = False
    source: str | None = None  # the SCI (or the site) that observed the values
    confidence: Confidence = Confidence.ASSERTED  # of the Computing Time

    @property
    def key(self) -> EntryKey:
        """(CS-ID, CSCI-ID)."""
        return (self.cs_id, self.csci_id)


@dataclass(frozen=True, slots=True)
class Estimates:
    """Configured Computing Time estimates in ms, for entries no SCI has measured yet.

    service-metrics-op 5.3.2: the site "can initialize this metric based on service reference
    information and then measure or estimate it". ``per_service`` wins over ``default``; with
    neither, an unmeasured entry has no Computing Time to report (:mod:`agents.csma.aggregate`).
    """

    default: Decimal | None = None
    per_service: tuple[tuple[CsId, Decimal], ...] = ()

    def computing_time(self, cs_id: CsId) -> Decimal | None:
        """The estimate for one service, or None when none is configured."""
        for service, value in self.per_service:
            if service == cs_id:
                return value
        return self.default
