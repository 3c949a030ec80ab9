"""Values shared by the C-SMA unit tests."""

from __future__ import annotations

from decimal import Decimal

from agents.csma.values import Entry, EntryKey, Health, SciMetrics
from controller.types import CsciId, CsId

AT = "2026-11-30T12:00:00.000Z"


def metrics(
    csci: str, gas: int, ct: str | None = "20", health: Health = Health.HEALTHY, cs: str = "ARS"
) -> SciMetrics:
    """One SCI's metrics."""
    return SciMetrics(CsId(cs), CsciId(csci), gas, None if ct is None else Decimal(ct), health, AT)


def entry(csci: str, gas: int, ct: str = "20", health: Health = Health.HEALTHY) -> Entry:
    """One advertised entry."""
    return Entry(CsId("ARS"), CsciId(csci), gas, Decimal(ct), health, AT)


def key(csci: str, cs: str = "ARS") -> EntryKey:
    """(CS-ID, CSCI-ID)."""
    return (CsId(cs), CsciId(csci))
