"""The reporting loop against a fake C-PS at the ``Transport`` seam (no sockets)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from agents.cnma.agent import Agent, per_replica, run_all
from agents.cnma.config import CnmaConfig
from agents.cnma.topology import Link
from agents.common.config import ConfigError
from agents.common.restconf import RefusedError, Transport, UnreachableError
from agents.common.sequence import SequenceStore
from controller.errors import ErrorItem, ErrorType
from controller.selection.units import Micros
from controller.types import Json


@dataclass
class FakeCps:
    """Records each RPC; ``fail`` holds exceptions to raise for the next calls."""

    calls: list[tuple[str, Json]] = field(default_factory=list)
    fail: list[Exception] = field(default_factory=list)
    serves_view: bool = False

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        if self.fail:
            raise self.fail.pop(0)
        self.calls.append((operation, members))
        if operation == "advertise-forwarding-view" and not self.serves_view:
            item = ErrorItem(ErrorType.PROTOCOL, "operation-not-supported", "not served")
            raise RefusedError(501, item)
        return {"accepted-entries": len(members.get("path", ()))}

    def close(self) -> None:
        pass

    def reports(self) -> list[Json]:
        return [m for op, m in self.calls if op == "report-network-metrics"]


def slower(config: CnmaConfig, egress: str, delay_us: int) -> CnmaConfig:
    links = tuple(
        replace(link, delay=Micros(delay_us))
        if link.target == egress and link.source == "P1"
        else link
        for link in config.topology.links
    )
    return replace(config, topology=replace(config.topology, links=links))


def make(tmp_path: Path, config: CnmaConfig, cps: FakeCps) -> tuple[Agent, list[CnmaConfig]]:
    loads: list[CnmaConfig] = []

    def load() -> CnmaConfig:
        if not loads:
            raise ConfigError.at("cnma.toml: topology.links[0].delay", "missing")
        return loads.pop(0)

    def connect(config: CnmaConfig) -> Transport:
        return cps

    return Agent(load, connect, SequenceStore(tmp_path), config), loads


def test_full_then_nothing_then_delta_then_heartbeat(tmp_path: Path, example: CnmaConfig) -> None:
    cps = FakeCps()
    agent, loads = make(tmp_path, example, cps)
    agent.tick()
    agent.tick()
    (full,) = cps.reports()
    assert full["report-type"] == "full"
    assert len(full["path"]) == 2
    loads.append(slower(example, "188.3.67.3", 7000))  # CF-2: 2 + 7 = 9 ms
    agent.reload_now()
    agent.tick()
    delta = cps.reports()[-1]
    assert delta["report-type"] == "delta"
    assert [(p["egress"], p["delay"]) for p in delta["path"]] == [("188.3.67.3", "9.000")]
    agent.config = replace(agent.config, reporting=replace(agent.config.reporting, heartbeat=0))
    agent.tick()
    beat = cps.reports()[-1]
    assert beat["report-type"] == "full"
    assert len(beat["path"]) == 2
    numbers = [int(r["sequence-number"]) for r in cps.reports()]
    assert numbers == sorted(set(numbers))


def test_a_bad_reload_keeps_the_configuration(
    tmp_path: Path, example: CnmaConfig, caplog: pytest.LogCaptureFixture
) -> None:
    agent, _ = make(tmp_path, example, FakeCps())
    with caplog.at_level(logging.ERROR):
        agent.reload_now()
    assert agent.config is example
    assert "reload refused, configuration kept: invalid-value at cnma.toml" in caplog.text


def test_unreachable_backs_off_then_sends_full(tmp_path: Path, example: CnmaConfig) -> None:
    cps = FakeCps()
    agent, _ = make(tmp_path, example, cps)
    agent.tick()
    refused = UnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "refused"))
    cps.fail = [refused, refused]
    agent.config = slower(example, "188.3.67.4", 5000)
    agent.tick()
    first = agent.backoff
    agent.tick()
    assert 0 < first < agent.backoff
    agent.tick()
    assert agent.backoff == 0
    assert [r["report-type"] for r in cps.reports()] == ["full", "full"]


def test_rpc_error_is_logged_and_the_change_offered_again(
    tmp_path: Path, example: CnmaConfig, caplog: pytest.LogCaptureFixture
) -> None:
    cps = FakeCps()
    agent, _ = make(tmp_path, example, cps)
    agent.tick()
    item = ErrorItem(ErrorType.APPLICATION, "resource-denied", "rate-limited", None, "rate-limited")
    cps.fail = [RefusedError(409, item)]
    agent.config = slower(example, "188.3.67.4", 5000)
    with caplog.at_level(logging.ERROR):
        agent.tick()
    assert "refused: resource-denied: rate-limited" in caplog.text
    agent.tick()
    delta = cps.reports()[-1]
    assert delta["report-type"] == "delta"
    assert delta["path"][0]["delay"] == "7.000"


def test_forwarding_view_not_served_is_logged_once(
    tmp_path: Path, example: CnmaConfig, caplog: pytest.LogCaptureFixture
) -> None:
    cps = FakeCps()
    on = replace(example.reporting, forwarding_view=True)
    agent, _ = make(tmp_path, replace(example, reporting=on), cps)
    with caplog.at_level(logging.WARNING):
        agent.tick()
        agent.tick()
    assert caplog.text.count("does not serve advertise-forwarding-view") == 1
    assert [op for op, _ in cps.calls].count("advertise-forwarding-view") == 1
    cps.serves_view = True
    agent.config = replace(agent.config, reporting=replace(on, heartbeat=0))
    agent.tick()
    view = [m for op, m in cps.calls if op == "advertise-forwarding-view"][-1]
    assert view["c-nma"] == "cnma-7.1"
    assert len(view["candidate"]) == 4


def test_links_compare_by_value() -> None:
    link = Link("a", "b", Micros(1))  # type: ignore[arg-type]
    assert link.reversed().reversed() == link


@dataclass
class Hanging(FakeCps):
    """A replica that takes every request and answers none until ``release`` is set."""

    release: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        self.entered.set()
        self.release.wait()
        return super().invoke(module, operation, members)


@dataclass
class Noting(FakeCps):
    """A replica that says when a report arrived."""

    got: threading.Event = field(default_factory=threading.Event)

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        answer = super().invoke(module, operation, members)
        self.got.set()
        return answer


def test_one_loop_per_replica_and_a_hanging_one_delays_no_other(
    tmp_path: Path, example: CnmaConfig
) -> None:
    """A C-PS cluster: one loop per replica; the first replica hangs on its first report,
    the second gets its reports all the same; the numbers of both come from one store and
    never repeat."""
    urls = ("http://10.0.0.1:8080/restconf", "http://10.0.0.2:8080/restconf")
    config = replace(example, cps=replace(example.cps, url=urls[0], replicas=(urls[1],)))
    hanging, noting = Hanging(), Noting()
    fakes: dict[str, FakeCps] = {urls[0]: hanging, urls[1]: noting}
    store = SequenceStore(tmp_path)
    loops = per_replica(lambda: config, lambda c: fakes[c.cps.url], store, config)
    assert [loop.config.cps.urls for loop in loops] == [(urls[0],), (urls[1],)]
    runner = threading.Thread(target=run_all, args=(loops,))
    runner.start()
    try:
        assert noting.got.wait(timeout=120), "the second replica got no report"
        # the first one holds its first report (a loop that had not sent it yet when the
        # test stopped the loops would send nothing, and the check below could not be made)
        assert hanging.entered.wait(timeout=120), "the first replica got no request"
        assert not hanging.calls
    finally:
        hanging.release.set()
        for loop in loops:
            loop.stop.set()
            loop.wake.set()
        runner.join(timeout=120)
    assert not runner.is_alive()
    numbers = [int(r["sequence-number"]) for fake in fakes.values() for r in fake.reports()]
    assert len(numbers) == len(set(numbers))
    assert hanging.reports()
