"""The C-PS cluster's figures (issue 22): 3 etcd members and 3 ``catsctl serve --cluster``.

    python -m tools.bench.cluster [--sizes 1000,100000] [--seconds 5] [--failover-trials 10]

For each size: commits/s with edits spread over the 3 replicas (merges of distinct entries,
2 clients per replica), the time from a commit's acknowledgement on one replica to its
visibility on the two others (p50/p99, polled every 2 ms), and select-service calls/s
answered by 1, 2 and 3 replicas (the CST and NST reported to every replica, as agents do).
Then failover: a forwarder in the inventory, the leader killed, until the new leader's first
push is accepted (the forwarder's log), over ``--failover-trials`` kills. ``--read-cost``:
the cost of a consistent read (``--cluster-reads consistent``, the default, against
``local``): RESTCONF GET of one entry on a replica that did not make the last commit, p50 of
one client and calls/s of 4, on a cluster started each way (``--sizes ''`` skips the rest).
``--session-cost N``: what an agent's step boundary costs on a replica (RESTCONF, one
client), p50/p99 over N step-start boundaries (each decided: query-state at a real
``catsctl csma``, a commitment extended, the session kept in etcd) and N pauses (no
decision: the session kept, nothing else).
Each line gives the CPU seconds the replicas and etcd used and the load average: the machine
is shared, so the ratios matter more than the absolute rates.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import requests

from controller.cluster.etcd import Etcd, endpoints_of
from tests.functional.cluster import Cluster, running_cluster, wait_identical, wait_until
from tests.functional.restconf_server import ADMIN, JSON, Server
from tests.functional.test_service_metrics import INGRESS, cst_report, nst_report
from tests.functional.test_service_metrics import seed as metrics_seed
from tools.bench.common import TARGETS, cpu_seconds
from tools.bench.common import seed as bench_seed

SM = "ietf-cats-service-metrics"
CLIENTS_PER_REPLICA = 2
ENTRY = "data/bench-list:bench/entry={key}"


def document(size: int) -> dict[str, object]:
    """The service-metrics seed (admin, attachments, rate limit) plus ``size`` entries."""
    found = metrics_seed()
    found["bench-list:bench"] = bench_seed(size)["bench-list:bench"]
    return found


def cpu(cluster: Cluster) -> float:
    """CPU seconds of every replica and etcd member so far."""
    pids = [r.process.pid for r in cluster.replicas]
    pids += [m.process.pid for m in cluster.etcd.members if m.process is not None]
    return sum(cpu_seconds(pid) for pid in pids)


def _session() -> requests.Session:
    session = requests.Session()
    session.auth = ADMIN
    return session


def _patch(session: requests.Session, server: Server, key: int, weight: int) -> int:
    body = {"bench-list:entry": [{"id": key, "weight": weight}]}
    reply = session.patch(
        server.url(ENTRY.format(key=key)),
        data=json.dumps(body),
        headers={"Content-Type": JSON},
        timeout=60,
    )
    if reply.status_code != 204:  # noqa: PLR2004
        try:
            error = reply.json()["ietf-restconf:errors"]["error"][0]
            why = f"{error['error-tag']}: {error.get('error-message', '')}"
        except (ValueError, KeyError, IndexError):
            why = f"HTTP {reply.status_code}"
        with _REFUSALS_LOCK:
            _REFUSALS[why] += 1
    return reply.status_code


#: Why commits were refused in the last commits() run (error-tag: message), and how often
_REFUSALS: collections.Counter[str] = collections.Counter()
_REFUSALS_LOCK = threading.Lock()


def _run(
    clients: Sequence[Callable[[int], bool]], seconds: float
) -> tuple[int, int, float, list[float]]:
    """Each client called with a counter until ``seconds`` pass: successes, failures, elapsed
    seconds, latencies (ms)."""
    done, failed, latencies = [0], [0], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def loop(client: Callable[[int], bool]) -> None:
        count, mine = 0, []
        while time.monotonic() < deadline:
            began = time.perf_counter()
            ok = client(count)
            mine.append((time.perf_counter() - began) * 1000)
            count += 1
            with lock:
                done[0] += ok
                failed[0] += not ok
        with lock:
            latencies.extend(mine)

    began = time.monotonic()
    threads = [threading.Thread(target=loop, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0], failed[0], time.monotonic() - began, latencies


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def commits(cluster: Cluster, size: int, seconds: float) -> str:
    """Commits/s with merges of distinct entries spread over the replicas."""
    clients = []
    for n in range(CLIENTS_PER_REPLICA * len(cluster.replicas)):
        server, session = cluster.replicas[n % len(cluster.replicas)], _session()

        def client(
            count: int, server: Server = server, session: requests.Session = session, n: int = n
        ) -> bool:
            key = (n * 7919 + count * 104_729) % size
            return _patch(session, server, key, 1 + count % 1000) == 204  # noqa: PLR2004

        clients.append(client)
    for server in cluster.replicas:  # the first commit of a replica builds its indexes
        body = json.dumps({"bench-list:entry": [{"id": 0, "weight": 1}]})
        reply = server.request(
            "PATCH", ENTRY.format(key=0), data=body, headers={"Content-Type": JSON}, timeout=600
        )
        assert reply.status_code == 204, reply.text  # noqa: PLR2004
    before = cpu(cluster)
    _REFUSALS.clear()
    ok, failed, elapsed, latencies = _run(clients, seconds)
    used = cpu(cluster) - before
    wait_identical(cluster.replicas, any_order=True)
    reasons = "".join(f"\n        refused {n}x {why}" for why, n in _REFUSALS.most_common())
    return (
        f"{size:>7} commits/s {ok / elapsed:8.1f}  refused {failed:4d}  p50 "
        f"{statistics.median(latencies):6.1f} ms  p99 {_pct(latencies, 0.99):7.1f} ms  "
        f"cpu {used:6.1f} s in {elapsed:.1f} s{reasons}"
    )


def visibility(cluster: Cluster, trials: int = 60) -> str:
    """From a commit's acknowledgement on A to its visibility on B and C (p50/p99 ms)."""
    a, *others = cluster.replicas
    sessions = [_session() for _ in others]
    waits: list[float] = []
    for trial in range(trials):
        weight = 2 + trial
        assert _patch(sessions[0], a, 0, weight) == 204  # noqa: PLR2004
        acked = time.perf_counter()
        for server, session in zip(others, sessions, strict=True):
            url = server.url(ENTRY.format(key=0))
            while True:
                reply = session.get(url, headers={"Accept": JSON}, timeout=30)
                if reply.json()["bench-list:entry"][0]["weight"] == weight:
                    break
                time.sleep(0.002)
        waits.append((time.perf_counter() - acked) * 1000)
    return (
        f"commit acknowledged to visible on both others: p50 {statistics.median(waits):.1f} ms"
        f"  p99 {_pct(waits, 0.99):.1f} ms  ({trials} commits)"
    )


def selection(cluster: Cluster, replicas: int, seconds: float) -> str:
    """select-service calls/s from 4 clients per replica over the first ``replicas``."""
    for server in cluster.replicas:  # every replica keeps its own tables
        for name, members in (
            ("report-service-metrics", cst_report()),
            ("report-network-metrics", nst_report()),
        ):
            reply = server.request(
                "POST",
                f"operations/{SM}:{name}",
                json={f"{SM}:input": members},
                headers={"Content-Type": JSON},
            )
            assert reply.status_code in (200, 204), reply.text
    clients = []
    for n in range(4 * replicas):
        server, session = cluster.replicas[n % replicas], _session()
        body = {f"{SM}:input": {"cs-id": "ARS", "ingress": INGRESS}}

        def client(
            _: int,
            server: Server = server,
            session: requests.Session = session,
            body: dict[str, Any] = body,
        ) -> bool:
            url = server.url(f"operations/{SM}:select-service")
            reply = session.post(url, json=body, headers={"Content-Type": JSON}, timeout=60)
            return reply.status_code == 200  # noqa: PLR2004

        clients.append(client)
    before = cpu(cluster)
    ok, failed, elapsed, latencies = _run(clients, seconds)
    used = cpu(cluster) - before
    return (
        f"select-service on {replicas} replica(s): {ok / elapsed:8.1f} calls/s  failed "
        f"{failed}  p50 {statistics.median(latencies):.1f} ms  cpu {used:.1f} s"
    )


def reads(cluster: Cluster, seconds: float) -> str:
    """GET of one entry on replica B (the commits were made on A): p50 of one client, then
    calls/s of 4 clients."""
    b = cluster.replicas[1]
    assert _patch(_session(), cluster.replicas[0], 1, 5) == 204  # noqa: PLR2004

    def reader(session: requests.Session) -> Callable[[int], bool]:
        url = b.url(ENTRY.format(key=1))
        return lambda _: session.get(url, headers={"Accept": JSON}, timeout=60).ok

    _, _, _, one = _run([reader(_session())], seconds)
    before = cpu(cluster)
    ok, failed, elapsed, four = _run([reader(_session()) for _ in range(4)], seconds)
    used = cpu(cluster) - before
    return (
        f"GET one entry on a replica: 1 client p50 {statistics.median(one):.2f} ms "
        f"p99 {_pct(one, 0.99):.2f} ms; 4 clients {ok / elapsed:.1f} calls/s p50 "
        f"{statistics.median(four):.2f} ms failed {failed} cpu {used:.1f} s in {elapsed:.1f} s"
    )


def read_cost(seconds: float) -> None:
    """:func:`reads` on a cluster with consistent reads and on one with local reads."""
    for mode in ("consistent", "local", "consistent", "local"):
        with (
            tempfile.TemporaryDirectory(prefix="cats-cluster-reads-") as folder,
            running_cluster(Path(folder), document(1000), 3, "--cluster-reads", mode) as cluster,
        ):
            wait_identical(cluster.replicas)
            line = reads(cluster, seconds)
            print(f"--cluster-reads {mode:<10} {line}  load {os.getloadavg()[0]:.1f}", flush=True)


def _term_above(forwarder: Any, term: int) -> bool:
    from tests.functional.test_cluster_leader import forwarder_term  # noqa: PLC0415

    return forwarder_term(forwarder) > term


def failover(trials: int) -> str:
    """Leader killed (SIGKILL) to the new leader's first push accepted by a forwarder, as the
    forwarder logs it; two kills per cluster of 3 replicas, clusters until ``trials``."""
    from tests.functional.test_cluster_leader import (  # noqa: PLC0415 - the bench's only use
        accepted_at,
        forwarder_term,
        leader_of,
    )
    from tests.functional.test_cluster_leader import seed as leader_seed  # noqa: PLC0415
    from tests.functional.test_forwarder import Forwarder  # noqa: PLC0415

    took: list[float] = []
    while len(took) < trials:
        with tempfile.TemporaryDirectory(prefix="cats-failover-") as name:
            folder = Path(name)
            forwarder = Forwarder(folder, name="fa", forwarder_id="10.0.0.1")
            forwarder.start()
            try:
                wait_until(forwarder.up, "the forwarder is up")
                with running_cluster(folder, leader_seed(forwarder)) as cluster:
                    alive = list(cluster.replicas)
                    wait_until(functools.partial(_term_above, forwarder, 0), "a first leader")
                    for _ in range(2):
                        term = forwarder_term(forwarder)
                        leader = leader_of(alive, term)
                        alive.remove(leader)
                        killed = time.time()
                        leader.process.kill()
                        leader.process.wait()
                        wait_until(functools.partial(_term_above, forwarder, term), "a new leader")
                        took.append(accepted_at(forwarder, forwarder_term(forwarder)) - killed)
            finally:
                forwarder.stop()
    took = took[:trials]
    return (
        f"failover (leader killed to first push accepted): p50 {statistics.median(took):.2f} s"
        f"  max {max(took):.2f} s  over {len(took)} trials: " + " ".join(f"{t:.2f}" for t in took)
    )


STEPS_PER_SESSION = 10  # a session's step boundaries timed (its budget bounds how many)


def _timed(call: Callable[[], object], times: int) -> list[float]:
    took = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        took.append((time.perf_counter() - start) * 1000)
    return took


def session_cost(calls: int) -> str:
    """p50/p99 of step-start and pause boundaries of one session on one replica."""
    from tests.functional.restconf_server import free_port  # noqa: PLC0415
    from tests.functional.test_agent_selection import (  # noqa: PLC0415
        _instances,
        call,
        csma_process,
    )
    from tests.functional.test_agent_steering import SERVICE, _seed  # noqa: PLC0415
    from tests.unit.agent_selection import drafts  # noqa: PLC0415

    specs = [
        dataclasses.replace(s, csci_id=f"127.0.0.1:{free_port()}", service=SERVICE)
        for s in drafts.example_84(0.5)
    ]
    report = {"url": f"http://127.0.0.1:{free_port()}/restconf", "username": "u", "password": "p"}
    with tempfile.TemporaryDirectory(prefix="cats-sessions-") as name:
        folder = Path(name)
        with csma_process(folder, "csma-1", _instances(specs), ("cps-1", "s"), report) as csma:
            csma.wait()
            no_forwarder: Any = argparse.Namespace(netconf=0)  # the inventory is dropped
            seed: dict[str, Any] = _seed(specs, csma.c_sma(), no_forwarder)
            seed.pop("ietf-cats-steering:forwarders")
            with running_cluster(folder, seed) as cluster:
                replica = cluster.replicas[0]
                now = time.time()
                call(replica, "advertise-capability", drafts.capability(specs, now))
                call(replica, "advertise-forwarding-view", drafts.forwarding(specs, now))
                sessions = [f"s-b{n}" for n in range(max(1, calls // STEPS_PER_SESSION))]
                for session_id in sessions:  # admitted first, not timed
                    admit = {"descriptor": drafts.descriptor_84(session_id, SERVICE)}
                    call(replica, "submit-descriptor", admit)
                turns = iter(range(calls * 2))

                def boundary(kind: str) -> None:
                    turn = next(turns)  # round the sessions, a step further each round
                    step = 2 + turn // len(sessions) % STEPS_PER_SESSION
                    members = {"boundary": kind, "turn-id": 1, "step-id": step}
                    members["session-id"] = sessions[turn % len(sessions)]
                    call(replica, "step-boundary", members)

                start = _timed(functools.partial(boundary, "step-start"), calls)
                pause = _timed(functools.partial(boundary, "pause"), calls)
                etcd = Etcd(endpoints_of(cluster.etcd.url))  # one put of a session's size
                put = _timed(functools.partial(etcd.put, "/bench/put", bytes(2700)), calls)
    return (
        f"step-boundary on a replica: step-start p50 {statistics.median(start):.2f} ms "
        f"p99 {_pct(start, 0.99):.2f} ms; pause p50 {statistics.median(pause):.2f} ms "
        f"p99 {_pct(pause, 0.99):.2f} ms; an etcd put of 2.7 kB alone p50 "
        f"{statistics.median(put):.2f} ms p99 {_pct(put, 0.99):.2f} ms "
        f"({calls} each, load {os.getloadavg()[0]:.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the bench; prints one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--failover-trials", type=int, default=10, help="0: none")
    parser.add_argument("--read-cost", action="store_true", help="consistent against local reads")
    parser.add_argument("--session-cost", type=int, default=0, help="N step boundaries timed")
    args = parser.parse_args(argv)
    print(f"targets {TARGETS}; {CLIENTS_PER_REPLICA} committing clients per replica")
    if args.read_cost:
        read_cost(args.seconds)
    if args.session_cost:
        print(session_cost(args.session_cost), flush=True)
    for size in (int(s) for s in args.sizes.split(",") if s):
        with (
            tempfile.TemporaryDirectory(prefix="cats-cluster-bench-") as folder,
            running_cluster(Path(folder), document(size)) as cluster,
        ):
            wait_identical(cluster.replicas)
            print(commits(cluster, size, args.seconds), flush=True)
            print(f"{size:>7} " + visibility(cluster), flush=True)
            for replicas in (1, 2, 3):
                print(f"{size:>7} " + selection(cluster, replicas, args.seconds), flush=True)
            print(f"{size:>7} load average {os.getloadavg()}", flush=True)
    if args.failover_trials:
        print(failover(args.failover_trials), flush=True)
        print(f"load average {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
