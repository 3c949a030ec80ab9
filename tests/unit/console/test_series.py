"""The plots' time series folded from tables and notifications, and their SVG."""

from __future__ import annotations

import re
from decimal import Decimal

from controller.console.cps import Event, parse_event
from controller.console.pages.charts import line_chart
from controller.console.pages.series import Recorder, Series, epoch

SM = "ietf-cats-service-metrics"
T0 = epoch("2026-12-02T03:00:00Z")
CST = {
    f"{SM}:computing-service-table": {
        "entry": [
            {
                "cs-id": "ARS",
                "csci-id": "sci-1",
                "egress": "cf2",
                "site": "SS2",
                "computing-time": "5",
                "gas": 400,
            },
            {
                "cs-id": "ARS",
                "csci-id": "sci-3",
                "egress": "cf3",
                "site": "SS3",
                "computing-time": "6",
                "gas": 600,
            },
        ]
    }
}
NST = {
    f"{SM}:network-service-table": {
        "entry": [
            {"ingress": "i", "egress": "cf2", "network-delay": "8"},
            {"ingress": "i", "egress": "cf3", "network-delay": "20"},
        ]
    }
}


def _at(seconds: int, name: str, **body: object) -> Event:
    return Event(f"2026-12-02T03:{seconds // 60:02d}:{seconds % 60:02d}Z", f"{SM}:{name}", body)


def test_tst_is_ct_plus_the_delay_to_the_candidates_egress() -> None:
    recorder = Recorder(T0)
    recorder.add(
        _at(
            30,
            "nst-entry-changed",
            ingress="i",
            egress="cf3",
            change="updated",
            **{"network-delay": "20", "previous-network-delay": "6"},
        )
    )
    recorder.settle(CST, NST)
    series = {s.name: s for s in recorder.tst("ARS", "i")}
    assert series["sci-1"].points == ((T0, Decimal(13)),)  # no event: the value all along
    assert series["sci-3"].points == ((T0, Decimal(12)), (T0 + 30, Decimal(26)))


def test_a_value_is_unknown_before_its_first_event() -> None:
    recorder = Recorder(T0)
    recorder.add(
        _at(
            10,
            "cst-entry-changed",
            **{
                "cs-id": "ARS",
                "csci-id": "sci-3",
                "change": "updated",
                "computing-time": "7",
                "gas": 500,
            },
        )
    )
    recorder.settle(CST, NST)
    sci3 = next(s for s in recorder.tst("ARS", "i") if s.name == "sci-3")
    assert sci3.points == ((T0, None), (T0 + 10, Decimal(27)))
    gas = {s.name: s.points for s in recorder.gas_per_site()}
    assert gas["SS3"] == ((T0, None), (T0 + 10, Decimal(500)))  # unknown before, too


def test_withdrawn_entries_leave_a_gap_and_no_gas() -> None:
    recorder = Recorder(T0)
    recorder.settle(CST, NST)
    recorder.add(
        _at(5, "cst-entry-changed", **{"cs-id": "ARS", "csci-id": "sci-1", "change": "withdrawn"})
    )
    sci1 = next(s for s in recorder.tst("ARS", "i") if s.name == "sci-1")
    assert sci1.last is None
    assert {s.name: s.last for s in recorder.gas_per_site()}["SS2"] == 0


def test_decisions_are_counted_per_second_and_result() -> None:
    recorder = Recorder(T0)
    for seconds, result in ((1, "selected"), (1, "selected"), (2, "default-route")):
        recorder.add(_at(seconds, "selection-decision", result=result))
    lines = {s.name: s.points for s in recorder.decisions_per_second(T0 + 3)}
    assert lines["selected"][1] == (T0 + 1, Decimal(2))
    assert lines["default-route"][2] == (T0 + 2, Decimal(1))
    assert lines["selected"][3] == (T0 + 3, Decimal(0))


def test_push_latency_comes_from_forwarder_push() -> None:
    recorder = Recorder(T0)
    data = (
        '{"ietf-restconf:notification": {"eventTime": "2026-12-02T03:00:04Z", '
        '"ietf-cats-steering:forwarder-push": {"forwarder": "ingress", "result": "written", '
        '"duration": "12.5"}}}'
    )
    assert recorder.add(parse_event(data))
    assert recorder.push_latency() == [Series("ingress", ((T0 + 4, Decimal("12.5")),))]


def test_a_line_chart_keeps_its_size_and_names_its_lines() -> None:
    one = str(line_chart([Series("a", ((T0, Decimal(5)),))], T0, T0 + 60, title="t", unit="ms"))
    many = [Series(f"<b>{n}</b>", ((T0, Decimal(n)),)) for n in range(12)]
    svg = str(line_chart(many, T0, T0 + 60, title="t", unit="ms"))
    size = re.compile(r'viewBox="([^"]+)"')
    assert size.findall(one) == size.findall(svg)  # no layout shift as lines come
    assert 'data-series="a" data-last="5"' in one
    assert "<b>" not in svg
    assert "&lt;b&gt;11&lt;/b&gt;" in svg
    empty = str(line_chart([], T0, T0 + 60, title="t", unit="ms"))
    assert "no data in this window" in empty
    assert size.findall(empty) == size.findall(one)
