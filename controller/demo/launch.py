"""Start ``catsctl`` processes on loopback and wait on conditions, for the demo and the tests.

Each child runs ``python -m controller.cli SUBCOMMAND ...`` in its own session (a process group
of its own), logs to a file, and is stopped with SIGTERM to its group, then SIGKILL. A
:class:`Launcher` owns its children: leaving its ``with`` block stops every one of them, in
reverse order of start, also on an exception or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from controller.observability.ports import DEFAULT_PORTS

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
POLL_S = 0.05
#: The line of controller.observability.listener that names the management listener.
MANAGEMENT = re.compile(r"management: /metrics, /healthz and /readyz at (http://[0-9.:]+)")


class WaitTimeout(Exception):  # noqa: N818 - reads as what happened
    """A condition did not show within its timeout; ``seen`` is the last observation."""

    def __init__(self, what: str, timeout: float, seen: object = None) -> None:
        super().__init__(f"timed out after {timeout:.0f} s waiting for {what} (last seen: {seen})")
        self.what = what
        self.seen = seen


EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10000
PORT_TRIES = 200
PORT_TAKEN = ("Address already in use", "Errno 98")  # how a child says it could not listen


def _below_ephemeral() -> range:
    """Ports below the kernel's ephemeral range (from 10000), or none if that range is small."""
    try:
        low = int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    return range(LOWEST_PORT, low) if low - LOWEST_PORT >= 1000 else range(0)  # noqa: PLR2004


def free_port(address: str = "127.0.0.1") -> int:
    """A port nobody listens on right now, below the kernel's ephemeral range when it can be.

    A port the kernel hands out itself (bind to port 0) comes from the same range as the
    source ports of outgoing connections, so on a busy machine a client elsewhere could take it
    before the child that is to listen on it binds it; a random free port below that range is
    left alone by the kernel. A port is never chosen twice in one process.
    """
    ports = _below_ephemeral()
    for _ in range(PORT_TRIES if ports else 0):
        port = random.choice(ports)
        with _HANDED_OUT_GUARD:
            if port in _HANDED_OUT:
                continue
            with socket.socket() as probe:
                try:
                    probe.bind((address, port))
                except OSError:
                    continue
            _HANDED_OUT.add(port)
            return port
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


#: The ports :func:`free_port` chose in this process. A bed chooses all its ports before its
#: children bind them: without this, two of its ~40 random choices were the same port in
#: about one start in fifty (a service instance and a C-SMA's NETCONF server, 2026-12-03).
_HANDED_OUT: set[int] = set()
_HANDED_OUT_GUARD = threading.Lock()


def port_taken(failure: BaseException) -> bool:
    """Whether a start-up failure is a child that found its port taken (worth a new start)."""
    return any(text in str(failure) for text in PORT_TAKEN)


def listening(port: int, address: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``address:port``."""
    with contextlib.suppress(OSError), socket.create_connection((address, port), 0.5):
        return True
    return False


def wait_until(
    what: str,
    probe: Callable[[], T | None],
    *,
    timeout: float,
    seen: Callable[[], object] | None = None,
) -> T:
    """Poll ``probe`` until it returns something truthy; :class:`WaitTimeout` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise WaitTimeout(what, timeout, seen() if seen is not None else found)
        time.sleep(POLL_S)


@dataclass
class Child:
    """A running ``catsctl`` sub-command and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    #: The ``catsctl`` sub-command (``serve``, ``sci``, ...).
    kind: str = ""

    def management_url(self) -> str | None:
        """Where its /metrics, /healthz and /readyz listen, as its log announces it (an
        ephemeral port in the demo); None until it has."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        found = MANAGEMENT.search(text)
        return found.group(1) if found else None

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def signal(self, signum: signal.Signals) -> None:
        """Send a signal to the process (not its group: e.g. SIGHUP to reload)."""
        self.process.send_signal(signum)

    def tail(self, lines: int = 15) -> str:
        """The last lines of its log."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def terminate(self) -> None:
        """SIGTERM to its process group."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)

    def reap(self, timeout: float) -> None:
        """Wait for it to exit; SIGKILL its group after ``timeout`` seconds."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@dataclass
class Launcher:
    """Starts children in ``folder`` (logs there) and stops them all when its block ends."""

    folder: Path
    stop_timeout: float = 5.0
    children: list[Child] = field(default_factory=list)

    def start(self, name: str, arguments: Sequence[str]) -> Child:
        """``python -m controller.cli ARGUMENTS`` as ``name``, logging to ``folder/name.log``."""
        log = self.folder / f"{name}.log"
        command = [sys.executable, "-m", "controller.cli", *arguments]
        if arguments and arguments[0] in DEFAULT_PORTS and "--metrics-address" not in arguments:
            command += ["--metrics-address", "127.0.0.1:0"]  # several of a kind on one host
        with log.open("ab") as sink:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                start_new_session=True,
            )
        child = Child(name, process, log, arguments[0] if arguments else "")
        self.children.append(child)
        return child

    def run(self, name: str, arguments: Sequence[str], timeout: float) -> tuple[int, str]:
        """``python -m controller.cli ARGUMENTS`` to its end: its exit status and its log.
        Stopped (and :class:`WaitTimeout`) after ``timeout`` seconds; once it has ended it is
        no longer a child (:meth:`check_alive` does not report it)."""
        child = self.start(name, arguments)
        try:
            code = child.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(child)
            raise WaitTimeout(f"{name} to finish", timeout, child.tail()) from None
        finally:
            if not child.alive():
                self.children.remove(child)
        return code, child.log.read_text(errors="replace")

    def stop(self, child: Child) -> None:
        """Stop one child now (it stays stopped; the block's end skips it)."""
        child.terminate()
        child.reap(self.stop_timeout)

    def close(self) -> None:
        """SIGTERM every child (newest first), then reap them all."""
        for child in reversed(self.children):
            child.terminate()
        for child in reversed(self.children):
            child.reap(self.stop_timeout)
        self.children.clear()

    def __enter__(self) -> Launcher:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def check_alive(self) -> None:
        """Raise naming the first child that exited, with its log's tail."""
        for child in self.children:
            if not child.alive():
                code = child.process.returncode
                raise RuntimeError(f"{child.name} exited ({code}):\n{child.tail()}")
