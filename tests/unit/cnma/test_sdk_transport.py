"""The C-NMA's SDK transport: errors become the agent's, a lost session is opened again.

The SDK's Controller is replaced at the ``opener`` seam by one over a fake transport (the
functional tests of test_cnma run the real one against ``catsctl serve``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from agents.cnma.sdk_transport import SdkTransport
from agents.common.cps import CpsSettings
from agents.common.restconf import RefusedError, UnreachableError
from controller.errors import ErrorItem, ErrorType
from controller.sdk import Controller, SdkError
from controller.types import Json

SM = "ietf-cats-service-metrics"


@dataclass
class Wire:
    """A transport whose next calls fail or answer as scripted."""

    failures: list[SdkError] = field(default_factory=list)
    calls: list[tuple[str, Json]] = field(default_factory=list)
    closed: int = 0

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        self.calls.append((operation, members))
        if self.failures:
            raise self.failures.pop(0)
        return {"accepted-entries": len(members.get("path", []))}

    def close(self) -> None:
        self.closed += 1


def transport_with(wire: Wire) -> tuple[SdkTransport, list[int]]:
    opened: list[int] = []

    def opener(settings: CpsSettings) -> Controller:
        opened.append(1)
        return Controller(wire)  # type: ignore[arg-type]  # the seam: a partial transport

    return SdkTransport(CpsSettings(), opener), opened


def test_a_report_goes_out_as_members_and_its_output_comes_back() -> None:
    wire = Wire()
    transport, opened = transport_with(wire)
    assert transport.invoke(SM, "report-network-metrics", {"path": [{}, {}]}) == {
        "accepted-entries": 2
    }
    assert wire.calls == [("report-network-metrics", {"path": [{}, {}]})]
    assert opened == [1]


def test_a_refusal_is_refused_error_with_the_items_and_keeps_the_session() -> None:
    item = ErrorItem(ErrorType.APPLICATION, "invalid-value", "bad", "/x", "app")
    wire = Wire(failures=[SdkError(item, status=400)])
    transport, opened = transport_with(wire)
    with pytest.raises(RefusedError) as refused:
        transport.invoke(SM, "report-network-metrics", {})
    assert (refused.value.status, refused.value.items) == (400, (item,))
    transport.invoke(SM, "report-network-metrics", {})
    assert (opened, wire.closed) == ([1], 0)


def test_an_unreachable_cps_is_unreachable_error_and_the_next_report_reconnects() -> None:
    lost = SdkError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "reset"))
    wire = Wire(failures=[lost])
    transport, opened = transport_with(wire)
    with pytest.raises(UnreachableError):
        transport.invoke(SM, "report-network-metrics", {})
    assert wire.closed == 1
    transport.invoke(SM, "report-network-metrics", {})
    assert opened == [1, 1]


def test_a_cps_down_at_start_is_unreachable_not_a_crash() -> None:
    def opener(settings: CpsSettings) -> Controller:
        raise SdkError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "refused"))

    with pytest.raises(UnreachableError):
        SdkTransport(CpsSettings(), opener).invoke(SM, "report-network-metrics", {})
