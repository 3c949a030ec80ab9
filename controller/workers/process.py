"""A RESTCONF worker process (``python -m controller.workers.process``).

The core's :class:`~controller.workers.pool.WorkerPool` starts it with the RESTCONF listening
socket inherited and its :class:`Spec` on standard input, which stays open while the core
lives: the worker stops at SIGTERM, or when standard input ends (the core is gone).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from controller import heap
from controller.datastore.api import ServerCore
from controller.datastore.contexts import Contexts, default_size
from controller.model.codec import NotificationCodec
from controller.model.limits import DocumentLimits
from controller.model.paths import PathResolver
from controller.model.serverschema import server_schema
from controller.observability.logs import configure
from controller.restconf.bounds import GateSettings
from controller.restconf.resources import Restconf, ServerInfo
from controller.restconf.server import GatedServer, ListenSettings, TlsSettings, ssl_adapter
from controller.workers.app import WorkerApp
from controller.workers.link import CoreLink, Ready

LOG = logging.getLogger("catsctl.serve.worker")


@dataclass(frozen=True, slots=True)
class Spec:
    """What a worker is told: where the core is, the schema, how to listen, how to log."""

    address: str  # the core's gateway (a Unix socket's path)
    authkey: str  # hex; the gateway's challenge key
    fd: int  # the inherited listening socket
    yang_dirs: tuple[str, ...]
    features: tuple[tuple[str, str], ...]
    yang_library_version: str
    schema_id: str
    started: str  # ISO 8601
    listen: dict[str, Any]  # ListenSettings, as asdict gives it
    log_format: str  # text or json
    log_levels: tuple[str, ...]  # as --log-level takes them

    def to_json(self) -> str:
        """One line of JSON."""
        return json.dumps(asdict(self), default=str)

    @staticmethod
    def from_json(line: str) -> Spec:
        """The spec :meth:`to_json` wrote."""
        data = json.loads(line)
        data["yang_dirs"] = tuple(data["yang_dirs"])
        data["features"] = tuple(tuple(pair) for pair in data["features"])
        data["log_levels"] = tuple(data["log_levels"])
        return Spec(**data)

    def listen_settings(self) -> ListenSettings:
        """The core's RESTCONF settings."""
        listen = dict(self.listen)
        tls = listen.pop("tls")
        gate = GateSettings(**listen.pop("gate"))
        limits = DocumentLimits(**listen.pop("limits"))
        if tls is not None:
            ca = tls["client_ca"]
            tls = TlsSettings(Path(tls["cert"]), Path(tls["key"]), Path(ca) if ca else None)
        return ListenSettings(**listen, tls=tls, gate=gate, limits=limits)


class InheritedServer(GatedServer):
    """The gated server on a listening socket the worker inherited, which its siblings accept
    on too: accepting never blocks (a sibling may take the connection first)."""

    def __init__(self, listening: socket.socket, app: Any, settings: ListenSettings) -> None:
        super().__init__((settings.address, settings.port), app, settings)
        self._listening = listening

    def bind(self, family: Any, type: Any, proto: Any = 0) -> socket.socket:
        """The inherited socket, bound and listening already."""
        self.socket = self._listening
        return self._listening

    def prepare(self) -> None:
        """cheroot's, then the socket made non-blocking."""
        super().prepare()
        self._listening.setblocking(False)  # noqa: FBT003


def main() -> int:
    """Serve until SIGTERM or the end of standard input."""
    spec = Spec.from_json(sys.stdin.readline())
    configure(verbose=False, log_format=spec.log_format, levels=spec.log_levels)
    # An input a worker finds invalid goes to the core, which logs libyang's words on it;
    # output that is not valid is logged with them (rpc.output_document).
    logging.getLogger("libyang").setLevel(logging.CRITICAL)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the core stops its workers itself
    features = spec.features
    schema = server_schema(tuple(Path(folder) for folder in spec.yang_dirs), features)
    info = ServerInfo(
        spec.yang_library_version, spec.schema_id, datetime.fromisoformat(spec.started)
    )
    no_core = cast(ServerCore, None)  # everything that reads the core is answered by the core
    restconf = Restconf(
        no_core, PathResolver(schema.context), info, NotificationCodec(schema.context).to_xml
    )
    listen = spec.listen_settings()
    link = CoreLink(spec.address, bytes.fromhex(spec.authkey))
    app = WorkerApp(
        restconf,
        link,
        Contexts(schema, default_size()),
        max_body_size=listen.max_body_size,
        limits=listen.limits,
    )
    server = InheritedServer(socket.socket(fileno=spec.fd), app, listen)
    if listen.tls is not None:
        server.ssl_adapter = ssl_adapter(listen.tls)
    server.prepare()
    heap.settle()  # the schema is frozen out of the collector's walks, as in the server
    serving = threading.Thread(target=server.serve, name="restconf", daemon=True)
    serving.start()
    threading.Thread(target=_until_eof, args=(stop,), name="core-watch", daemon=True).start()
    link.ask(Ready(os.getpid()))
    stop.wait()
    server.stop()
    serving.join(timeout=5)
    return 0


def _until_eof(stop: threading.Event) -> None:
    """Set ``stop`` when standard input ends: the core that holds its other end is gone."""
    sys.stdin.read()
    stop.set()


if __name__ == "__main__":
    sys.exit(main())
