"""agent_selection.csmas and the c-sma credentials of config: each C-SMA is logged in at with
what its candidates configure; none configured is a failed call, not a guess."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from controller.agent_selection.config import AgentConfig, parse
from controller.agent_selection.csmas import ConfiguredStateAgents
from controller.southbound import Credentials, PeerUnreachableError, Target
from controller.types import CsciId, Json
from tests.unit.agent_selection import drafts

SPECS = drafts.example_84(0.5)  # A, B, C


def _route(spec: drafts.Spec) -> Json:
    """A and B behind csma-1 (user cps-1), C behind csma-2 (user cps-2)."""
    if spec.csci_id == "C":
        return drafts.c_sma(8302, "csma-2", ("cps-2", "two"))
    return drafts.c_sma(8301, "csma-1", ("cps-1", "one"))


CSMA_1 = Target("csma-1", "127.0.0.1", 8301)
CSMA_2 = Target("csma-2", "127.0.0.1", 8302)


@dataclass
class Agents:
    """A StateAgents that records what it is asked, as whom."""

    credentials: Credentials
    calls: list[tuple[str, Target]] = field(default_factory=list)
    closed: bool = False

    def query_state(self, target: Target, members: Json) -> Json:
        self.calls.append(("query-state", target))
        return {"tenant": members["tenant"]}

    def reserve_state(self, target: Target, members: Json) -> Json:
        self.calls.append(("reserve-state", target))
        return {"reservation-id": members["reservation-id"], "status": "accepted"}

    def release_state(self, target: Target, members: Json) -> Json:
        self.calls.append(("release-state", target))
        return {}

    def close(self) -> None:
        self.closed = True


@dataclass
class Logins:
    """The Login seam: one recording Agents per login, in the order made."""

    made: list[Agents] = field(default_factory=list)
    closed: bool = False

    def __call__(self, credentials: Credentials) -> Agents:
        self.made.append(Agents(credentials))
        return self.made[-1]

    def close(self) -> None:
        self.closed = True


@dataclass
class Running:
    """The configuration in force, replaced as running would be."""

    config: AgentConfig

    def __call__(self) -> AgentConfig:
        return self.config


def test_each_csma_gets_the_credentials_its_candidates_configure() -> None:
    config = parse(drafts.config(SPECS, _route))
    assert config.logins == {
        CSMA_1: Credentials("cps-1", "one"),
        CSMA_2: Credentials("cps-2", "two"),
    }
    assert config.candidates[CsciId("C")].credentials == Credentials("cps-2", "two")
    unrouted = parse({"candidates": {"candidate": [{"csci-id": "X", "cs-id": "agent"}]}})
    assert (unrouted.candidates[CsciId("X")].c_sma, unrouted.logins) == (None, {})


def test_one_login_per_credentials_and_each_call_goes_as_its_csmas_user() -> None:
    logins = Logins()
    agents = ConfiguredStateAgents(Running(parse(drafts.config(SPECS, _route))), logins)
    agents.query_state(CSMA_1, {"tenant": "t"})
    agents.query_state(CSMA_2, {"tenant": "t"})
    agents.release_state(CSMA_1, {"session-id": "s", "tenant": "t"})
    assert [(a.credentials.username, a.calls) for a in logins.made] == [
        ("cps-1", [("query-state", CSMA_1), ("release-state", CSMA_1)]),
        ("cps-2", [("query-state", CSMA_2)]),
    ]
    agents.close()
    assert all(a.closed for a in logins.made)
    assert logins.closed


def test_a_csma_without_credentials_fails_the_call_and_logs_in_nowhere() -> None:
    logins = Logins()
    agents = ConfiguredStateAgents(Running(parse(drafts.config(SPECS, _route))), logins)
    elsewhere = Target("csma-9", "127.0.0.1", 8309)
    with pytest.raises(PeerUnreachableError) as refused:
        agents.reserve_state(elsewhere, {"reservation-id": "r"})
    (item,) = refused.value.items
    assert item.app_tag == "no-credentials"
    assert "csma-9" in item.message
    assert logins.made == []


def test_changed_credentials_close_the_old_login_and_open_a_new_one() -> None:
    logins = Logins()
    running = Running(parse(drafts.config(SPECS, _route)))
    agents = ConfiguredStateAgents(running, logins)
    agents.query_state(CSMA_1, {"tenant": "t"})
    agents.query_state(CSMA_2, {"tenant": "t"})
    first, second = logins.made

    def renewed(spec: drafts.Spec) -> Json:
        return (
            _route(spec) if spec.csci_id == "C" else drafts.c_sma(8301, "csma-1", ("cps-1", "new"))
        )

    running.config = parse(drafts.config(SPECS, renewed))
    agents.query_state(CSMA_1, {"tenant": "t"})
    assert first.closed
    assert not second.closed
    assert logins.made[-1].credentials == Credentials("cps-1", "new")
    assert logins.made[-1].calls == [("query-state", CSMA_1)]
