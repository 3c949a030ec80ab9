"""Tables of section 7 of draft-zhangb-cats-service-metrics-op-05 and small builders."""

from __future__ import annotations

from typing import Any

from controller.selection.joint import (
    CstEntry,
    Health,
    NstEntry,
    Outcome,
    Requirement,
    SelectionIndex,
    SelectionRequest,
    SelectionSettings,
    explain,
    from_ms,
    select,
)
from controller.types import CsciId, CsId, ForwarderId

NOW = 1_000.0
EXPIRY = NOW + 180.0
INGRESS = ForwarderId("10.0.0.1")
CF2 = ForwarderId("188.3.67.3")
CF3 = ForwarderId("188.3.67.4")
ARS = CsId("ARS")
SCI1 = CsciId("188.3.67.3:67")
SCI3 = CsciId("188.3.67.4:69")
SETTINGS = SelectionSettings()


def cst(csci: str, gas: int, ct_ms: int | str, price: int | None = None, **extra: Any) -> CstEntry:
    """A CST entry of ARS reported at NOW; the egress defaults to the IP of the CSCI-ID.

    ``cs`` and ``egress`` may be given by name, like every other CstEntry field.
    """
    cs = CsId(extra.pop("cs", "ARS"))
    egress = ForwarderId(extra.pop("egress", csci.split(":", maxsplit=1)[0]))
    values: dict[str, Any] = {"last_updated": NOW, "expiry": EXPIRY, "health": Health.HEALTHY}
    values.update(extra)
    return CstEntry(cs, CsciId(csci), gas, from_ms(ct_ms), price=price, egress=egress, **values)


def nst(egress: str, delay_ms: int | str, ingress: str = INGRESS, **extra: Any) -> NstEntry:
    """An NST entry reported at NOW."""
    values: dict[str, Any] = {"last_updated": NOW, **extra}
    return NstEntry(ForwarderId(ingress), ForwarderId(egress), from_ms(delay_ms), **values)


def section7(cf3_delay: int = 6, sci3: tuple[int, int] = (600, 6)) -> SelectionIndex:
    """The CST and NST of section 7.1 (with the changes of scenarios B and C as arguments)."""
    index = SelectionIndex()
    index.put_cst(cst("188.3.67.3:67", 400, 5, 10))
    index.put_cst(cst("188.3.67.3:68", 100, 15, 20, cs="VRS"))
    index.put_cst(cst("188.3.67.4:69", sci3[0], sci3[1], 5))
    index.put_cst(cst("188.3.67.4:70", 300, 12, 15, cs="LLMS"))
    index.put_nst(nst(CF2, 8))
    index.put_nst(nst(CF3, cf3_delay))
    return index


def request(
    requirement: Requirement | None = None,
    *,
    cs: CsId = ARS,
    now: float = NOW,
    **extra: Any,
) -> SelectionRequest:
    """A request at the ingress of section 7.1."""
    return SelectionRequest(cs, INGRESS, now, requirement or Requirement(), **extra)


def both(
    index: SelectionIndex, req: SelectionRequest, settings: SelectionSettings = SETTINGS
) -> tuple[Outcome, Outcome]:
    """(explain, select) for one request; asserts that they agree on the result."""
    full = explain(index.cst, index.nst, req, settings)
    fast = select(index, req, settings)
    assert (fast.result, fast.csci_id, fast.egress, fast.fallback_level) == (
        full.result,
        full.csci_id,
        full.egress,
        full.fallback_level,
    )
    assert fast.decided_by == full.decided_by
    return full, fast
