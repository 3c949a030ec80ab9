"""``catsctl serve --restconf-workers N``: RESTCONF served by N worker processes.

The core binds the RESTCONF socket and starts N processes that inherit it and accept on it
(:mod:`controller.workers.process`); each reads its requests and hands them to the core's
:class:`~controller.workers.gateway.Gateway`. A worker that exits while the server runs is
replaced. Started and stopped as :class:`~controller.restconf.server.RestconfServer` is.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from typing import IO

from controller.datastore.core import Core
from controller.errors import CatsError, ErrorItem, ErrorType, listen_error
from controller.observability.logs import JsonFormatter
from controller.restconf.resources import ServerInfo
from controller.restconf.server import ListenSettings
from controller.restconf.wsgi import RestconfApp
from controller.workers.gateway import Gateway
from controller.workers.process import Spec

LOG = logging.getLogger(__name__)
#: How long a worker may take to compile the schema and serve.
START_TIMEOUT_S = 120.0
#: How long a stopping worker may take to finish its requests before it is killed.
STOP_TIMEOUT_S = 10.0
#: Before a worker that exited is replaced (one that fails at once does not spin).
RESTART_DELAY_S = 1.0
BACKLOG = 1024


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """What the workers need of the server besides the listening settings."""

    count: int
    yang_dirs: tuple[str, ...]
    features: tuple[tuple[str, str], ...]
    info: ServerInfo


@dataclass(slots=True)
class _Worker:
    process: subprocess.Popen[bytes]
    ready: threading.Event


class WorkerPool:
    """N worker processes serving RESTCONF on the socket the core binds."""

    def __init__(
        self, app: RestconfApp, core: Core, listen: ListenSettings, settings: WorkerSettings
    ) -> None:
        self._app = app
        self._core = core
        self._listen = listen
        self._settings = settings
        self._socket: socket.socket | None = None
        self._gateway: Gateway | None = None
        self._workers: dict[int, _Worker] = {}  # by process id
        self._guard = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> None:
        """Bind, start the workers and wait until each serves.

        Raises:
            CatsError: the address cannot be bound, or a worker did not start.
        """
        listen = self._listen
        family = socket.AF_INET6 if ":" in listen.address else socket.AF_INET
        try:
            self._socket = socket.create_server(
                (listen.address, listen.port), family=family, backlog=BACKLOG
            )
        except OSError as exc:
            raise listen_error(
                "RESTCONF", listen.address, listen.port, exc, "--restconf-port"
            ) from None
        # accepted connections inherit it: a reply's head and body go out at once (Nagle's
        # algorithm would hold the body for the client's delayed ACK, 40 ms)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._gateway = Gateway(self._app, self._core, self._ready)
        started = [self._spawn() for _ in range(self._settings.count)]
        for worker in started:
            if not self._await(worker):
                self.stop()
                code = worker.process.poll()
                message = f"a RESTCONF worker process did not start (exit status {code})"
                raise CatsError(ErrorItem(ErrorType.APPLICATION, "operation-failed", message))
        LOG.info("RESTCONF listening at %s, %d worker processes", listen.base_url, len(started))

    def stop(self) -> None:
        """Stop the workers (each finishes its requests) and the gateway."""
        self._stopping.set()
        with self._guard:
            workers = list(self._workers.values())
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.process.terminate()
        for worker in workers:
            try:
                worker.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                LOG.warning("RESTCONF worker %d did not stop; killed", worker.process.pid)
                worker.process.kill()
                worker.process.wait()
            _close(worker.process.stdin)
        if self._gateway is not None:
            self._gateway.close()
        if self._socket is not None:
            self._socket.close()

    def pids(self) -> list[int]:
        """The worker processes' ids."""
        with self._guard:
            return list(self._workers)

    def _spawn(self) -> _Worker:
        assert self._socket is not None
        assert self._gateway is not None
        spec = Spec(
            address=self._gateway.address,
            authkey=self._gateway.authkey.hex(),
            fd=self._socket.fileno(),
            yang_dirs=self._settings.yang_dirs,
            features=self._settings.features,
            yang_library_version=self._settings.info.yang_library_version,
            schema_id=self._settings.info.schema_id,
            started=self._settings.info.started.isoformat(),
            listen=asdict(self._listen),
            log_format=_log_format(),
            log_levels=_log_levels(),
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "controller.workers.process"],
            stdin=subprocess.PIPE,
            pass_fds=(self._socket.fileno(),),
        )
        assert process.stdin is not None
        process.stdin.write(spec.to_json().encode() + b"\n")  # the key: never in argv or env
        process.stdin.flush()  # left open: its end tells the worker the core is gone
        worker = _Worker(process, threading.Event())
        with self._guard:
            self._workers[process.pid] = worker
        name = f"restconf-worker-{process.pid}"
        threading.Thread(target=self._watch, args=(worker,), name=name, daemon=True).start()
        return worker

    def _ready(self, pid: int) -> None:
        with self._guard:
            worker = self._workers.get(pid)
        if worker is not None:
            LOG.info("RESTCONF worker %d serves", pid)
            worker.ready.set()

    def _await(self, worker: _Worker) -> bool:
        """Whether the worker serves within START_TIMEOUT_S (False once it has exited)."""
        waited = 0.0
        while waited < START_TIMEOUT_S:
            if worker.ready.wait(0.1):
                return True
            if worker.process.poll() is not None:
                return False
            waited += 0.1
        return False

    def _watch(self, worker: _Worker) -> None:
        """Replace the worker when it exits while the server runs."""
        code = worker.process.wait()
        with self._guard:
            self._workers.pop(worker.process.pid, None)
        _close(worker.process.stdin)
        if self._stopping.is_set():
            return
        LOG.warning(
            "RESTCONF worker %d exited with status %s; starting another", worker.process.pid, code
        )
        if not self._stopping.wait(RESTART_DELAY_S):
            self._spawn()


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _log_format() -> str:
    """The format of this process's log (a worker logs alike, to the same standard error)."""
    handlers = logging.getLogger().handlers
    if any(isinstance(handler.formatter, JsonFormatter) for handler in handlers):
        return "json"
    return "text"


def _log_levels() -> tuple[str, ...]:
    """The root logger's level, as ``--log-level`` gives it."""
    return (logging.getLevelName(logging.getLogger().getEffectiveLevel()),)
