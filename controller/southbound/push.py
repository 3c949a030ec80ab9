"""One worker per forwarder that brings the forwarder to its intended steering state.

A :class:`ForwarderWorker` owns the forwarder's persistent session (a :class:`SteeringSession`)
and a thread. When woken (a change of the intended state, a fan-out) or when due (a retry after
a failure, the periodic reconciliation), it writes the difference between the intended state
and what the forwarder is known to hold; after a (re)connection, a failure, or every
``reconcile_interval`` it first reads the forwarder's configuration (get-config) so that the
difference also repairs a forwarder that restarted empty or holds entries not intended
(service-metrics-op 6.2.5, 8; agent draft 9.1 MSG-10). A failure backs off exponentially in
that worker only. :func:`push_all` wakes every worker and returns a result per forwarder
(as nornir's ``AggregatedResult`` does).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol

from controller.errors import ErrorItem, ErrorType
from controller.observability.metrics import PUSH_FAILURES, PUSH_LATENCY
from controller.southbound.errors import SouthboundError
from controller.southbound.intended import ForwarderName, IntendedState
from controller.southbound.session import WriteSettings, Written
from controller.southbound.steering import Changes, Entry, EntryKey, applied, batches, diff

LOG = logging.getLogger("catsctl.southbound")


class SteeringSession(Protocol):
    """The forwarder's configuration as the worker needs it (ConfigSession over NETCONF)."""

    connections: int

    def read(self) -> dict[EntryKey, Entry]:
        """The steering entries in the forwarder's running configuration."""
        ...

    def write(self, changes: Changes, settings: WriteSettings = ...) -> Written:
        """Commit ``changes`` on the forwarder."""
        ...

    def close(self) -> None:
        """Close the session."""
        ...


@dataclass(frozen=True, slots=True)
class PushSettings:
    """Reconciliation period and retry backoff (seconds), and how changes are written."""

    reconcile_interval: float = 30.0
    backoff: float = 0.2
    max_backoff: float = 10.0
    write: WriteSettings = field(default_factory=WriteSettings)


@dataclass(frozen=True, slots=True)
class ForwarderStatus:
    """What the C-PS knows of its session to one forwarder (operational state)."""

    connected: bool = False
    in_sync: bool = False
    acked: int = 0  # the intended generation the forwarder holds
    pending: int = 0
    last_push: float | None = None
    last_reconcile: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    attempts: int = 0  # completed attempts (succeeded or failed)
    pushes: int = 0
    edits: int = 0
    entries_written: int = 0
    failures: int = 0
    reconnects: int = 0
    repairs: int = 0


@dataclass(frozen=True, slots=True)
class Pushed:
    """One write of a forwarder's steering configuration that changed something or failed
    (ietf-cats-steering ``forwarder-push``): its outcome, size and duration (ms)."""

    forwarder: ForwarderName
    written: Written | None
    duration_ms: float
    error: str | None = None


def _no_report(pushed: Pushed) -> None:
    """Nobody listens to the pushes."""


def standalone() -> int | None:
    """The leadership of a C-PS that is not in a cluster: it always pushes, with no term."""
    return 0


#: Who pushes: None while another replica of the cluster leads, else the term to write with
#: every push (0: no cluster, no term; docs/cluster.md).
Leader = Callable[[], int | None]


class ForwarderWorker:
    """The thread that pushes one forwarder's intended state to it; ``on_pushed`` hears of
    every write that changed something or failed."""

    def __init__(  # noqa: PLR0913 - the worker's seams
        self,
        name: ForwarderName,
        session: SteeringSession,
        intended: IntendedState,
        settings: PushSettings,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_pushed: Callable[[Pushed], None] = _no_report,
        leader: Leader = standalone,
    ) -> None:
        self.name = name
        self._leader = leader
        self._fenced = 0  # the term this forwarder was last written with
        self._on_pushed = on_pushed
        self._session = session
        self._intended = intended
        self._settings = settings
        self._clock = clock
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._status = ForwarderStatus()
        self._actual: dict[EntryKey, Entry] | None = None  # None: read before writing
        self._connections = 0
        self._reconcile_at = 0.0
        self._retry_at = 0.0
        self._delay = 0.0
        self._thread: threading.Thread | None = None

    @property
    def status(self) -> ForwarderStatus:
        """The current status (a value)."""
        with self._changed:
            return self._status

    def start(self) -> None:
        """Start the thread; it connects and reconciles at once."""
        self._thread = threading.Thread(target=self._run, name=f"steer-{self.name}", daemon=True)
        self._thread.start()

    def wake(self, *, reconcile: bool = False) -> None:
        """Push now (and read the forwarder's configuration first when ``reconcile``)."""
        if reconcile:
            self._reconcile_at = 0.0
        self._retry_at = 0.0
        self._wake.set()

    def stop(self) -> None:
        """Stop the thread and close the session."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._session.close()

    def wait(self, generation: int, attempts: int, deadline: float) -> ForwarderStatus:
        """Block until the forwarder holds ``generation``, an attempt after ``attempts``
        failed, or the monotonic ``deadline`` passed; the status then."""
        with self._changed:
            while True:
                status = self._status
                done = status.acked >= generation and status.in_sync
                failed = status.attempts > attempts and status.last_error is not None
                left = deadline - time.monotonic()
                if done or failed or left <= 0:
                    return status
                self._changed.wait(min(left, 0.5))

    def _run(self) -> None:
        while not self._stopping.is_set():
            now = self._clock()
            due = self._retry_at if self._delay else self._reconcile_at
            self._wake.wait(max(0.0, due - now))
            self._wake.clear()
            if self._stopping.is_set():
                return
            if self._delay and self._clock() < self._retry_at:
                continue
            self.step()

    def step(self) -> ForwarderStatus:
        """One attempt: read when needed, write the difference; the status after it."""
        now = self._clock()
        term = self._leader()
        if term is None:  # another replica leads: it pushes; read afresh when this one leads
            self._actual, self._fenced = None, 0
            self._reconcile_at = now + self._settings.reconcile_interval
            return self.status
        write = replace(self._settings.write, term=term)
        generation, intended = self._intended.snapshot(self.name)
        status = self.status
        writing = 0.0  # when the write began (a failure before it is no push)
        try:
            repaired, reconciled = 0, False
            fenced: Written | None = None
            if term and term != self._fenced:  # a new leader: its term first, before a read
                writing = time.perf_counter()
                fenced = self._session.write(Changes(), write)
                self._fenced = term
            if (
                self._actual is None
                or self._session.connections != self._connections
                or now >= self._reconcile_at
            ):
                self._actual = self._session.read()
                reconciled = True
                self._reconcile_at = now + self._settings.reconcile_interval
                repaired = len(diff(intended, self._actual))
            writing = writing or time.perf_counter()
            written = self._write(diff(intended, self._actual), write) or fenced
            if written:
                took = (time.perf_counter() - writing) * 1000
                self._on_pushed(Pushed(self.name, written, took))
            connections = self._session.connections
            status = replace(
                status,
                connected=True,
                in_sync=True,
                acked=generation,
                pending=0,
                last_push=time.time() if written else status.last_push,
                last_reconcile=time.time() if reconciled else status.last_reconcile,
                pushes=status.pushes + (1 if written else 0),
                edits=status.edits + (written.edits if written else 0),
                entries_written=status.entries_written + (written.entries if written else 0),
                reconnects=max(0, connections - 1),
                repairs=status.repairs + (repaired if reconciled and status.attempts else 0),
                attempts=status.attempts + 1,
                last_error=None,
            )
            self._connections = connections
            self._delay = 0.0
        except SouthboundError as exc:
            PUSH_FAILURES.labels(self.name).inc()  # as the state's failures: connect, read, write
            self._actual = None  # unknown what the forwarder holds now: read it next time
            settings = self._settings
            self._delay = min(max(self._delay * 2, settings.backoff), settings.max_backoff)
            self._retry_at = self._clock() + self._delay
            message = "; ".join(item.message for item in exc.items) or type(exc).__name__
            if writing:
                took = (time.perf_counter() - writing) * 1000
                self._on_pushed(Pushed(self.name, None, took, message))
            LOG.warning("steering %s failed (retry in %.1f s): %s", self.name, self._delay, message)
            status = replace(
                status,
                connected=False,
                in_sync=False,
                pending=len(intended),
                last_error=message,
                last_error_at=time.time(),
                attempts=status.attempts + 1,
                failures=status.failures + 1,
            )
        with self._changed:
            self._status = status
            self._changed.notify_all()
        return status

    def _write(self, changes: Changes, write: WriteSettings) -> Written | None:
        """Commit ``changes`` in parts of at most ``commit_size`` entries, keeping what the
        forwarder holds current after each part; the sum of what was written."""
        size = write.commit_size
        parts = batches(changes, size) if changes else []
        edits = entries = 0
        confirmed = False
        for part in parts:
            started = time.perf_counter()
            written = self._session.write(part, write)
            PUSH_LATENCY.labels(self.name).observe(time.perf_counter() - started)
            self._actual = applied(self._actual or {}, part)
            edits, entries = edits + written.edits, entries + written.entries
            confirmed = written.confirmed
        return Written(edits, entries, confirmed=confirmed) if parts else None


# -- fan-out results, one per target ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PushResult:
    """The outcome of bringing one forwarder to its intended state."""

    forwarder: ForwarderName
    status: ForwarderStatus
    error: SouthboundError | None = None

    @property
    def failed(self) -> bool:
        """Whether the forwarder did not acknowledge its intended state."""
        return self.error is not None


@dataclass(frozen=True, slots=True)
class PushResults:
    """A result per forwarder, in the order given (nornir AggregatedResult)."""

    results: tuple[PushResult, ...]

    @property
    def failed(self) -> tuple[PushResult, ...]:
        """The forwarders that failed."""
        return tuple(r for r in self.results if r.failed)

    @property
    def succeeded(self) -> tuple[PushResult, ...]:
        """The forwarders that hold their intended state."""
        return tuple(r for r in self.results if not r.failed)

    def __getitem__(self, forwarder: ForwarderName) -> PushResult:
        for result in self.results:
            if result.forwarder == forwarder:
                return result
        raise KeyError(forwarder)

    def raise_on_error(self) -> None:
        """Raise one SouthboundError holding the items of every failed forwarder."""
        items: list[ErrorItem] = [i for r in self.failed if r.error for i in r.error.items]
        if items:
            raise SouthboundError(*items)


def _error(name: ForwarderName, status: ForwarderStatus) -> SouthboundError:
    message = status.last_error or "did not acknowledge its intended state in time"
    return SouthboundError(
        ErrorItem(ErrorType.APPLICATION, "operation-failed", f"forwarder {name}: {message}")
    )


def push_all(
    workers: Iterable[ForwarderWorker], intended: IntendedState, timeout: float
) -> PushResults:
    """Wake every worker and wait (up to ``timeout`` s in all) until each forwarder holds its
    current intended state or its attempt failed; a failed forwarder keeps retrying in its own
    worker and holds nobody up."""
    chosen = list(workers)
    targets = [(w, intended.generation(w.name), w.status.attempts) for w in chosen]
    for worker in chosen:
        worker.wake()
    deadline = time.monotonic() + timeout
    results: list[PushResult] = []
    for worker, generation, attempts in targets:
        status = worker.wait(generation, attempts, deadline)
        ok = status.acked >= generation and status.in_sync
        results.append(PushResult(worker.name, status, None if ok else _error(worker.name, status)))
    return PushResults(tuple(results))


def format_time(seconds: float | None) -> str | None:
    """A wall-clock time as yang:date-and-time."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
