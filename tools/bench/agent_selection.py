"""Agent selection: evaluate latency (pure core and through the evaluate RPC) and the memory
the C-PS holds per open session (agent draft 8.1 P4-P7, 6.5 M39, 13).

Run with ``python -m tools.bench.agent_selection`` from the repository root.

1. Pure core: :func:`controller.selection.mapping.evaluate` over 1,000 candidates with a
   20-element working set (each candidate holding 0-5 of the elements), p50/p99.
2. The evaluate RPC through a real ``catsctl serve`` (RESTCONF, libyang on input and output)
   with the agent-selection plugin and a C-SMA stand-in answering query-state over NETCONF
   for the 1,000 candidates and 20 keys (``--no-server`` skips it).
3. Memory: ``--sessions`` sessions (default 100,000) admitted and re-evaluated through the
   handlers in process until each holds 10 decision records, measured with tracemalloc.

The candidate and descriptor documents are those of the functional tests
(tests/unit/agent_selection/drafts.py); the servers run the test plugins until
controller.app wires agent selection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import requests

from controller.agent_selection import AgentSelection
from controller.agent_selection.config import AgentConfig, parse
from controller.datastore.api import SYSTEM
from controller.selection.mapping import EvaluationRequest, Policy, evaluate
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.csma_double import CsmaDouble
from tools.bench.common import free_port, stop

AS = "ietf-cats-agent-selection"
CANDIDATES = 1_000
ELEMENTS = 20
RECORDS = 10
ADVERTISE_EVERY = 60.0
Json = dict[str, Any]


def specs(count: int, seed: int = 7) -> list[drafts.Spec]:
    """``count`` candidates with varied paths and load, each holding 0-5 of the elements."""
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(ELEMENTS)]
    return [
        drafts.Spec(f"c{i}", delay=rng.uniform(0.005, 0.2), wait=rng.uniform(0.02, 0.3),
                    latency=rng.uniform(0.2, 0.8), holds=tuple(rng.sample(keys, rng.randint(0, 5))))
        for i in range(count)
    ]  # fmt: skip


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
    return drafts.descriptor(session, 1, working_set(), objective=[drafts.TWO_SECONDS],
                             locality=[drafts.LOCALITY])  # fmt: skip


def service(candidates: list[drafts.Spec]) -> tuple[AgentSelection, AgentConfig]:
    """The handlers over an in-memory C-SMA, the candidates advertised."""
    config = parse(drafts.config(candidates, 830))
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


def pure(runs: int) -> tuple[float, float]:
    """evaluate() over 1,000 candidates, the state as query-state would report it."""
    candidates = specs(CANDIDATES)
    made, config = service(candidates)
    made.submit_descriptor(SYSTEM, {"descriptor": descriptor("s-pure")})
    session = made._sessions[next(iter(made._sessions))]
    state = made._query(config, session)
    built = made._book.candidates(config, session.service_id, state)
    policy = Policy(tiers=config.tiers)
    request = EvaluationRequest(session.descriptor, session.position())
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        evaluate(request, built, policy, time.time())
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def memory(sessions: int) -> tuple[float, float]:
    """Bytes held per session with RECORDS decision records, and the seconds it took. The
    candidates are advertised again every minute, as their C-SMA and C-NMA would: a value
    past its freshness bound satisfies nothing (M20), and the sessions would fail."""
    candidates = drafts.example_84(0.5)
    made, _ = service(candidates)
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
    elapsed = time.perf_counter() - start
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    kept = sum(len(s.records) for s in made._sessions.values())
    assert kept == sessions * RECORDS, kept
    return held / sessions, elapsed


@contextlib.contextmanager
def _server(folder: Path, env: Json, plugin: str, seed: Json) -> Iterator[tuple[int, int]]:
    port, netconf = free_port(), free_port()
    init = folder / "init.json"
    init.write_text(json.dumps(seed))
    command = [sys.executable, "-m", "controller.cli", "serve", "--state-dir",
               str(folder / "state"), "--restconf-port", str(port), "--netconf-port",
               str(netconf), "--init-data", str(init), "--plugin", plugin]  # fmt: skip
    with (folder / "serve.log").open("ab") as sink:
        process = __import__("subprocess").Popen(
            command, stdout=sink, stderr=sink, env={**os.environ, **env, "PYTHONPATH": "."}
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.RequestException):
                requests.get(f"http://127.0.0.1:{port}/restconf", timeout=1)
                break
            time.sleep(0.2)
        time.sleep(1.0)  # NETCONF listens shortly after RESTCONF
        yield port, netconf
    finally:
        stop(process, timeout=10)


def rpc(runs: int) -> tuple[float, float]:
    """The evaluate RPC over RESTCONF against a real C-PS and C-SMA stand-in."""
    from controller.auth import hash_password  # noqa: PLC0415

    admin = ("admin", "bench-secret")
    users = {"ietf-system:system": {"authentication": {"user": [
        {"name": admin[0], "password": hash_password(admin[1])}]}}}  # fmt: skip
    candidates = specs(CANDIDATES)
    with TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "csma").mkdir()
        (folder / "cps").mkdir()
        table = folder / "table.json"
        holds = [[s.csci_id, drafts.TENANT, k] for s in candidates for k in s.holds]
        table.write_text(json.dumps({"held": holds}))
        csma_env = {"CATS_CSMA_TABLE": str(table), "CATS_CSMA_LOG": os.devnull}
        with _server(folder / "csma", csma_env, "tests.functional.plugins.csma_double_plugin",
                     users) as (_, csma_netconf):  # fmt: skip
            document = drafts.config(candidates, csma_netconf)
            config = folder / "config.json"
            config.write_text(json.dumps(document))
            env = {"CATS_AS_CONFIG": str(config), "CATS_AS_CSMA_USER": admin[0],
                   "CATS_AS_CSMA_PASSWORD": admin[1]}  # fmt: skip
            seed = {**users, f"{AS}:agent-selection": document}
            plugin = "tests.functional.plugins.agent_selection_plugin"
            with _server(folder / "cps", env, plugin, seed) as (port, _):
                http = requests.Session()
                http.auth = admin
                root = f"http://127.0.0.1:{port}/restconf/operations/{AS}:"
                headers = {"Content-Type": "application/yang-data+json"}

                def post(name: str, members: Json) -> None:
                    reply = http.post(root + name, json={f"{AS}:input": members},
                                      headers=headers, timeout=60)  # fmt: skip
                    assert reply.status_code in (200, 204), reply.text

                now = time.time()
                post("advertise-capability", drafts.capability(candidates, now))
                post("advertise-forwarding-view", drafts.forwarding(candidates, now))
                post("submit-descriptor", {"descriptor": descriptor("s-rpc")})
                samples = []
                for _ in range(runs):
                    start = time.perf_counter()
                    post("evaluate", {"session-id": "s-rpc", "trigger": f"{AS}:t2-turn-start"})
                    samples.append(time.perf_counter() - start)
    return percentiles(samples)


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rpc-runs", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args(argv)
    p50, p99 = pure(args.runs)
    print(f"evaluate, pure core, {CANDIDATES} candidates x {ELEMENTS} elements: "
          f"p50 {p50:.1f} ms  p99 {p99:.1f} ms  ({args.runs} runs)")  # fmt: skip
    if not args.no_server:
        p50, p99 = rpc(args.rpc_runs)
        print(f"evaluate RPC (RESTCONF, query-state over NETCONF), {CANDIDATES} candidates: "
              f"p50 {p50:.1f} ms  p99 {p99:.1f} ms  ({args.rpc_runs} runs)")  # fmt: skip
    per, elapsed = memory(args.sessions)
    print(f"memory: {per / 1024:.1f} KiB per open session with {RECORDS} decision records "
          f"= {per * 100_000 / 2**30:.2f} GiB per 100k sessions "
          f"(measured over {args.sessions} sessions in {elapsed:.0f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
