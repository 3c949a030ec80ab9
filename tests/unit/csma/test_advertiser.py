"""agents.csma.advertiser: one advertise-capability per tick, counted by result.

The C-PS is faked at the ``Transport`` seam (agents.common.restconf): what the loop sends, and
how each answer of the C-PS counts in ``cats_csma_advertisements_total``.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import REGISTRY

from agents.common.restconf import RefusedError, UnreachableError
from agents.common.sequence import SequenceStore
from agents.csma.advertiser import Advertiser
from agents.csma.config import load_config
from controller.errors import ErrorItem, ErrorType
from controller.types import Json
from tests.conftest import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "csma.toml"


class Cps:
    """The C-PS at the transport seam: records what it is sent, answers ``answer``."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Json]] = []
        self.answer: Exception | None = None

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        self.sent.append((module, operation, members))
        if self.answer is not None:
            raise self.answer
        return {}

    def close(self) -> None:
        """Nothing to release."""


def _count(result: str) -> float:
    found = REGISTRY.get_sample_value("cats_csma_advertisements_total", {"result": result})
    return found or 0.0


def test_each_tick_advertises_the_configured_capability_and_counts_the_answer(
    tmp_path: Path,
) -> None:
    config = load_config(EXAMPLE)
    cps = Cps()
    advertiser = Advertiser(lambda: config, dict, cps, SequenceStore(tmp_path))
    before = {r: _count(r) for r in ("sent", "refused", "unreachable")}
    advertiser.tick()
    ((module, operation, members),) = cps.sent
    assert (module, operation) == ("ietf-cats-agent-selection", "advertise-capability")
    assert members["c-sma"] == config.name
    (candidate,) = members["candidate"]
    queue = candidate["computing"]["waiting-work"]["queue-delay"]
    assert (queue["p95"], queue["window"]) == ("100.000", "60000")  # stated in the example
    cps.answer = RefusedError(400, ErrorItem(ErrorType.APPLICATION, "invalid-value", "no"))
    advertiser.tick()
    cps.answer = UnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "reset"))
    advertiser.tick()
    assert {r: _count(r) - n for r, n in before.items()} == {
        "sent": 1,
        "refused": 1,
        "unreachable": 1,
    }
    assert advertiser.sent == 1
    numbers = [int(m["sequence-number"]) for _, _, m in cps.sent]
    assert numbers == sorted(set(numbers))  # a new sequence number for every attempt


class Waits:
    """The loop's ``wake`` event: records each wait and returns at once; after ``count``
    waits it stops the loop (a seam of the test: no time passes)."""

    def __init__(self, advertiser: Advertiser, count: int) -> None:
        self.advertiser, self.count = advertiser, count
        self.waits: list[float] = []

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        if len(self.waits) >= self.count:
            self.advertiser.stop.set()
        return False

    def clear(self) -> None:
        """Nothing to clear."""


def test_an_unreachable_cps_is_asked_again_sooner_than_the_interval(tmp_path: Path) -> None:
    """A C-SMA started before its C-PS: each miss waits 1 s, doubled up to the interval,
    and once the C-PS answers the loop waits the interval again."""
    config = load_config(EXAMPLE)
    interval = config.advertising.interval
    assert interval >= 16  # the example's interval: the back-off below stays under it
    cps = Cps()
    cps.answer = UnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "refused"))
    advertiser = Advertiser(lambda: config, dict, cps, SequenceStore(tmp_path))
    waits = Waits(advertiser, 5)
    advertiser.wake = waits  # type: ignore[assignment]
    advertiser.run()
    assert waits.waits == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert len(cps.sent) == 5  # asked every time
    cps.answer = None  # the C-PS is up: accepted, then the interval
    advertiser.stop.clear()
    waits = Waits(advertiser, 2)
    advertiser.wake = waits  # type: ignore[assignment]
    advertiser.run()
    assert waits.waits == [interval, interval]
    assert advertiser.sent == 2
