"""A real etcd cluster of N members on loopback, for the cluster tests and benches.

Each member is Debian's ``etcd`` (3.4, package ``etcd-server``) on free loopback ports with
its data in a temporary folder; :func:`etcd_cluster` starts them all, waits until each says
``/health`` is true and kills them when the block ends. Single members can be killed and
started again (:meth:`EtcdCluster.kill`, :meth:`EtcdCluster.start`) to take quorum away and
give it back.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import requests

from controller.demo import launch

START_TIMEOUT_S = 120.0  # a bound, not a speed: etcd elects a leader in about a second idle
#: One commit of a large edit (a 100k-entry seed is about 10 MB of JSON) must fit one request.
MAX_REQUEST_BYTES = 64 << 20


@dataclass
class Member:
    """One etcd member: its name, ports, folder and (while it runs) process."""

    name: str
    client_port: int
    peer_port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def client_url(self) -> str:
        """``http://127.0.0.1:PORT``: where clients (and the gRPC gateway) are served."""
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        """Where the other members reach this one."""
        return f"http://127.0.0.1:{self.peer_port}"

    def healthy(self) -> bool:
        """Whether the member answers ``/health`` with true (it has a leader and quorum)."""
        try:
            reply = requests.get(f"{self.client_url}/health", timeout=2)
        except requests.RequestException:
            return False
        return reply.status_code == 200 and reply.json().get("health") == "true"  # noqa: PLR2004


@dataclass
class EtcdCluster:
    """The members of a loopback cluster."""

    folder: Path
    members: list[Member] = field(default_factory=list)

    @property
    def endpoints(self) -> str:
        """``127.0.0.1:PORT,...``: the client endpoints, as ``catsctl serve --cluster`` takes
        them after ``etcd://``."""
        return ",".join(f"127.0.0.1:{m.client_port}" for m in self.members)

    @property
    def url(self) -> str:
        """``etcd://127.0.0.1:PORT,...``: the ``--cluster`` option's value."""
        return f"etcd://{self.endpoints}"

    def _command(self, member: Member) -> list[str]:
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        return [
            shutil.which("etcd") or "etcd",
            *("--name", member.name),
            *("--data-dir", str(member.folder)),
            *("--listen-client-urls", member.client_url),
            *("--advertise-client-urls", member.client_url),
            *("--listen-peer-urls", member.peer_url),
            *("--initial-advertise-peer-urls", member.peer_url),
            *("--initial-cluster", initial),
            *("--initial-cluster-token", f"cats-{self.members[0].peer_port}"),
            *("--initial-cluster-state", "new"),
            *("--max-request-bytes", str(MAX_REQUEST_BYTES)),
            # etcd's defaults, stated: the shortest lease etcd grants is 1.5 election
            # timeouts, so a 2 s leader lease (controller.cluster.election) needs 1 s here.
            *("--heartbeat-interval", "100"),
            *("--election-timeout", "1000"),
            *("--logger", "zap"),
            *("--log-outputs", str(member.folder.parent / f"{member.name}.log")),
        ]

    def start(self, member: Member) -> None:
        """Start (or restart, on its kept data) one member."""
        if member.process is not None and member.process.poll() is None:
            return
        member.folder.mkdir(mode=0o700, exist_ok=True)
        member.process = subprocess.Popen(
            self._command(member),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def kill(self, member: Member) -> None:
        """SIGKILL one member and reap it."""
        if member.process is not None and member.process.poll() is None:
            member.process.kill()
            member.process.wait()

    def wait_healthy(self, members: list[Member] | None = None) -> None:
        """Wait until every (given) member reports healthy."""
        deadline = time.monotonic() + START_TIMEOUT_S
        waiting = list(self.members if members is None else members)
        while waiting:
            for member in list(waiting):
                if member.process is not None and member.process.poll() is not None:
                    log = member.folder.parent / f"{member.name}.log"
                    text = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                    raise RuntimeError(f"etcd member {member.name} exited:\n{text}")
                if member.healthy():
                    waiting.remove(member)
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(f"etcd members not healthy: {[m.name for m in waiting]}")
            if waiting:
                time.sleep(0.1)

    def close(self) -> None:
        """Kill every member."""
        for member in self.members:
            self.kill(member)


@contextlib.contextmanager
def etcd_cluster(folder: Path, size: int = 3) -> Iterator[EtcdCluster]:
    """Start ``size`` etcd members in ``folder``, healthy; kill them all when the block ends."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    cluster = EtcdCluster(folder)
    for number in range(1, size + 1):
        name = f"etcd{number}"
        cluster.members.append(Member(name, launch.free_port(), launch.free_port(), folder / name))
    try:
        for member in cluster.members:
            cluster.start(member)
        cluster.wait_healthy()
        yield cluster
    finally:
        cluster.close()
