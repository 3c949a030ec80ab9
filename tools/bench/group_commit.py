"""Group commit: the edit rate of 8 sessions against 1 at 100k entries, NETCONF and RESTCONF.

Run with ``python -m tools.bench.group_commit`` from the repository root. It seeds
``tests/yang/bench-list@2026-11-30.yang`` with ``--size`` entries (as tools.bench.netconf
does), starts one real ``catsctl serve`` on loopback with both northbounds and then, for
``--rounds`` rounds, runs single-entry edits (NETCONF ``edit-config`` merge of one entry's
name and weight; RESTCONF ``PATCH`` of the same) from 1 session and then from 8 for
``--seconds`` each, interleaved so that both see the same machine. It prints each cell, the
8/1 ratio of each round and the median ratio per northbound, with the load average (the
machine is shared: ratios of one run are what to compare). Target (issue 21): 8 sessions at
least 3x the 1-session rate on both (concurrent commits share one journal fsync).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import paramiko

from tools.bench import common, netconf, restconf

C = TypeVar("C")
RATIO_TARGET = 3.0
SESSIONS = 8
START_TIMEOUT_S = 900.0  # seeding 100k entries takes minutes on a loaded machine


def rate(
    clients: Sequence[C], operation: Callable[[C, int], bool], size: int, seconds: float
) -> float:
    """Edits per second of ``clients`` (one thread each) for ``seconds``."""
    done = [0] * len(clients)
    failed: list[int] = []
    deadline = time.monotonic() + seconds

    def run(index: int, client: C) -> None:
        key = index * 104_729
        while time.monotonic() < deadline:
            if not operation(client, key % size):
                failed.append(key % size)
            done[index] += 1
            key += 7919

    began = time.monotonic()
    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise SystemExit(f"{len(failed)} edits failed, e.g. key {failed[0]}")
    return sum(done) / (time.monotonic() - began)


def _netconf_edit(session: netconf.Session, key: int) -> bool:
    return netconf.edit_entry(session, key)


def _restconf_edit(client: restconf.Client, key: int) -> bool:
    return restconf.patch(client, key) == 204  # noqa: PLR2004


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Start the server, run the interleaved rounds, print cells, ratios and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-group-") as temp:
        folder = Path(temp)
        init = folder / "init.json"
        init.write_text(json.dumps(common.seed(args.size)))
        nc_port, rc_port = common.free_port(), common.free_port()
        log = (folder / "serve.log").open("wb")
        command = [
            sys.executable, "-m", "controller.cli", "serve",
            "--state-dir", str(folder / "state"), "--yang-dir", str(common.YANG_DIR),
            "--init-data", str(init),
            "--netconf-port", str(nc_port), "--restconf-port", str(rc_port),
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=common.ROOT, stdout=log, stderr=log)
        try:
            _wait_ready(process, nc_port)
            return _rounds(args, nc_port, rc_port)
        finally:
            common.stop(process, timeout=30)
            log.close()


def _wait_ready(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("catsctl serve exited during start-up")
        try:
            netconf.Session(port).close()
        except (OSError, EOFError, paramiko.SSHException):
            time.sleep(0.5)
        else:
            return
    raise SystemExit("catsctl serve did not start")


def _rounds(args: argparse.Namespace, nc_port: int, rc_port: int) -> int:
    ratios: dict[str, list[float]] = {"NETCONF edit-config": [], "RESTCONF PATCH": []}
    makers: dict[str, tuple[Callable[[], object], Callable[[object, int], bool]]] = {
        "NETCONF edit-config": (lambda: netconf.Session(nc_port), _netconf_edit),  # type: ignore[dict-item]
        "RESTCONF PATCH": (lambda: restconf.Client(rc_port), _restconf_edit),  # type: ignore[dict-item]
    }
    print(f"{args.size} entries, {args.seconds:.0f} s per cell, load {_load()}")
    for round_ in range(1, args.rounds + 1):
        for name, (make, edit) in makers.items():
            clients = [make() for _ in range(SESSIONS)]
            one = rate(clients[:1], edit, args.size, args.seconds)
            many = rate(clients, edit, args.size, args.seconds)
            for client in clients:
                close = getattr(client, "close", None)
                if close is not None:
                    close()
            ratios[name].append(many / one)
            print(
                f"round {round_} {name:<20} 1: {one:7.1f}/s  {SESSIONS}: {many:7.1f}/s  "
                f"ratio {many / one:5.2f}  (load {_load()})"
            )
    missed = False
    for name, values in ratios.items():
        median = statistics.median(values)
        met = median >= RATIO_TARGET
        missed = missed or not met
        print(
            f"{name}: median {SESSIONS}/1 ratio {median:.2f} "
            f"(target >= {RATIO_TARGET}: {'met' if met else 'MISSED'})"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
