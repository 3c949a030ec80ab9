"""The plots page's charts and its live part: a :class:`~.series.Recorder` drawn as SVG."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from controller.console.cps import Event
from controller.console.pages.charts import line_chart
from controller.console.pages.series import PLOT_EVENTS, Recorder
from controller.console.pages.tables import Json

#: The stream's XPath filter: only the notifications the plots are made of.
PLOT_FILTER = " | ".join(f"/{name}" for name in PLOT_EVENTS)
TITLES = {
    "chart-tst": "Total service time per candidate",
    "chart-gas": "GAS per site",
    "chart-decisions": "Decisions per second by result",
    "chart-push": "Steering push latency per forwarder",
}


@dataclass(frozen=True, slots=True)
class Choice:
    """Which service and ingress the TST plot is of, and the window (s)."""

    cs_id: str
    ingress: str
    window: float


def charts(recorder: Recorder, choice: Choice, end: float) -> dict[str, Markup]:
    """The four charts of the page, by element id."""
    begin = end - choice.window
    return {
        "chart-tst": line_chart(
            recorder.tst(choice.cs_id, choice.ingress),
            begin,
            end,
            title=f"TST per candidate of {choice.cs_id} from {choice.ingress}",
            unit="ms",
        ),
        "chart-gas": line_chart(
            recorder.gas_per_site(), begin, end, title="GAS per site", unit="slots"
        ),
        "chart-decisions": line_chart(
            recorder.decisions_per_second(end),
            begin,
            end,
            title="Decisions per second by result",
            unit="1/s",
        ),
        "chart-push": line_chart(
            recorder.push_latency(),
            begin,
            end,
            title="Steering push latency per forwarder",
            unit="ms",
        ),
    }


class LivePlots:
    """The live part of the plots page: events folded in, charts re-drawn
    (:class:`controller.console.live.LivePage`)."""

    def __init__(
        self,
        recorder: Recorder,
        choice: Choice,
        tables: Callable[[], tuple[Json, Json]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._recorder = recorder
        self._choice = choice
        self._tables = tables
        self._clock = clock
        self._settled = False

    def fold(self, event: Event) -> bool:
        """A replay's end settles the tables' values in; a plot event changes a chart."""
        if event.replay_complete:
            self._recorder.settle(*self._tables())
            self._settled = True
            return True
        return self._recorder.add(event) and self._settled

    def render(self) -> dict[str, Any]:
        """The charts now."""
        drawn = charts(self._recorder, self._choice, self._clock())
        return {"charts": {k: str(v) for k, v in drawn.items()}}
