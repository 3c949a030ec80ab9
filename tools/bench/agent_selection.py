"""Agent selection: evaluate latency (pure core and through the evaluate RPC) and the memory
the C-PS holds per open session (agent draft 8.1 P4-P7, 6.5 M39, 13).

Run with ``python -m tools.bench.agent_selection`` from the repository root.

1. Pure core: :func:`controller.selection.mapping.evaluate` over 1,000 candidates with a
   20-element working set (each candidate holding 0-5 of the elements), p50/p99: every
   candidate screened, then re-evaluations whose candidates' results are kept (Screenings).
2. The evaluate RPC through a real ``catsctl serve`` (RESTCONF, libyang on input and output,
   agent selection built in and configured in running) and a real ``catsctl csma`` answering
   query-state over NETCONF for the 1,000 candidates and 20 keys (``--no-server`` skips it),
   with warm caches (presence, kept results): p50, p99 / target, CPU per call and server,
   load; and the first decision with presence warm (it screens every candidate).
3. Memory: ``--sessions`` sessions (default 100,000) admitted and re-evaluated through the
   handlers in process until each holds 10 decision records, measured with tracemalloc.

The candidate and descriptor documents are those of the functional tests
(tests/unit/agent_selection/drafts.py); in process, the C-SMA is the unit tests' in-memory
one (tests/unit/agent_selection/csma_double.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

import requests

from controller.agent_selection import AgentSelection
from controller.agent_selection.config import AgentConfig, parse, with_defaults
from controller.datastore.api import SYSTEM
from controller.model import Schema
from controller.selection.mapping import EvaluationRequest, Policy, evaluate
from controller.selection.mapping.memo import Screenings
from controller.types import Json
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.csma_double import CsmaDouble
from tools.bench.common import cpu_seconds, free_port, stop

AS = "ietf-cats-agent-selection"
CANDIDATES = 1_000
ELEMENTS = 20
RECORDS = 10
ADVERTISE_EVERY = 60.0
WARM_UP = 30  # decisions at most until the presence cache answers without the C-SMA
TARGET_P99 = 50.0  # ms, the evaluate RPC at 1k candidates x 20 elements (issue 16)


def specs(count: int, seed: int = 7) -> list[drafts.Spec]:
    """``count`` candidates with varied paths and load, each holding 0-5 of the elements."""
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(ELEMENTS)]
    return [
        drafts.Spec(
            f"c{i}",
            delay=rng.uniform(0.005, 0.2),
            wait=rng.uniform(0.02, 0.3),
            latency=rng.uniform(0.2, 0.8),
            holds=tuple(rng.sample(keys, rng.randint(0, 5))),
        )
        for i in range(count)
    ]


CONTEXT_ELEMENTS = 4


def working_set() -> list[Json]:
    """20 elements: 4 of context state, 16 of retrieved material."""
    return [
        drafts.element(f"k{i}", "model-context-state", 2e8, 4_000)
        if i < CONTEXT_ELEMENTS
        else drafts.element(f"k{i}", "retrieved-material", 2e6, 500)
        for i in range(ELEMENTS)
    ]


def descriptor(session: str) -> Json:
    """A step with the 20-element working set, a 2 s p95 objective and a locality."""
    return drafts.descriptor(
        session, 1, working_set(), objective=[drafts.TWO_SECONDS], locality=[drafts.LOCALITY]
    )


def service(candidates: list[drafts.Spec]) -> tuple[AgentSelection, AgentConfig]:
    """The handlers over an in-memory C-SMA, the candidates advertised."""
    with Schema() as schema:  # the module's defaults, as running has them
        config = parse(with_defaults(drafts.config(candidates, 830), schema))
    double = CsmaDouble()
    for csci_id, key in drafts.holdings(candidates):
        double.hold(csci_id, drafts.TENANT, key)
    made = AgentSelection(lambda: config, double)
    now = time.time()
    made.advertisements.advertise_capability(SYSTEM, drafts.capability(candidates, now))
    made.advertisements.advertise_forwarding_view(SYSTEM, drafts.forwarding(candidates, now))
    return made, config


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3


def pure(runs: int, *, kept: bool = False) -> tuple[float, float, float, float]:
    """evaluate() over 1,000 candidates, the state as query-state would report it; with
    ``kept``, re-evaluations of a session whose candidates did not change (Screenings)."""
    candidates = specs(CANDIDATES)
    made, config = service(candidates)
    made.submit_descriptor(SYSTEM, {"descriptor": descriptor("s-pure")})
    session = made._decisions.sessions[next(iter(made._decisions.sessions))]
    state = made._decisions.query(config, session)
    built = made._decisions.book.candidates(config, session.service_id, state)
    policy = Policy(tiers=config.tiers)
    request = EvaluationRequest(session.descriptor, session.position())
    screenings = Screenings() if kept else None
    if screenings is not None:
        evaluate(request, built, policy, time.time(), screenings)
    samples, cpu = [], []
    for _ in range(runs):
        start, used = time.perf_counter(), time.process_time()
        evaluate(request, built, policy, time.time(), screenings)
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return (*percentiles(samples), *percentiles(cpu))


def memory(sessions: int) -> tuple[float, float]:
    """Bytes held per session with RECORDS decision records, and the seconds it took. The
    candidates are advertised again every minute, as their C-SMA and C-NMA would: a value
    past its freshness bound satisfies nothing (M20), and the sessions would fail."""
    candidates = drafts.example_84(0.5)
    made, _ = service(candidates)
    double = made._decisions.agents
    assert isinstance(double, CsmaDouble)
    trigger = f"{AS}:t2-turn-start"
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = advertised = time.perf_counter()
    sequence = 1
    for index in range(sessions):
        if time.perf_counter() - advertised > ADVERTISE_EVERY:
            sequence, advertised = sequence + 1, time.perf_counter()
            now = time.time()
            adverts = made.advertisements
            adverts.advertise_capability(SYSTEM, drafts.capability(candidates, now, sequence))
            adverts.advertise_forwarding_view(SYSTEM, drafts.forwarding(candidates, now, sequence))
        session_id = f"s-{index}"
        made.submit_descriptor(SYSTEM, {"descriptor": drafts.descriptor_84(session_id)})
        for _ in range(RECORDS - 1):
            made.evaluate(SYSTEM, {"session-id": session_id, "trigger": trigger})
        double.calls.clear()  # the double's own log of calls is no memory of the C-PS
    elapsed = time.perf_counter() - start
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    kept = sum(len(s.records) for s in made._decisions.sessions.values())
    assert kept == sessions * RECORDS, kept
    return held / sessions, elapsed


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


@contextlib.contextmanager
def _catsctl(folder: Path, arguments: list[str], ports: tuple[int, ...]) -> Iterator[int]:
    """A ``catsctl`` process logging into ``folder``, until every port in ``ports`` listens."""
    command = [sys.executable, "-m", "controller.cli", *arguments]
    with (folder / "process.log").open("ab") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=sink, env={**os.environ, "PYTHONPATH": "."}
        )
    try:
        deadline = time.monotonic() + 120
        while not all(_listening(port) for port in ports):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"catsctl {arguments[0]} did not start: see {folder}")
            time.sleep(0.2)
        yield process.pid
    finally:
        stop(process, timeout=10)


def _csma_config(candidates: list[drafts.Spec], cps_port: int) -> Json:
    """A C-SMA answering for every candidate, holding what each holds; the C-PS logs in as
    drafts.CPS_LOGIN."""
    login = drafts.CPS_LOGIN
    return {
        "name": "csma-1",
        "site": "SS1",
        "cps": {
            "url": f"http://127.0.0.1:{cps_port}/restconf",
            "username": "csma-1",
            "password": "csma-1-report",
        },
        "users": [{"name": login[0], "password": login[1], "role": "cps"}],
        "instances": [
            {
                "csci-id": s.csci_id,
                "cs-id": s.service,
                "capacity": 10**12,
                "state": [
                    {"tenant": drafts.TENANT, "reuse-key": key, "residency": "accelerator-memory"}
                    for key in s.holds
                ],
            }
            for s in candidates
        ],
    }


@dataclass(frozen=True, slots=True)
class RpcFigures:
    """The evaluate RPC's figures (ms): p50, p99, CPU per call of the C-PS and the C-SMA,
    the first decision with presence warm, and the load average before and after."""

    p50: float
    p99: float
    cps_cpu: float
    csma_cpu: float
    first: float
    load: tuple[float, float]


ADMIN = ("admin", "bench-secret")


@dataclass(frozen=True, slots=True)
class Servers:
    """A running C-PS and C-SMA: the C-PS's RESTCONF port, the C-SMA's, and their pids."""

    port: int
    csma_port: int
    cps_pid: int
    csma_pid: int


@contextlib.contextmanager
def _servers(candidates: list[drafts.Spec]) -> Iterator[Servers]:
    """A ``catsctl csma`` holding the candidates' state and a ``catsctl serve`` with agent
    selection configured for them, the C-SMA as their state agent."""
    from controller.auth import hash_password  # noqa: PLC0415
    from controller.auth.policy import default_policy  # noqa: PLC0415

    users = [
        {"name": ADMIN[0], "password": hash_password(ADMIN[1])},
        {"name": "csma-1", "password": hash_password("csma-1-report")},
    ]
    port, netconf, csma_rc, csma_nc = (free_port() for _ in range(4))
    with TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "csma").mkdir()
        (folder / "cps").mkdir()
        csma_file = folder / "csma" / "csma.json"
        csma_file.write_text(json.dumps(_csma_config(candidates, port)))
        seed = {
            "ietf-system:system": {"authentication": {"user": users}},
            **default_policy({"admin": [ADMIN[0]], "csma": ["csma-1"]}),
            f"{AS}:agent-selection": drafts.config(candidates, csma_nc),
        }
        init = folder / "cps" / "init.json"
        init.write_text(json.dumps(seed))
        csma = ["csma", "--config", str(csma_file), "--state-dir", str(folder / "csma" / "state")]
        csma += ["--restconf-port", str(csma_rc), "--netconf-port", str(csma_nc)]
        serve = ["serve", "--state-dir", str(folder / "cps" / "state"), "--init-data", str(init)]
        serve += ["--restconf-port", str(port), "--netconf-port", str(netconf)]
        with (
            _catsctl(folder / "csma", csma, (csma_rc, csma_nc)) as csma_pid,
            _catsctl(folder / "cps", serve, (port, netconf)) as cps_pid,
        ):
            yield Servers(port, csma_rc, cps_pid, csma_pid)


def rpc(runs: int) -> RpcFigures:
    """The evaluate RPC over RESTCONF against a real C-PS and a real C-SMA.

    Warm means both caches are: the presence cache answers without the C-SMA (a decision
    asked it nothing), and the decision before kept its candidates' results (one more
    decision; the one before it is reported as ``first``)."""
    candidates = specs(CANDIDATES)
    with _servers(candidates) as servers:
        http = requests.Session()
        http.auth = ADMIN
        root = f"http://127.0.0.1:{servers.port}/restconf/operations/{AS}:"
        headers = {"Content-Type": "application/yang-data+json"}

        def post(name: str, members: Json) -> None:
            reply = http.post(
                root + name, json={f"{AS}:input": members}, headers=headers, timeout=60
            )
            assert reply.status_code in (200, 204), reply.text

        now = time.time()
        post("advertise-capability", drafts.capability(candidates, now))
        post("advertise-forwarding-view", drafts.forwarding(candidates, now))
        post("submit-descriptor", {"descriptor": descriptor("s-rpc")})
        csma_root = f"http://127.0.0.1:{servers.csma_port}/restconf/data/{AS}:agent-selection/c-sma"

        def asked() -> int:
            reply = requests.get(
                csma_root,
                auth=drafts.CPS_LOGIN,
                headers={"Accept": "application/yang-data+json"},
                timeout=60,
            )
            found = reply.json()[f"{AS}:c-sma"].get("exchange", []) if reply.ok else []
            return sum(1 for e in found if e["operation"] == "query-state")

        def timed() -> float:
            start = time.perf_counter()
            post("evaluate", {"session-id": "s-rpc", "trigger": f"{AS}:t2-turn-start"})
            return time.perf_counter() - start

        warm = False  # the presence cache is warm once a decision asks the C-SMA nothing
        first = 0.0
        for _ in range(WARM_UP):
            before = asked()
            first = timed()
            if asked() == before:
                warm = True
                break
        if not warm:
            print("warning: every warm-up decision asked the C-SMA (no subscription?)")
        timed()  # kept: the candidates' results of the decision before hold
        load = os.getloadavg()[0]
        samples = []
        cps_cpu, csma_cpu = cpu_seconds(servers.cps_pid), cpu_seconds(servers.csma_pid)
        for _ in range(runs):
            samples.append(timed())
        cps_cpu = cpu_seconds(servers.cps_pid) - cps_cpu
        csma_cpu = cpu_seconds(servers.csma_pid) - csma_cpu
    p50, p99 = percentiles(samples)
    return RpcFigures(
        p50,
        p99,
        cps_cpu / runs * 1e3,
        csma_cpu / runs * 1e3,
        first * 1e3,
        (load, os.getloadavg()[0]),
    )


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rpc-runs", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args(argv)
    load = os.getloadavg()  # the machine is shared: the figures are read against it
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    for kept, what in ((False, "every candidate screened"), (True, "results kept")):
        p50, p99, c50, c99 = pure(args.runs, kept=kept)
        print(
            f"evaluate, pure core, {CANDIDATES} candidates x {ELEMENTS} elements, {what}: "
            f"p50 {p50:.1f} ms  p99 {p99:.1f} ms  (CPU p50 {c50:.1f} ms  p99 {c99:.1f} ms; "
            f"{args.runs} runs)"
        )
    if not args.no_server:
        found = rpc(args.rpc_runs)
        print(
            f"evaluate RPC (RESTCONF; presence by subscription, warm caches), {CANDIDATES} "
            f"candidates x {ELEMENTS} elements: p50 {found.p50:.1f} ms  p99 {found.p99:.1f} ms "
            f"= {found.p99 / TARGET_P99:.2f} x the target p99 <= {TARGET_P99:.0f} ms "
            f"({args.rpc_runs} runs); CPU per call: C-PS {found.cps_cpu:.1f} ms, C-SMA "
            f"{found.csma_cpu:.1f} ms; load average {found.load[0]:.2f} -> {found.load[1]:.2f}; "
            f"first decision once presence was warm (results not yet kept) {found.first:.1f} ms"
        )
    per, elapsed = memory(args.sessions)
    print(
        f"memory: {per / 1024:.1f} KiB per open session with {RECORDS} decision records "
        "(target <= 20 KiB) "
        f"= {per * 100_000 / 2**30:.2f} GiB per 100k sessions "
        f"(measured over {args.sessions} sessions in {elapsed:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
