"""Steering bench: CST change to forwarder acknowledgement, and edit-config at 100k rules.

1. For F forwarders holding K rules each (F in --forwarders, K in --rules): the C-PS runs in
   this process (``controller.server.Application`` with the C-PS installer, RESTCONF on
   loopback), the forwarders are real ``catsctl forwarder`` processes. Every forwarder is an
   ingress for ``ARS`` at its own ingress-id and holds K MSG-10 rules that the C-PS intends
   too (``SteeringService.intend_rule``), so reconciliation keeps them. The K rules are
   installed once into a template forwarder over NETCONF and its state directory is copied to
   every forwarder. A CST change (report-service-metrics over RESTCONF giving SCI-3 GAS 0, then
   600 again, alternately; each after an unchanged NST report, as a C-NMA's periodic report,
   which keeps the NST within the CST's time-sync window) moves ``ARS`` at every ingress
   between SCI-3 and SCI-1; the figure is the time from sending the report to
   every forwarder's worker having its commit acknowledged (edit-config, confirmed commit,
   confirming commit), p50 and max over --repeat changes.
2. One forwarder holding --big rules: edit-config (to the candidate) per second, and whole
   pushes per second (lock, edit-config, confirmed commit, confirming commit, unlock) of one
   entry and of a 64-entry batch.

Run: ``.venv/bin/python -m tools.bench.steering`` (defaults: 10 and 50 forwarders, 1k and
10k rules, 100k rules for part 2). Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import requests

from controller.app import install_cps
from controller.auth import hash_password
from controller.netconf.server import NetconfSettings
from controller.restconf.server import ListenSettings
from controller.server import Application, Composed, ServeSettings
from controller.service_metrics import ServiceMetrics
from controller.southbound.forwarders import SteeringService
from controller.southbound.peer import Credentials, PeerSettings
from controller.southbound.session import ConfigSession, WriteSettings
from controller.southbound.steering import Changes, rule_entry
from controller.types import CsId, ForwarderId, Json
from tools.bench.common import ROOT, free_port, stop

CPS = ("cps", "cps-secret")
ADMIN = ("admin", "admin-secret")
SM = "ietf-cats-service-metrics"
SCI1, SCI3, CF2, CF3 = "188.3.67.3:67", "188.3.67.4:69", "188.3.67.3", "188.3.67.4"
FILL_CHUNK = 4096  # entries per commit while filling


_TAKEN: set[int] = set()


def port() -> int:
    """A free loopback port not handed out before in this run."""
    while True:
        found = free_port()
        if found not in _TAKEN:
            _TAKEN.add(found)
            return found


@dataclass
class Forwarder:
    """One ``catsctl forwarder`` process on its own ports and state directory."""

    folder: Path
    name: str
    netconf: int = field(default_factory=port)
    data: int = field(default_factory=port)
    restconf: int = field(default_factory=port)
    process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str) -> None:
        config = self.folder / f"{self.name}.json"
        document = {"forwarder-id": "10.0.0.1", "users": [{"name": CPS[0], "password": CPS[1]}]}
        config.write_text(json.dumps(document))
        command = [
            sys.executable,
            "-m",
            "controller.cli",
            "forwarder",
            "--config",
            str(config),
            "--state-dir",
            str(self.state_dir),
            "--role",
            "ingress",
            "--listen",
            f"127.0.0.1:{self.data}",
            "--netconf-port",
            str(self.netconf),
            "--restconf-port",
            str(self.restconf),
            *extra,
        ]
        with (self.folder / f"{self.name}.log").open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)

    @property
    def state_dir(self) -> Path:
        return self.folder / f"{self.name}-state"

    def session(self) -> ConfigSession:
        return ConfigSession(
            ("127.0.0.1", self.netconf), Credentials(*CPS), PeerSettings(timeout=600)
        )

    def wait_up(self, timeout: float = 300, *extra: str) -> None:
        """Wait until it answers over NETCONF; restart it on new ports when one was taken."""
        deadline, retries = time.monotonic() + timeout, 3
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                log = (self.folder / f"{self.name}.log").read_text()
                if "Address already in use" not in log or not retries:
                    raise RuntimeError(log)
                retries -= 1
                self.netconf, self.data, self.restconf = port(), port(), port()
                self.start(*extra)
                continue
            session = self.session()
            with contextlib.suppress(Exception):
                session.capabilities()
                session.close()
                return
            session.close()
            time.sleep(0.3)
        raise RuntimeError(f"forwarder {self.name} did not start")

    def rss_mb(self) -> float:
        assert self.process is not None
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=30)


def bench_rule(index: int) -> Json:
    """The index-th bench rule (a MSG-10 instruction of a session step)."""
    return {
        "commitment-id": f"bench-{index}",
        "cs-id": "ARS",
        "match": {"session-id": f"s{index // 32}", "step-id": index % 32},
        "csci-id": SCI1,
        "egress-forwarder": CF2,
        "lifetime": 86_400,
    }


def fill(forwarder: Forwarder, count: int) -> float:
    """Install ``count`` bench rules (commits of FILL_CHUNK entries); seconds taken."""
    session = forwarder.session()
    started = time.perf_counter()
    try:
        for start in range(0, count, FILL_CHUNK):
            puts = tuple(
                rule_entry(bench_rule(i)) for i in range(start, min(count, start + FILL_CHUNK))
            )
            session.write(Changes(puts), WriteSettings(confirm_timeout=600))
    finally:
        session.close()
    return time.perf_counter() - started


def now() -> str:
    return datetime.now(UTC).isoformat()


class Reports:
    """report-service-metrics / report-network-metrics over RESTCONF with increasing numbers."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}/restconf/operations/{SM}:"
        self.http = requests.Session()
        self.http.auth = ADMIN
        self.sequence = 0

    def call(self, name: str, members: Json) -> None:
        self.sequence += 1
        members = {"sequence-number": str(self.sequence), "timestamp": now(), **members}
        reply = self.http.post(
            self.base + name,
            json={f"{SM}:input": members},
            timeout=60,
            headers={"Content-Type": "application/yang-data+json"},
        )
        reply.raise_for_status()

    def cst(self, sci3_gas: int) -> None:
        self.call(
            "report-service-metrics",
            {
                "entry": [
                    {
                        "cs-id": "ARS",
                        "csci-id": csci,
                        "gas": gas,
                        "computing-time": ct,
                        "price": 10,
                        "health": "healthy",
                        "source": "bench",
                    }
                    for csci, gas, ct in ((SCI1, 400, "5"), (SCI3, sci3_gas, "6"))
                ]
            },
        )

    def nst(self, ingresses: list[str]) -> None:
        paths = [
            {"ingress": i, "egress": e, "delay": d}
            for i in ingresses
            for e, d in ((CF2, "8"), (CF3, "6"))
        ]
        self.call("report-network-metrics", {"path": paths})


def ingress_id(index: int) -> str:
    return f"10.1.{index // 250}.{1 + index % 250}"


def seed(forwarders: list[Forwarder]) -> Json:
    return {
        "ietf-system:system": {
            "authentication": {"user": [{"name": ADMIN[0], "password": hash_password(ADMIN[1])}]}
        },
        f"{SM}:csci-attachments": {
            "attachment": [{"csci-id": SCI1, "egress": CF2}, {"csci-id": SCI3, "egress": CF3}]
        },
        f"{SM}:update-control": {"rate-limit": {"max-reports": 1_000_000}},
        "ietf-cats-steering:forwarders": {
            "reconcile-interval": 3600,
            "forwarder": [
                {
                    "name": f.name,
                    "address": "127.0.0.1",
                    "port": f.netconf,
                    "username": CPS[0],
                    "password": CPS[1],
                    "role": ["ingress"],
                    "ingress-id": ingress_id(i),
                    "cs-id": ["ARS"],
                }
                for i, f in enumerate(forwarders)
            ],
        },
    }


def _parts(hosted: object) -> Iterator[object]:
    """The running parts of the C-PS application, through nested ``Composed``."""
    if isinstance(hosted, Composed):
        for part in hosted.parts:
            yield from _parts(part)
    else:
        yield hosted


@contextlib.contextmanager
def cps(
    folder: Path, forwarders: list[Forwarder], rules: list[Json]
) -> Iterator[tuple[SteeringService, int, ServiceMetrics]]:
    """The C-PS in this process, seeded with the inventory, intending ``rules`` at every
    forwarder before its workers first connect (else reconciliation would remove them)."""
    (folder / "init.json").write_text(json.dumps(seed(forwarders)))
    listen = port()
    settings = ServeSettings(
        state_dir=folder / "cps-state",
        init_data=folder / "init.json",
        listen=ListenSettings(port=listen),
        netconf=NetconfSettings(port=0),
    )
    app = Application(settings, install_cps)
    parts = list(_parts(app.hosted))
    steering = next(p for p in parts if isinstance(p, SteeringService))
    for forwarder in forwarders:
        for item in rules:
            steering.intend_rule(forwarder.name, item)
    metrics = next(p for p in parts if isinstance(p, ServiceMetrics))
    with app:
        yield steering, listen, metrics


def acknowledged(steering: SteeringService, names: list[str], csci: str | None) -> bool:
    for name in names:
        generation, entry = steering.intended.entry(name, ("service", "ARS"))
        status = steering.status(name)
        found = entry.members.get("csci-id") if entry is not None else None
        if found != csci or status is None:
            return False
        if not (status.in_sync and status.acked >= generation):
            return False
    return True


def wait(steering: SteeringService, names: list[str], csci: str | None, timeout: float) -> float:
    started = time.perf_counter()
    while not acknowledged(steering, names, csci):
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"not acknowledged in {timeout} s")
        time.sleep(0.002)
    return time.perf_counter() - started


def templates(folder: Path, sizes: list[int]) -> dict[int, Path]:
    """A state directory holding K bench rules, per K."""
    found: dict[int, Path] = {}
    for size in sizes:
        template = Forwarder(folder, f"template-{size}")
        template.start("--clean")
        try:
            template.wait_up(300, "--clean")
            seconds = fill(template, size)
            rate = size / seconds
            print(
                f"  template with {size} rules filled in {seconds:.1f} s "
                f"({rate:.0f} entries/s, commits of {FILL_CHUNK})",
                flush=True,
            )
        finally:
            template.stop()
        found[size] = template.state_dir
    return found


def change_to_ack(folder: Path, count: int, size: int, template: Path, repeat: int) -> None:
    run = folder / f"f{count}-r{size}"
    run.mkdir()
    forwarders = [Forwarder(run, f"fw{i}") for i in range(count)]
    try:
        started = time.perf_counter()
        for forwarder in forwarders:
            shutil.copytree(template, forwarder.state_dir)
            forwarder.start()
        for forwarder in forwarders:
            forwarder.wait_up()
        up = time.perf_counter() - started
        rss = sum(f.rss_mb() for f in forwarders)
        names = [f.name for f in forwarders]
        rules = [bench_rule(i) for i in range(size)]
        with cps(run, forwarders, rules) as (steering, rest, metrics):
            reports = Reports(rest)
            reports.nst([ingress_id(i) for i in range(count)])
            reports.cst(600)
            synced = wait(steering, names, SCI3, 1800)
            results = steering.push(timeout=60)
            written = sum(r.status.entries_written for r in results.results)
            samples: list[float] = []
            unchanged = 0
            previous: str | None = SCI3
            choices: list[str] = []
            ingresses = [ingress_id(i) for i in range(count)]
            for turn in range(repeat):
                gas = 0 if turn % 2 == 0 else 600
                # The C-NMA's periodic report: an NST entry older than the CST entry by more
                # than time-sync-window (30 s, service-metrics-op 6.2.2) is not combined with
                # it, so without it every candidate drops out once the run is 30 s old.
                reports.nst(ingresses)
                started = time.perf_counter()
                reports.cst(gas)
                # what the C-PS now selects (it may keep its choice, e.g. a flagged entry)
                (outcome,) = metrics.steering_outcomes([(CsId("ARS"), ForwarderId(ingress_id(0)))])
                expected = outcome.csci_id
                choices.append(f"GAS {gas}: {expected or outcome.result.value}")
                if expected == previous:
                    unchanged += 1
                    continue
                wait(steering, names, expected, 600)
                samples.append(time.perf_counter() - started)
                previous = expected
                time.sleep(0.2)
            if not samples:
                samples = [float("nan")]
        print(
            f"{count:>4} forwarders x {size:>6} rules: CST change -> all acknowledged "
            f"p50 {statistics.median(samples) * 1000:8.1f} ms  max {max(samples) * 1000:8.1f} ms"
            f"  (n={len(samples)}, {unchanged} reports kept the choice; first sync incl. "
            f"reconciliation of {count}x{size} rules "
            f"{synced:.1f} s, {written} entries written; forwarders up {up:.0f} s, "
            f"RSS {rss / 1024:.1f} GB, failed {len(results.failed)})",
            flush=True,
        )
        if unchanged:
            print(f"      SCI-3's GAS per report and the choice: {'; '.join(choices)}", flush=True)
    finally:
        for forwarder in forwarders:
            forwarder.stop()
        shutil.rmtree(run, ignore_errors=True)


def edit_rate(folder: Path, big: int, seconds: float) -> None:
    forwarder = Forwarder(folder, f"big-{big}")
    forwarder.start("--clean")
    try:
        forwarder.wait_up(300, "--clean")
        took = fill(forwarder, big)
        print(
            f"one forwarder: {big} rules installed in {took:.0f} s "
            f"(RSS {forwarder.rss_mb():.0f} MB)",
            flush=True,
        )
        session = forwarder.session()
        try:
            session.read()  # connect
            for label, width in (("1 entry", 1), ("64 entries", 64)):
                done, turn, started = 0, 0, time.perf_counter()
                while time.perf_counter() - started < seconds:
                    turn += 1
                    csci = SCI3 if turn % 2 else SCI1
                    puts = tuple(
                        rule_entry({**bench_rule(i % big), "csci-id": csci})
                        for i in range(turn * 64, turn * 64 + width)
                    )
                    session.write(Changes(puts))
                    done += 1
                elapsed = time.perf_counter() - started
                print(
                    f"  push of {label:>10} (lock, edit-config, confirmed commit, commit, "
                    f"unlock): {done / elapsed:7.1f} pushes/s, {width * done / elapsed:8.0f} "
                    f"entries/s at {big} rules",
                    flush=True,
                )
            edits, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds:
                edits += 1
                puts = (
                    rule_entry({**bench_rule(edits % big), "csci-id": SCI3 if edits % 2 else SCI1}),
                )
                session.write(Changes(puts), WriteSettings(lock=False))
            elapsed = time.perf_counter() - started
            print(
                f"  push of     1 entry without lock (edit-config, confirmed commit, commit): "
                f"{edits / elapsed:7.1f} pushes/s",
                flush=True,
            )
            edits, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds:
                edits += 1
                csci = SCI3 if edits % 2 else SCI1
                session.edit_config(
                    Changes((rule_entry({**bench_rule(edits % big), "csci-id": csci}),))
                )
            elapsed = time.perf_counter() - started
            session.discard_changes()
            print(
                f"  edit-config of 1 entry to the candidate (no commit): "
                f"{edits / elapsed:7.1f} edit-config/s",
                flush=True,
            )
            print(f"  get-config of all {big} rules: ", end="", flush=True)
            started = time.perf_counter()
            entries = session.read()
            print(f"{time.perf_counter() - started:.2f} s ({len(entries)} entries)", flush=True)
        finally:
            session.close()
    finally:
        forwarder.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forwarders", type=int, nargs="*", default=[10, 50])
    parser.add_argument("--rules", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--big", type=int, default=100_000, help="0: skip part 2")
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-steering-") as name:
        folder = Path(name)
        print("CST change to every affected forwarder's acknowledged commit", flush=True)
        found = templates(folder, sorted(set(args.rules)))
        for count in args.forwarders:
            for size in args.rules:
                change_to_ack(folder, count, size, found[size], args.repeat)
        if args.big:
            print("edit-config on one forwarder", flush=True)
            edit_rate(folder, args.big, args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
