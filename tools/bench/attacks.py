"""What a legitimate client sees while hostile ones attack a real ``catsctl serve`` (issue 14).

Run with ``python -m tools.bench.attacks`` from the repository root (``--seconds``, ``--only``).
It seeds a server on loopback (``tests/yang/bench-list``, the bench user as administrator and
``watcher`` as an observer, default-rounds ``$6$`` passwords), keeps an authenticated RESTCONF
client (and, for the SSH attacks, a NETCONF session) reading one entry every 20 ms, and for
each attack prints the legitimate client's p50 and p99 latency, its failures, and what the
attack got (``tools.bench.attackers``):

* ``guessers``: 8 password guessers over RESTCONF, each from its own address (guesses checked
  per second, the rest throttled); ``guessers-unthrottled`` the same with throttling off
  (``--login-free-failures`` huge), so every guess costs a check in the worker pool;
  ``ssh-guessers``: 8 over SSH;
* ``timing``: the time of a wrong password of a real user and of an unknown user (medians
  of interleaved samples, on the unthrottled server);
* ``half-open``: 100 slowloris connections (a head trickled a line a second);
* ``tls-idle``: 20 connections to an HTTPS server that never start TLS;
* ``streams``: 32 event streams of one read-only user;
* ``preauth``: 300 SSH connections that never authenticate, from 10 addresses;
* ``attributes``: a NETCONF ``<rpc>`` with 200k attributes, sent again and again;
* ``edit``: one RESTCONF edit of 100k new entries in flight (its duration printed);
* ``commit``, ``copy-config``, ``copy-candidate``: a NETCONF ``<commit>`` of a candidate of
  100k new entries, a ``<copy-config>`` of such a candidate to running, and of running (200k
  entries or more by then) to the candidate, in flight (its time and server CPU seconds).

The target: the legitimate client's p99 under 1 s during each attack.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

from controller.auth import hash_password
from tools.bench import attackers, large_commits
from tools.bench.attackers import Attacker, Latencies, Legit, NetconfSession
from tools.bench.common import PASSWORD, ROOT, USER, YANG_DIR, free_port, seed, stop
from tools.bench.large_commits import copy_config

ENTRIES = 1000
LARGE = 100_000  # new entries of a large commit or copy
ENTRY_1 = "data/bench-list:bench/entry=1"
WATCHER = ("watcher", "watcher-password")
TARGET_P99_MS = 1000.0
START_TIMEOUT_S = 180.0
TIMING_SAMPLES = 8  # per kind


@dataclass
class Server:
    """A running bench server."""

    process: subprocess.Popen[bytes]
    port: int
    netconf_port: int
    scheme: str
    cert: Path | None

    @property
    def base(self) -> str:
        """The RESTCONF root."""
        return f"{self.scheme}://127.0.0.1:{self.port}/restconf"

    def session(self) -> requests.Session:
        """An authenticated keep-alive session as the bench user."""
        session = requests.Session()
        session.auth = (USER, PASSWORD)
        if self.cert is not None:
            session.verify = str(self.cert)
            session.trust_env = False  # REQUESTS_CA_BUNDLE would win over the session's verify
        return session

    def logins(self) -> dict[str, dict[str, str]]:
        """``cats-controller-admin:logins`` by transport."""
        with self.session() as session:
            reply = session.get(f"{self.base}/data/cats-controller-admin:logins", timeout=60)
        rows = reply.json()["cats-controller-admin:logins"]["transport"]
        return {row["name"]: row for row in rows}


def _seed(folder: Path) -> Path:
    document = seed(ENTRIES)
    users = document["ietf-system:system"]["authentication"]["user"]  # type: ignore[index]
    users.append({"name": WATCHER[0], "password": hash_password(WATCHER[1])})
    groups = document["ietf-netconf-acm:nacm"]["groups"]["group"]  # type: ignore[index]
    groups.append({"name": "observer", "user-name": [WATCHER[0]]})
    path = folder / "init.json"
    path.write_text(json.dumps(document))
    return path


def _cert(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=cats-bench", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def running(folder: Path, *extra: str, tls: bool = False) -> Iterator[Server]:
    """A seeded ``catsctl serve`` in ``folder``, stopped at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    port, netconf_port = free_port(), free_port()
    cert = None
    options = list(extra)
    if tls:
        cert, key = _cert(folder)
        options += ["--tls-cert", str(cert), "--tls-key", str(key)]
    command = [
        *(sys.executable, "-m", "controller.cli", "serve"),
        *("--state-dir", str(folder / "state"), "--yang-dir", str(YANG_DIR)),
        *("--init-data", str(_seed(folder))),
        *("--restconf-port", str(port), "--netconf-port", str(netconf_port)),
        *options,
    ]
    log = (folder / "serve.log").open("wb")
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    server = Server(process, port, netconf_port, "https" if tls else "http", cert)
    try:
        _wait(server)
        yield server
    finally:
        stop(process, timeout=30)
        log.close()


def _wait(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit("catsctl serve exited during start-up")
        try:
            with server.session() as session:
                if session.get(f"{server.base}/data/bench-list:bench/entry=1", timeout=60).ok:
                    NetconfSession(server.netconf_port, USER, PASSWORD).close()
                    return
        except (requests.RequestException, OSError, EOFError):
            time.sleep(0.5)
    raise SystemExit("catsctl serve did not start")


@dataclass
class Row:
    """One printed line."""

    attack: str
    restconf: Latencies
    netconf: Latencies | None
    got: str


def _measure(
    server: Server, attack: Attacker | None, seconds: float, *, netconf: bool = False
) -> tuple[Latencies, Latencies | None]:
    """Legitimate clients' latencies while ``attack`` runs for ``seconds``."""
    session = server.session()
    url = f"{server.base}/data/bench-list:bench/entry=1"
    attackers.restconf_reader(session, url)()  # logged in before the attack
    nc = NetconfSession(server.netconf_port, USER, PASSWORD) if netconf else None
    if attack is not None:
        attack.start()
    legit = Legit(attackers.restconf_reader(session, url)).start()
    nc_legit = Legit(attackers.netconf_reader(nc, 1)).start() if nc is not None else None
    time.sleep(seconds)
    restconf = legit.stop()
    nc_latencies = nc_legit.stop() if nc_legit is not None else None
    if attack is not None:
        attack.stop()
    if nc is not None:
        nc.close()
    session.close()
    return restconf, nc_latencies


def _counts(attack: Attacker) -> str:
    """The tally; a ``*-ms`` total as the mean per event (``*-n`` of them)."""
    counts = attack.tally.counts
    shown = []
    for key, value in sorted(counts.items()):
        if key.endswith("-n"):
            continue
        events = counts.get(key[:-3] + "-n", 0) if key.endswith("-ms") else 0
        shown.append(f"{key} {value / events:.0f} mean" if events else f"{key} {value}")
    return ", ".join(shown)


def guessers(server: Server, seconds: float, *, name: str = "guessers") -> Row:
    """8 RESTCONF guessers at the bench user."""
    before = server.logins()["restconf"]
    attack = attackers.RestconfGuessers(server.base, USER)
    restconf, _ = _measure(server, attack, seconds)
    after = server.logins()["restconf"]
    checked = int(after["failed"]) - int(before["failed"])
    got = f"{checked / seconds:.2f} guesses/s checked ({_counts(attack)})"
    return Row(name, restconf, None, got)


def ssh_guessers(server: Server, seconds: float) -> Row:
    """8 SSH guessers at the bench user."""
    before = server.logins()["netconf"]
    attack = attackers.SshGuessers(server.netconf_port, USER)
    restconf, netconf = _measure(server, attack, seconds, netconf=True)
    after = server.logins()["netconf"]
    checked = int(after["failed"]) - int(before["failed"])
    got = f"{checked / seconds:.2f} guesses/s checked ({_counts(attack)})"
    return Row("ssh-guessers", restconf, netconf, got)


def timing(server: Server, seconds: float) -> Row:
    """How long a wrong password of a real user and an unknown user take (fresh sources)."""
    del seconds
    found: dict[str, list[float]] = {"wrong password": [], "unknown user": []}
    kinds = (("wrong password", USER), ("unknown user", "x"))
    for index in range(TIMING_SAMPLES):  # interleaved, each from a fresh source
        for offset, (label, user) in enumerate(kinds if index % 2 else kinds[::-1]):
            session = attackers.session_from(attackers.source(40 + index * 2 + offset))
            began = time.perf_counter()
            session.get(f"{server.base}/data", auth=(user, "not-it"), timeout=60)
            found[label].append((time.perf_counter() - began) * 1000)
            session.close()
    got = "; ".join(
        f"{label} median {statistics.median(v):.0f} ms (min {min(v):.0f}, max {max(v):.0f})"
        for label, v in found.items()
    )
    return Row("timing", Latencies(), None, got)


def _simple(
    make: Callable[[Server], Attacker], name: str, *, netconf: bool = False
) -> Callable[[Server, float], Row]:
    def run(server: Server, seconds: float) -> Row:
        attack = make(server)
        restconf, nc = _measure(server, attack, seconds, netconf=netconf)
        return Row(name, restconf, nc, _counts(attack))

    return run


def edit(server: Server, seconds: float, entries: int = 100_000) -> Row:
    """One edit of ``entries`` new entries in flight; the legitimate client reads meanwhile."""
    del seconds
    body = attackers.bench_entries(1_000_000, entries)
    outcome: dict[str, object] = {}

    class BigEdit(Attacker):
        def run(self, index: int) -> None:
            del index
            began = time.monotonic()
            with server.session() as session:
                reply = session.patch(
                    f"{server.base}/data/bench-list:bench",
                    data=body,
                    headers={"Content-Type": "application/yang-data+json"},
                    timeout=3600,
                )
            outcome["status"] = reply.status_code
            outcome["s"] = time.monotonic() - began

    attack = BigEdit()
    session = server.session()
    url = f"{server.base}/data/bench-list:bench/entry=1"
    attackers.restconf_reader(session, url)()
    attack.start()
    legit = Legit(attackers.restconf_reader(session, url)).start()
    attack.stop()  # waits for the edit to end
    restconf = legit.stop()
    session.close()
    return Row(
        "edit", restconf, None, f"edit {outcome.get('status')} in {outcome.get('s', 0):.1f} s"
    )


def _whole(name: str, first: int | None, body: str) -> Callable[[Server, float], Row]:
    """``body``, a large NETCONF transaction of whole datastores, in flight (after an edit of
    the candidate adding ``LARGE`` entries from ``first``, unless None)."""

    def run(server: Server, seconds: float) -> Row:
        del seconds
        rpcs = [body] if first is None else [large_commits.fill(first, LARGE), body]
        nc = NetconfSession(server.netconf_port, USER, PASSWORD)
        with server.session() as session, closing(nc):
            read = attackers.restconf_reader(session, f"{server.base}/{ENTRY_1}")
            return Row(name, *large_commits.row(nc, read, rpcs, server.process.pid))

    return run


class Idle(Attacker):
    """No attack: the baseline."""

    def run(self, index: int) -> None:
        """Wait to be stopped."""
        del index
        self.stopping.wait()


ATTACKS: dict[str, Callable[[Server, float], Row]] = {
    "none": _simple(lambda s: Idle(), "none", netconf=True),
    "timing": timing,  # run on the unthrottled server (see _run)
    "guessers": guessers,
    "ssh-guessers": ssh_guessers,
    "half-open": _simple(lambda s: attackers.HalfOpen(s.port, 100), "half-open"),
    "streams": _simple(lambda s: attackers.Streams(s.base, WATCHER, 32), "streams"),
    "preauth": _simple(
        lambda s: attackers.PreAuthSsh(s.netconf_port, 300), "preauth", netconf=True
    ),
    "attributes": _simple(
        lambda s: attackers.AttributeBomb(s.netconf_port, USER, PASSWORD), "attributes"
    ),
    "edit": edit,
    "commit": _whole("commit", 2_000_000, "<commit/>"),
    "copy-config": _whole("copy-config", 3_000_000, copy_config("candidate", "running")),
    "copy-candidate": _whole("copy-candidate", None, copy_config("running", "candidate")),
}


def _print(rows: list[Row]) -> bool:
    print(f"\n{'attack':<22} {'legit':>6} {'p50 ms':>8} {'p99 ms':>8} {'fail':>5}  attack got")
    missed = False
    for row in rows:
        for label, latencies in (("rc", row.restconf), ("nc", row.netconf)):
            if latencies is None or not latencies.values:
                continue
            fails = sum(latencies.failures.values())
            print(
                f"{row.attack + ' ' + label:<22} {len(latencies.values):>6} "
                f"{latencies.p50:>8.1f} {latencies.p(0.99):>8.1f} {fails:>5}  {row.got}"
            )
            missed = missed or latencies.p(0.99) >= TARGET_P99_MS or bool(fails)
        if not row.restconf.values:
            print(f"{row.attack:<22} {'':>6} {'':>8} {'':>8} {'':>5}  {row.got}")
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"target: p99 < {TARGET_P99_MS:.0f} ms and no failure: {'MISSED' if missed else 'met'}")
    return missed


def main(argv: list[str] | None = None) -> int:
    """Run the attacks and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--only", nargs="+", choices=[*ATTACKS, "tls-idle", "unthrottled"])
    args = parser.parse_args(argv)
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)  # the attackers' own errors
    chosen = args.only or [*ATTACKS, "tls-idle", "unthrottled"]
    rows: list[Row] = []
    try:
        _run(chosen, args.seconds, rows)
    finally:
        missed = _print(rows)
    return 1 if missed else 0


def _run(chosen: list[str], seconds: float, rows: list[Row]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as temp:
        folder = Path(temp)
        plain = [name for name in ATTACKS if name in chosen and name != "timing"]
        if plain:
            with running(folder / "plain") as server:
                for name in plain:
                    print(f"{name}...", flush=True)
                    rows.append(ATTACKS[name](server, seconds))
        if "unthrottled" in chosen or "timing" in chosen:
            with running(folder / "open", "--login-free-failures", "1000000000") as server:
                if "timing" in chosen:  # unthrottled: every sample is a check
                    print("timing...", flush=True)
                    rows.append(timing(server, seconds))
                if "unthrottled" in chosen:
                    print("guessers-unthrottled...", flush=True)
                    rows.append(guessers(server, seconds, name="guessers-unthrottled"))
        if "tls-idle" in chosen:
            with running(folder / "tls", tls=True) as server:
                print("tls-idle...", flush=True)
                silent = attackers.HalfOpen(server.port, 20, silent=True)
                restconf, _ = _measure(server, silent, seconds)
                rows.append(Row("tls-idle", restconf, None, _counts(silent)))


if __name__ == "__main__":
    sys.exit(main())
