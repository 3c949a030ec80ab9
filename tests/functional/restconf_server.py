"""A real ``catsctl serve`` process on a free loopback port, for the RESTCONF functional tests."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from controller.auth import hash_password
from controller.auth.policy import default_policy
from controller.demo import launch
from tests.conftest import ROOT
from tools.bench.common import child_processes, stop

TEST_YANG = ROOT / "tests" / "yang"
ADMIN = ("admin", "admin-secret")
JSON = "application/yang-data+json"
XML = "application/yang-data+xml"
START_TIMEOUT_S = 180.0  # a bound, not a speed: at load 25 on 2 cores 60 s was not enough
_HASH = hash_password(ADMIN[1])


#: A loopback port nobody listens on now: one chooser for every bed, below the kernel's
#: ephemeral range and never the same port twice in a process.
free_port = launch.free_port


def admin_users() -> dict[str, object]:
    """``ietf-system`` with the test administrator."""
    return {
        "ietf-system:system": {"authentication": {"user": [{"name": ADMIN[0], "password": _HASH}]}}
    }


def small_bench() -> dict[str, object]:
    """The admin and a small bench-list: target ``t1`` and entry 1 (``one``) pointing at it."""
    document = admin_users()
    document["bench-list:bench"] = {
        "target": [{"name": "t1"}],
        "entry": [{"id": 1, "name": "one", "target": "t1", "weight": 5}],
    }
    return document


@dataclass
class Server:
    """A running server: its process, URLs and an authenticated keep-alive session."""

    process: subprocess.Popen[bytes]
    port: int
    state_dir: Path
    log: Path
    session: requests.Session
    scheme: str = "http"
    netconf_port: int = 0
    metrics_port: int = 0  # the management listener: /metrics, /healthz, /readyz

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """An absolute URL of a path under the RESTCONF root (or of an absolute path)."""
        return self.root + (path if path.startswith("/") else f"/restconf/{path}")

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request with the admin's credentials (unless ``auth`` says otherwise)."""
        kwargs.setdefault("timeout", 30)
        return self.session.request(method, self.url(path), **kwargs)

    def get_json(self, path: str, **params: str) -> Any:
        """GET a data resource as JSON; asserts 200."""
        reply = self.request("GET", path, params=params, headers={"Accept": JSON})
        assert reply.status_code == 200, reply.text
        return reply.json()

    def stderr(self) -> str:
        """What the server logged."""
        return self.log.read_text(errors="replace")


def worker_processes(pid: int) -> list[int]:
    """The RESTCONF worker processes (``--restconf-workers``) of a server process now."""
    found = []
    for child in child_processes(pid):
        with contextlib.suppress(FileNotFoundError):
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if b"controller.workers.process" in command:
                found.append(child)
    return found


def wait_until(condition: Callable[[], bool], message: str, timeout: float = 60.0) -> None:
    """Wait on a condition (never on a fixed sleep); fail with ``message`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        assert time.monotonic() < deadline, message
        pause.wait(0.05)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"catsctl serve exited:\n{server.stderr()}")
        if all(_listening(port) for port in (server.port, server.netconf_port) if port):
            return  # listening (a probe over TLS would need the client certificate)
        time.sleep(0.1)
    raise RuntimeError(f"catsctl serve did not start:\n{server.stderr()}")


def with_admin_policy(document: dict[str, object]) -> dict[str, object]:
    """A seed with the shipped NACM policy (controller.auth.policy) naming the test admin as
    its administrator, unless the seed states a policy of its own: with RFC 8341's defaults
    nobody may write (write-default deny), as on a real first start. Other users are in no
    group: they may read all but secrets and invoke operations, nothing more."""
    if "ietf-netconf-acm:nacm" in document:
        return document
    return {**document, **default_policy({"admin": [ADMIN[0]]})}


def admin_policy(**groups: list[str]) -> dict[str, Any]:
    """The shipped NACM policy with the test admin as administrator and the extra
    ``groups`` (name: members, with no rule-list of their own unless a test adds one)."""
    policy: dict[str, Any] = default_policy({"admin": [ADMIN[0]]})
    nacm = policy["ietf-netconf-acm:nacm"]
    nacm["groups"]["group"] += [{"name": n, "user-name": m} for n, m in groups.items()]
    return policy


def write_init(folder: Path, document: dict[str, object]) -> Path:
    """Write an --init-data file (JSON), with the admin policy of :func:`with_admin_policy`."""
    path = folder / "init.json"
    path.write_text(json.dumps(with_admin_policy(document)))
    return path


@contextlib.contextmanager
def running_server(
    state_dir: Path,
    init_data: Path | None = None,
    *extra: str,
    scheme: str = "http",
    port: int | None = None,
    netconf_port: int | None = None,
) -> Iterator[Server]:
    """Start ``catsctl serve``; stop it (SIGTERM, then SIGKILL) when the block ends."""
    port = port or free_port()
    netconf_port = free_port() if netconf_port is None else netconf_port  # 0: no NETCONF
    log = state_dir.parent / f"serve-{port}.log"
    metrics = (
        [] if "--metrics-address" in extra else ["--metrics-address", f"127.0.0.1:{free_port()}"]
    )
    command = [
        *(sys.executable, "-m", "controller.cli", "serve"),
        *("--state-dir", str(state_dir)),
        *("--yang-dir", str(TEST_YANG)),
        *("--restconf-port", str(port)),
        *("--netconf-port", str(netconf_port)),
        *(["--init-data", str(init_data)] if init_data else []),
        *metrics,
        *extra,
    ]
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink, env=os.environ)
    session = requests.Session()
    session.auth = ADMIN
    address = metrics[1] if metrics else extra[extra.index("--metrics-address") + 1]
    metrics_port = int(address.rpartition(":")[2])
    server = Server(process, port, state_dir, log, session, scheme, netconf_port, metrics_port)
    try:
        _wait_ready(server)
        yield server
    finally:
        session.close()
        if process.poll() is None:
            stop(process, timeout=10)


@contextlib.contextmanager
def seeded_server(folder: Path, document: dict[str, object], *extra: str) -> Iterator[Server]:
    """:func:`running_server` in ``folder`` with running seeded from ``document``."""
    with running_server(folder / "state", write_init(folder, document), *extra) as running:
        yield running
