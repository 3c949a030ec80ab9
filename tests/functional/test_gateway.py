"""``catsctl gateway`` as a real process against a real C-PS and a real C-SMA on loopback.

:func:`agent_selection_cps` is the one place that starts the servers: a ``catsctl csma``
answering for the candidates and ``catsctl serve`` with agent selection built in, its
configuration seeded into running (as tests/functional/test_agent_selection.py does, whose
helpers it uses). The C-SMA advertises the candidates' capability itself (MSG-4, configured
with the draft's numbers); the paths are advertised as a C-NMA would (MSG-7, the draft's p95
paths, which ``catsctl cnma`` cannot state from a topology). The gateway plays the
shipped step-30 episode (agents/gateway/examples) and descriptions written by the tests, over
RESTCONF; the tests read the outcome back from the C-PS's session state and from the C-SMA's
exchange log.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.auth import hash_password
from controller.types import Json
from tests.conftest import ROOT
from tests.functional.restconf_server import (
    ADMIN,
    Server,
    admin_policy,
    free_port,
    running_server,
    write_init,
)
from tests.functional.test_agent_selection import (
    ADVERTISING,
    Csma,
    _instances,
    advertised_by,
    call,
    csma_process,
)
from tests.unit.agent_selection import drafts

pytestmark = pytest.mark.functional
AS = "ietf-cats-agent-selection"
EXAMPLE = ROOT / "agents" / "gateway" / "examples" / "step30-episode.json"
EPISODE = drafts.episode()  # B and C of service 'agent', as the example names them
EX84 = drafts.renamed(drafts.example_84(0.5), "x84-", "ex84")
SPECS = [*EPISODE, *EX84]
CSMA_LOGIN = ("cps-gw", "cps-gw-secret")  # the C-PS's user at the C-SMA


@contextlib.contextmanager
def agent_selection_cps(folder: Path, specs: list[drafts.Spec]) -> Iterator[tuple[Server, Csma]]:
    """A C-SMA holding what ``specs`` hold and advertising them, then a C-PS with agent
    selection for them, once it holds the C-SMA's advertisement (MSG-4) and the paths (MSG-7);
    yields the C-PS and the C-SMA."""
    cps_port = free_port()
    report = {
        "url": f"http://127.0.0.1:{cps_port}/restconf",
        "username": "csma-gw",
        "password": "csma-gw-report",
    }
    instances = _instances(specs, advertised=True)
    with csma_process(
        folder, "csma-gw", instances, CSMA_LOGIN, report, advertising=ADVERTISING
    ) as csma:
        csma.wait()
        document = drafts.config(specs, lambda _: csma.c_sma())
        users = [
            {"name": "csma-gw", "password": hash_password("csma-gw-report")},
            {"name": ADMIN[0], "password": hash_password(ADMIN[1])},
        ]
        seed: dict[str, object] = {
            "ietf-system:system": {"authentication": {"user": users}},
            f"{AS}:agent-selection": document,
            **admin_policy(csma=["csma-gw"]),  # the C-SMA's user may advertise (MSG-4)
        }
        (folder / "cps").mkdir()
        init = write_init(folder / "cps", seed)
        with running_server(folder / "cps" / "state", init, port=cps_port) as cps:
            advertised_by(csma)
            call(cps, "advertise-forwarding-view", drafts.forwarding(specs, time.time()))
            yield cps, csma


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Csma]]:
    """The C-PS and the C-SMA, for the whole module."""
    with agent_selection_cps(tmp_path_factory.mktemp("gateway"), SPECS) as started:
        yield started


@pytest.fixture(scope="module")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The admin's password, for --password-file."""
    path = tmp_path_factory.mktemp("gateway-login") / "password"
    path.write_text(ADMIN[1] + "\n")
    return path


Played = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def play(servers: tuple[Server, Csma], password_file: Path, tmp_path: Path) -> Played:
    """Run ``catsctl gateway`` to its end on a description file, or on a document written to
    ``tmp_path/description.json``."""

    def run(description: Path | Json, *extra: str) -> subprocess.CompletedProcess[str]:
        path = description if isinstance(description, Path) else tmp_path / "description.json"
        if not isinstance(description, Path):
            path.write_text(json.dumps(description))
        command = [
            sys.executable,
            "-m",
            "controller.cli",
            "gateway",
            str(path),
            "--cps-url",
            f"{servers[0].root}/restconf",
            "--username",
            ADMIN[0],
            "--password-file",
            str(password_file),
            *extra,
        ]
        return subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )

    return run


def session(cps: Server, session_id: str) -> Json:
    """One session of the C-PS's state."""
    (entry,) = cps.get_json(f"data/{AS}:agent-selection/sessions/session={session_id}")[
        f"{AS}:session"
    ]
    found: Json = entry
    return found


def budget(entry: Json, turn_id: int, step_id: int | None = None) -> dict[str, float]:
    """consumed per dimension of a turn, or of one of its steps."""
    (turn,) = [t for t in entry["accounting"]["turn"] if t["turn-id"] == turn_id]
    level = turn if step_id is None else next(s for s in turn["step"] if s["step-id"] == step_id)
    return {b["dimension"].split(":")[-1]: float(b["consumed"]) for b in level["budget"]}


def test_the_step30_episode_keeps_c_handles_the_tail_event_and_reports_accounting(
    servers: tuple[Server, Csma], play: Played, tmp_path: Path
) -> None:
    cps, csma = servers
    log = tmp_path / "gateway-log.json"
    done = play(EXAMPLE, "--log", str(log))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 failed RPCs, 0 unmet expectations" in done.stdout
    assert "at t1-step-boundary step 30: keep C" in done.stdout
    assert "degradation applied: truncated-working-set" in done.stdout
    entry = session(cps, "s-episode")
    assert entry["state"] == "closed"
    boundary, tail = entry["decision-record"][-2:]
    assert (boundary["outcome"], boundary["selected"]) == (f"{AS}:keep", "C")
    assert boundary["stability"]["applied"] is True  # B's gain does not cover the rebuild
    assert (tail["trigger"], tail["outcome"], tail["selected"]) == (
        f"{AS}:t8-tail-event",
        f"{AS}:keep",
        "C",
    )
    assert tail["degradation-applied"] == [f"{AS}:truncated-working-set"]
    kept = entry["descriptor"]["working-set"]["element"]  # reuse keys shown as handles (15)
    sizes = sorted(int(e["element-size"]) for e in kept)
    assert sizes == [1_000_000, 5_000_000, 7_500_000_000]  # the reduced retrieval set:
    assert all(e.get("sufficient", True) for e in kept)  # docs-extra (45 MB) left behind
    assert "handoff" not in entry  # no migration
    assert [c["csci-id"] for c in entry["commitment"]] == ["C"]
    assert csma.exchanges("reserve-state", "s-episode") == []
    assert budget(entry, 1, 30) == {"time": 4600.0, "tokens": 2400.0}  # MSG-15 charged
    (release,) = csma.exchanges("release-state", "s-episode")  # close: MSG-16
    assert release["csci-id"] == ["C"]
    exchanges = json.loads(log.read_text())["exchanges"]
    sent = [e["operation"].split(":")[-1] for e in exchanges if e["operation"] != "get"]
    assert sent == [
        "submit-descriptor",
        "step-boundary",
        "invalidation-notice",
        "accounting-feedback",
        "close-session",
    ]
    notice = next(e for e in exchanges if e["operation"].endswith("invalidation-notice"))
    assert notice["input"]["step-progress"]["elapsed"] == "4000"
    assert notice["output"]["re-evaluation"]["selected"] == "C"
    reads = [e for e in exchanges if e["operation"] == "get"]
    assert len(reads) == 5
    assert all("output" in e for e in reads)


def _ex84_description(session_id: str, selected: str) -> Json:
    """The 8.4 example as a two-turn session with a pause, expecting ``selected`` at
    admission."""
    keyed = {"kv": drafts.KV, "docs": drafts.DOCS}
    return {
        "sessions": [
            {
                "session-id": session_id,
                "tenant": drafts.TENANT,
                "service-id": "ex84",
                "descriptor": {
                    "capability-tier": "capable",
                    "working-set": {"element": list(keyed.values())},
                    "objective": [drafts.TWO_SECONDS],
                    "locality": [drafts.LOCALITY],
                },
                "admission": {
                    "turn-id": 1,
                    "step-id": 1,
                    "expect": {
                        "decisions": [
                            {
                                "selected": selected,
                                "outcome": "move",
                                "excluded": {"x84-A": "capability-tier-below-required"},
                            }
                        ]
                    },
                },
                "turns": [
                    {
                        "turn-id": 1,
                        "steps": [
                            {
                                "step-id": 2,
                                "cost": {"time": 900, "cost": 0.25, "currency": "EUR"},
                                "pause": {
                                    "seconds": 0.2,
                                    "expect": {
                                        "state": "running",
                                        "decisions": [{"trigger": "t3-wake-up"}],
                                    },
                                },
                            }
                        ],
                    },
                    {
                        "turn-id": 2,
                        "start": True,
                        "steps": [{"step-id": 3}],
                        "cost": {"time": 1500},
                    },
                ],
            }
        ]
    }


def test_the_84_example_excludes_a_and_plays_pause_wake_up_and_turn_start(
    servers: tuple[Server, Csma], play: Played
) -> None:
    cps, _ = servers
    done = play(_ex84_description("s-gw84", "x84-C"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "excluded x84-A: capability-tier-below-required" in done.stdout
    entry = session(cps, "s-gw84")
    points = [
        r.get("trigger", r["decision-point"]).split(":")[-1] for r in entry["decision-record"]
    ]
    assert "t3-wake-up" in points
    assert "t2-turn-start" in points
    assert budget(entry, 1, 2) == {"time": 900.0, "cost": 0.25}
    assert budget(entry, 2) == {"time": 1500.0}  # the turn's own report
    assert entry["state"] == "closed"


def test_an_unmet_expectation_exits_1_and_names_its_place(
    servers: tuple[Server, Csma], play: Played
) -> None:
    cps, _ = servers
    done = play(_ex84_description("s-gw84-wrong", "x84-B"))
    assert done.returncode == 1, done.stdout + done.stderr
    where = "sessions[0].admission.expect.decisions[0].selected"
    assert f"expect FAILED: {where}: expected x84-B, got x84-C" in done.stdout
    assert "0 failed RPCs, 1 unmet expectations" in done.stdout
    assert session(cps, "s-gw84-wrong")["state"] == "closed"  # played to its end


def test_a_refused_rpc_exits_1_and_stops_the_session(play: Played) -> None:
    description = _ex84_description("s-gw-twice", "x84-C")
    assert play(description).returncode == 0
    done = play(description)  # the session is closed now
    assert done.returncode == 1, done.stdout + done.stderr
    (refused,) = [line for line in done.stdout.splitlines() if "FAILED" in line]
    assert refused.strip().startswith("submit-descriptor")
    assert "session 's-gw-twice' is closed" in refused  # the C-PS's rpc-error, as it said it
    assert "1 failed RPCs" in done.stdout
    assert "step-boundary" not in done.stdout  # nothing after the refusal


def test_a_bad_description_exits_2_naming_the_place_and_sends_nothing(
    servers: tuple[Server, Csma], play: Played, tmp_path: Path
) -> None:
    cps, csma = servers
    document = _ex84_description("s-gw-bad", "x84-C")
    document["sessions"][0]["turns"][0]["steps"][0]["cost"]["currency"] = "euro"
    done = play(document)
    assert done.returncode == 2, done.stdout + done.stderr
    where = f"{tmp_path / 'description.json'}: sessions[0].turns[0].steps[0].cost"
    assert where in done.stderr
    assert "currency" in done.stderr
    reply = cps.request("GET", f"data/{AS}:agent-selection/sessions/session=s-gw-bad")
    assert reply.status_code == 404
    assert csma.exchanges("query-state", "s-gw-bad") == []


def test_the_gateway_speaks_netconf_too(servers: tuple[Server, Csma], play: Played) -> None:
    """The same RPCs, and the session read with <get>, over NETCONF (RFC 6241, 6242)."""
    cps, _ = servers
    address = f"127.0.0.1:{cps.netconf_port}"
    done = play(_ex84_description("s-gw-nc", "x84-C"), "--netconf", address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "excluded x84-A: capability-tier-below-required" in done.stdout  # read via <get>
    assert "0 failed RPCs, 0 unmet expectations" in done.stdout
    entry = session(cps, "s-gw-nc")
    assert entry["state"] == "closed"
    assert budget(entry, 1, 2) == {"time": 900.0, "cost": 0.25}
    bad = play(_ex84_description("s-gw-nc2", "x84-C"), "--netconf", "no-port")
    assert bad.returncode == 2
    assert "--netconf: expected host:port" in bad.stderr
