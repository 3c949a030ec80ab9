"""Large NETCONF transactions of whole datastores, and what a reader sees while one is in flight.

A ``<commit>`` of a candidate of many new ``bench-list`` entries and a ``<copy-config>`` of a
large datastore (RFC 6241 8.3.4.1, 7.3) are worked on a copy of the datastore by the server
(``controller.datastore.shadow``), so a client reading one entry meanwhile keeps getting
answers, from the committed state. :class:`InFlight` runs one such transaction on its own
NETCONF session while a reader repeats its read, and counts the reader's answers that came back
while the transaction was in flight (sent after the server logged that it started, answered
before the transaction's reply). Used by ``tests/functional/test_large_commits.py`` and by
``python -m tools.bench.attacks`` (the ``commit`` and ``copy-config`` rows).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from tools.bench import common
from tools.bench.attackers import Latencies, NetconfSession

BENCH_NS = "urn:example:bench-list"
STARTED = "a large edit of about"  # what the server logs as a large transaction starts
TARGETS = 300  # the seeds' bench-list targets: t0 .. t299


def entries_config(first: int, count: int, target: str | None = None) -> str:
    """``<bench>`` with ``count`` new entries from ``first`` (each its own target, or
    ``target``), for an ``<edit-config>``'s ``<config>``."""
    bench = etree.Element(f"{{{BENCH_NS}}}bench", nsmap={None: BENCH_NS})
    for key in range(first, first + count):
        entry = etree.SubElement(bench, f"{{{BENCH_NS}}}entry")
        for name, value in (
            ("id", str(key)),
            ("name", f"big{key}"),
            ("addr", f"172.{(key >> 16) & 255}.{(key >> 8) & 255}.{key & 255}"),
            ("target", target or f"t{key % TARGETS}"),
            ("weight", "1"),
        ):
            etree.SubElement(entry, f"{{{BENCH_NS}}}{name}").text = value
    return str(etree.tostring(bench, encoding="unicode"))


def edit_candidate(config: str) -> str:
    """An ``<edit-config>`` of the candidate merging ``config``."""
    return f"<edit-config><target><candidate/></target><config>{config}</config></edit-config>"


def copy_config(source: str, target: str) -> str:
    """A ``<copy-config>`` of one datastore to another (RFC 6241 7.3)."""
    return f"<copy-config><target><{target}/></target><source><{source}/></source></copy-config>"


def ok(reply: bytes) -> bool:
    """Whether a NETCONF reply is ``<ok/>``."""
    return b"<ok/>" in reply and b"rpc-error" not in reply


@dataclass
class InFlight:
    """What a reader got while one large transaction was in flight."""

    reply: bytes = b""
    seconds: float = 0.0
    seen: list[bool] = field(default_factory=list)  # per answer in flight: the old state?
    latencies: Latencies = field(default_factory=Latencies)

    @property
    def in_flight(self) -> int:
        """Answers sent and received while the transaction was in flight."""
        return len(self.seen)

    @property
    def old(self) -> int:
        """Of which read the state as it was before the transaction (the others came after
        it was made current, before its reply reached the client)."""
        return sum(self.seen)


def run_in_flight(
    session: NetconfSession,
    body: str,
    log: Callable[[], str] | None,
    read: Callable[[], bool],
    timeout: float = 3600.0,
) -> InFlight:
    """Send ``body`` on ``session`` (one large transaction) and, once ``log`` shows that it
    started (None: at once), ``read`` until its reply is back (``read``: True when it saw the
    old state)."""
    found = InFlight()
    logged = log or (lambda: STARTED)
    before = 0 if log is None else logged().count(STARTED)
    done = threading.Event()

    def transaction() -> None:
        began = time.monotonic()
        try:
            found.reply = session.rpc(body)
        finally:
            found.seconds = time.monotonic() - began
            done.set()

    writer = threading.Thread(target=transaction, daemon=True)
    writer.start()
    deadline = time.monotonic() + timeout
    while logged().count(STARTED) == before and not done.is_set():
        assert time.monotonic() < deadline, "the large transaction did not start"
        time.sleep(0.05)
    while not done.is_set():
        began = time.perf_counter()
        old = read()
        # every read sent in flight is timed, also one held until the transaction ended
        found.latencies.values.append((time.perf_counter() - began) * 1000)
        if done.is_set():  # answered after the reply: not in flight
            break
        found.seen.append(old)
        time.sleep(0.02)
    writer.join(timeout)
    return found


def measure(
    session: NetconfSession, setup: list[str], body: str, read: Callable[[], bool], pid: int
) -> tuple[InFlight, float]:
    """Run the ``setup`` RPCs, then ``body`` in flight beside ``read``; what the reader got,
    and the server's CPU seconds for ``body``."""
    session.channel.settimeout(3600)  # a 100k-entry edit takes minutes on a loaded machine
    for step in setup:
        reply = session.rpc(step)
        assert ok(reply), reply[:2000]
    before = common.cpu_seconds(pid)
    found = run_in_flight(session, body, None, read)
    return found, common.cpu_seconds(pid) - before


def fill(first: int, count: int) -> str:
    """An ``<edit-config>`` of the candidate adding ``count`` new entries from ``first``."""
    return edit_candidate(entries_config(first, count))


def row(
    netconf: NetconfSession, read: Callable[[], str | None], rpcs: list[str], pid: int
) -> tuple[Latencies, None, str]:
    """A bench row: the last of ``rpcs`` (after the others) in flight on ``netconf`` while a
    legitimate client repeats ``read`` (its failure, None when served); the client's
    latencies and failures, no NETCONF reader's, and what the transaction took."""
    failures: Counter[str] = Counter()

    def legit() -> bool:
        try:
            failure = read()
        except Exception as exc:  # counted: the figure is what failed (a read timed out)
            failure = type(exc).__name__
        if failure is not None:
            failures[failure] += 1
        return True

    legit()  # logged in before
    found, cpu = measure(netconf, rpcs[:-1], rpcs[-1], legit, pid)
    found.latencies.failures = failures
    outcome = "ok" if ok(found.reply) else "FAILED"
    return (
        found.latencies,
        None,
        (
            f"{outcome} in {found.seconds:.1f} s ({cpu:.1f} s server CPU); "
            f"{found.in_flight} reads answered in flight"
        ),
    )
