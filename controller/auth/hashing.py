"""The bounded pool of password-check worker processes.

A default-rounds ``$6$`` check holds a CPU for about a second, and the Python implementation
holds the interpreter's lock all that time; on a request thread, a few guessers would stall
every other client. So checks run in ``workers`` separate processes (:mod:`.hasher`, at a
lower CPU priority), each fed by one thread of this process that only waits on a pipe. At most
``queue`` checks wait for a worker; past that a check is refused at once
(:class:`PoolBusyError`), so a flood of attempts holds neither threads nor memory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

LOG = logging.getLogger("catsctl.auth")
COMMAND = (sys.executable, "-m", "controller.auth.hasher")
WAIT_S = 120.0  # a check not answered by then fails (a worker that hangs)


class PoolBusyError(Exception):
    """Every worker is busy and the queue of waiting checks is full."""


@dataclass(slots=True)
class _Job:
    password: str
    crypt_hash: str
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


_STOP = _Job("", "")


class HashPool:
    """``workers`` checking processes behind a queue of at most ``queue_size`` checks."""

    def __init__(self, workers: int, queue_size: int, command: Sequence[str] = COMMAND) -> None:
        self._jobs: queue.Queue[_Job] = queue.Queue(maxsize=max(1, queue_size))
        self._command = list(command)
        self._processes: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._serve, name=f"password-check-{n}", daemon=True)
            for n in range(max(1, workers))
        ]
        for thread in self._threads:
            thread.start()

    def check(self, password: str, crypt_hash: str) -> bool:
        """Whether ``password`` matches ``crypt_hash``, checked by a worker process.

        Raises:
            PoolBusyError: the queue is full; nothing was checked.
        """
        job = _Job(password, crypt_hash)
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            raise PoolBusyError from None
        if not job.done.wait(WAIT_S):
            LOG.error("auth: a password check took over %.0f s; counted as failed", WAIT_S)
            return False
        return job.ok

    def close(self) -> None:
        """Stop the threads and the worker processes."""
        for _ in self._threads:
            with contextlib.suppress(queue.Full):
                self._jobs.put(_STOP, timeout=1)
        with self._lock:
            processes, self._processes = self._processes, []
        for process in processes:
            _end(process)

    def _spawn(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True
        )
        with self._lock:
            self._processes.append(process)
        return process

    def _serve(self) -> None:
        process: subprocess.Popen[bytes] | None = None
        while True:
            job = self._jobs.get()
            if job is _STOP:
                break
            for _attempt in range(2):  # a worker that died is replaced once per check
                try:
                    if process is None or process.poll() is not None:
                        process = self._spawn()
                    job.ok = _ask(process, job)
                    break
                except OSError as exc:
                    LOG.warning("auth: a password-check worker failed: %s", exc)
                    if process is not None:
                        _end(process)
                    process = None
            job.done.set()
        if process is not None:
            _end(process)


def _ask(process: subprocess.Popen[bytes], job: _Job) -> bool:
    assert process.stdin is not None
    assert process.stdout is not None
    request = json.dumps({"password": job.password, "hash": job.crypt_hash})
    process.stdin.write(request.encode(errors="surrogatepass") + b"\n")
    process.stdin.flush()
    answer = process.stdout.readline()
    if not answer:
        raise OSError("the worker ended")
    return answer.strip() == b"1"


def _end(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
