"""The management listener of every long-running process: ``/metrics``, ``/healthz``, ``/readyz``.

``/healthz`` answers 200 while the process runs. ``/readyz`` answers 200 when every readiness
check holds (for ``catsctl serve``: the datastore is loaded, the northbounds listen, the
southbound sessions are up) and 503 with the failing checks otherwise, so an orchestrator sends
no traffic to a server that is still loading 100k entries. ``/metrics`` is the Prometheus text
exposition of the process's registry. It listens on loopback unless told otherwise
(``--metrics-address``): the metrics name forwarders and operations, nothing secret, but they
are no business of the network.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Info, generate_latest

from controller import __version__
from controller.observability.ports import DEFAULT_PORTS

LOG = logging.getLogger("catsctl.management")
#: ``cats_build_info``: here, with the listener, so that every process that serves /metrics
#: has it, whatever else it imports.
BUILD = Info("cats_build", "The running version of cats-controller")
BUILD.info({"version": __version__})


class Readiness:
    """Named checks; ready when all hold. A check is a flag set once or a callable."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checks: dict[str, Callable[[], bool]] = {}
        self._why: dict[str, Callable[[], str | None]] = {}

    def expect(self, name: str) -> None:
        """A check that fails until :meth:`done`."""
        self.set(name, lambda: False)

    def done(self, name: str) -> None:
        """Mark a check as holding."""
        self.set(name, lambda: True)

    def set(
        self, name: str, check: Callable[[], bool], why: Callable[[], str | None] | None = None
    ) -> None:
        """Add or replace a check; ``why`` says why it fails (``/readyz`` shows it)."""
        with self._lock:
            self._checks[name] = check
            if why is not None:
                self._why[name] = why

    def reasons(self, status: dict[str, bool]) -> dict[str, str]:
        """Why each failing check that can say fails."""
        with self._lock:
            why = {
                name: self._why[name] for name, ok in status.items() if not ok and name in self._why
            }
        found = {name: reason() for name, reason in why.items()}
        return {name: reason for name, reason in found.items() if reason}

    def status(self) -> dict[str, bool]:
        """Each check's result now."""
        with self._lock:
            checks = dict(self._checks)
        results: dict[str, bool] = {}
        for name, check in checks.items():
            try:
                results[name] = bool(check())
            except Exception:  # a check that cannot tell is not ready
                LOG.debug("readiness check %s failed", name, exc_info=True)
                results[name] = False
        return results


def _handler(readiness: Readiness) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, CONTENT_TYPE_LATEST, generate_latest(REGISTRY))
            elif path == "/healthz":
                self._send(200, "text/plain; charset=utf-8", b"ok\n")
            elif path == "/readyz":
                status = readiness.status()
                ready = all(status.values())
                report: dict[str, object] = {"ready": ready, "checks": status}
                reasons = readiness.reasons(status)
                if reasons:
                    report["why"] = reasons
                body = json.dumps(report).encode() + b"\n"
                self._send(200 if ready else 503, "application/json", body)
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args  # a scrape every few seconds is no event

    return Handler


class ManagementServer:
    """The listener, on its own daemon thread; ``with`` starts and stops it."""

    def __init__(self, address: tuple[str, int], readiness: Readiness) -> None:
        self.readiness = readiness
        self._server = ThreadingHTTPServer(address, _handler(readiness))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="management", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        """The address and port it listens on (the port chosen when 0 was asked)."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> ManagementServer:
        """Serve; logged with the address."""
        self._thread.start()
        host, port = self.address
        LOG.info("management: /metrics, /healthz and /readyz at http://%s:%d", host, port)
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ManagementServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def parse_address(text: str) -> tuple[str, int]:
    """``ADDR:PORT`` or ``[IPv6]:PORT``.

    Raises:
        ValueError: not of that form.
    """
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:  # noqa: PLR2004
        raise ValueError(f"expected ADDR:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def start_management(
    text: str | None, command: str, readiness: Readiness
) -> ManagementServer | None:
    """The management listener of ``command`` at ``text`` (or its default loopback port).

    A port in use is an error when the address was given, and a warning (no listener) for the
    default one, so that two agents of one kind on a host still start without flags.
    """
    given = text is not None
    address = parse_address(text) if text is not None else ("127.0.0.1", DEFAULT_PORTS[command])
    try:
        return ManagementServer(address, readiness).start()
    except OSError as exc:
        if given:
            raise OSError(f"--metrics-address {text}: {exc.strerror or exc}") from exc
        LOG.warning(
            "management: not listening: %s:%d: %s (choose one with --metrics-address)",
            *address,
            exc.strerror or exc,
        )
        return None
