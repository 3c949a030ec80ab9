"""Hostile clients and a legitimate one, on loopback, for ``tools.bench.attacks`` (figures)
and ``tests/functional/test_hardening.py`` (behaviour).

Each attacker runs in threads until :meth:`Attacker.stop` and counts what the server did to it
in its :class:`Tally`; sources are distinct loopback addresses (``127.0.0.2`` on), as hostile
clients elsewhere would be. :class:`Legit` is an authenticated client reading one entry over a
keep-alive connection, timing each request.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paramiko
import requests
from requests.adapters import HTTPAdapter

from controller.netconf.framing import frame
from controller.netconf.messages import BASE_NS

CONNECT_TIMEOUT_S = 10.0
AT_ONCE_S = 0.5  # a connection closed sooner was refused at accept
OK = 200


def source(index: int) -> str:
    """The ``index``-th hostile loopback address: 127.0.0.2, 127.0.0.3, ..."""
    return f"127.0.{(index + 2) // 254}.{(index + 2) % 254 + 1}"


class SourceAdapter(HTTPAdapter):
    """An HTTP adapter whose connections leave from one local address."""

    def __init__(self, address: str) -> None:
        self._address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Bind every connection to the address."""
        kwargs["source_address"] = (self._address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address: str) -> requests.Session:
    """A requests session whose connections leave from ``address``."""
    session = requests.Session()
    session.mount("http://", SourceAdapter(address))
    session.mount("https://", SourceAdapter(address))
    return session


def connect_from(address: str, port: int) -> socket.socket:
    """A TCP connection to loopback ``port`` from ``address``."""
    return socket.create_connection(("127.0.0.1", port), CONNECT_TIMEOUT_S, (address, 0))


@dataclass
class Tally:
    """What happened to an attacker, by outcome."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, outcome: str, count: int = 1) -> None:
        """Count one outcome."""
        with self.lock:
            self.counts[outcome] += count

    def get(self, outcome: str) -> int:
        """How many of an outcome."""
        with self.lock:
            return self.counts[outcome]


class Attacker:
    """Threads running :meth:`run` (given its index) until stopped."""

    threads = 1

    def __init__(self) -> None:
        self.tally = Tally()
        self.stopping = threading.Event()
        self._workers: list[threading.Thread] = []

    def run(self, index: int) -> None:
        """One thread's attack (until ``self.stopping``)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start every thread."""
        self._workers = [
            threading.Thread(target=self._guarded, args=(n,), daemon=True)
            for n in range(self.threads)
        ]
        for worker in self._workers:
            worker.start()

    def _guarded(self, index: int) -> None:
        try:
            self.run(index)
        except Exception as exc:  # an attacker's failure is a figure, not a crash
            self.tally.add(f"crashed: {type(exc).__name__}")

    def stop(self) -> None:
        """Stop and wait for every thread."""
        self.stopping.set()
        self.finish()

    def finish(self, timeout: float = 600.0) -> None:
        """Wait for every thread to end by itself (an attacker with a limit)."""
        for worker in self._workers:
            worker.join(timeout=timeout)


class RestconfGuessers(Attacker):
    """``threads`` clients guessing ``user``'s password over RESTCONF basic authentication."""

    def __init__(self, base: str, user: str, threads: int = 8, *, limit: int = 0) -> None:
        super().__init__()
        self.base, self.user, self.threads, self.limit = base, user, threads, limit

    def run(self, index: int) -> None:
        """Guess until stopped (or ``limit`` guesses); count each status."""
        session = session_from(source(index))
        done = 0
        while not self.stopping.is_set() and (not self.limit or done < self.limit):
            guess = secrets.token_hex(6)
            try:
                reply = session.get(
                    f"{self.base}/data/bench-list:bench", auth=(self.user, guess), timeout=60
                )
                self.tally.add(str(reply.status_code))
            except requests.RequestException:
                self.tally.add("error")
            done += 1


class SshGuessers(Attacker):
    """``threads`` clients guessing ``user``'s password over SSH, reconnecting when cut off."""

    def __init__(self, port: int, user: str, threads: int = 8, *, limit: int = 0) -> None:
        super().__init__()
        self.port, self.user, self.threads, self.limit = port, user, threads, limit

    def run(self, index: int) -> None:
        """Guess until stopped (or ``limit`` guesses); count refusals and disconnections."""
        done = 0
        while not self.stopping.is_set() and (not self.limit or done < self.limit):
            try:
                transport = paramiko.Transport(connect_from(source(index), self.port))
            except OSError:
                self.tally.add("connection refused")
                continue
            try:
                transport.start_client(timeout=CONNECT_TIMEOUT_S)
                while not self.stopping.is_set() and (not self.limit or done < self.limit):
                    done += 1
                    try:
                        transport.auth_password(self.user, secrets.token_hex(6))
                        self.tally.add("accepted")
                    except paramiko.AuthenticationException:
                        self.tally.add("refused")
            except (paramiko.SSHException, OSError, EOFError):
                self.tally.add("disconnected")
            finally:
                transport.close()


class HalfOpen(Attacker):
    """``threads`` connections that start a request head and trickle it a line at a time
    (slowloris), or (``silent``) send nothing at all; reopened when the server closes them."""

    def __init__(self, port: int, threads: int = 100, *, silent: bool = False) -> None:
        super().__init__()
        self.port, self.threads, self.silent = port, threads, silent

    def run(self, index: int) -> None:
        """Hold a connection open without ever completing a request."""
        while not self.stopping.is_set():
            try:
                sock = connect_from(source(index % 16), self.port)
            except OSError:
                self.tally.add("connection refused")
                self.stopping.wait(0.1)
                continue
            self.tally.add("opened")
            began = time.monotonic()
            with sock:
                if not self.silent:
                    with contextlib.suppress(OSError):
                        sock.sendall(b"GET /restconf/data HTTP/1.1\r\nHost: x\r\n")
                self._trickle(sock)
            self.tally.add("closed by the server")
            self.tally.add("held-ms", int((time.monotonic() - began) * 1000))
            self.tally.add("held-n")

    def _trickle(self, sock: socket.socket) -> None:
        sock.settimeout(1.0)
        while not self.stopping.is_set():
            try:
                if sock.recv(4096) == b"":
                    return
            except TimeoutError:
                pass
            except OSError:
                return
            if not self.silent:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    return


class PreAuthSsh(Attacker):
    """``threads`` SSH connections that send their version line and never authenticate;
    reopened when the server closes them."""

    def __init__(self, port: int, threads: int = 300, sources: int = 10) -> None:
        super().__init__()
        self.port, self.threads, self.sources = port, threads, sources

    def run(self, index: int) -> None:
        """Hold an unauthenticated SSH connection."""
        while not self.stopping.is_set():
            try:
                sock = connect_from(source(index % self.sources), self.port)
            except OSError:
                self.tally.add("connection refused")
                self.stopping.wait(0.2)
                continue
            began = time.monotonic()
            with sock:
                sock.settimeout(1.0)
                with contextlib.suppress(OSError):
                    sock.sendall(b"SSH-2.0-attacker\r\n")
                closed = self._hold(sock)
            held = time.monotonic() - began
            self.tally.add("refused at once" if closed and held < AT_ONCE_S else "closed later")

    def _hold(self, sock: socket.socket) -> bool:
        while not self.stopping.is_set():
            try:
                if sock.recv(4096) == b"":
                    return True
            except TimeoutError:
                continue
            except OSError:
                return True
        return False


class Streams(Attacker):
    """One user opening ``threads`` event streams and holding them."""

    def __init__(self, base: str, auth: tuple[str, str], threads: int = 32) -> None:
        super().__init__()
        self.base, self.auth, self.threads = base, auth, threads

    def run(self, index: int) -> None:
        """Open a stream; hold it until stopped."""
        del index
        with requests.Session() as session:
            try:
                reply = session.get(
                    f"{self.base}/streams/json/NETCONF", auth=self.auth, stream=True, timeout=60
                )
            except requests.RequestException:
                self.tally.add("error")
                return
            self.tally.add(str(reply.status_code))
            with reply:
                self.stopping.wait()


def netconf_rpc(body: str, message_id: str = "1", attributes: int = 0) -> bytes:
    """An ``<rpc>`` (with ``attributes`` extra attributes on it: the attribute bomb)."""
    extra = "".join(f' a{n}="{n}"' for n in range(attributes))
    return f'<rpc xmlns="{BASE_NS}" message-id="{message_id}"{extra}>{body}</rpc>'.encode()


class AttributeBomb(Attacker):
    """An authenticated NETCONF session sending ``<rpc>`` messages of ``attributes``
    attributes, one after the other; counts the replies (``too-big`` expected)."""

    def __init__(self, port: int, user: str, password: str, attributes: int = 200_000) -> None:
        super().__init__()
        self.port, self.user, self.password, self.attributes = port, user, password, attributes

    def run(self, index: int) -> None:
        """Send bombs until stopped; time each reply."""
        del index
        session = NetconfSession(self.port, self.user, self.password)
        bomb = frame(netconf_rpc("<get/>", attributes=self.attributes), chunked=True)
        try:
            while not self.stopping.is_set():
                began = time.monotonic()
                session.channel.sendall(bomb)
                reply = session.receive()
                self.tally.add("too-big" if b"too-big" in reply else "other reply")
                self.tally.add("reply-ms", int((time.monotonic() - began) * 1000))
                self.tally.add("reply-n")
        finally:
            session.close()


class NetconfSession:
    """An authenticated NETCONF session (base:1.1) on paramiko."""

    def __init__(self, port: int, user: str, password: str, address: str = "127.0.0.1") -> None:
        from controller.netconf.framing import Deframer  # noqa: PLC0415

        self.transport = paramiko.Transport(connect_from(address, port))
        self.transport.connect(username=user, password=password)
        self.channel = self.transport.open_session()
        self.channel.settimeout(120)
        self.channel.invoke_subsystem("netconf")
        self.deframer = Deframer(1 << 30)
        self.receive()
        hello = (
            f'<hello xmlns="{BASE_NS}"><capabilities><capability>'
            "urn:ietf:params:netconf:base:1.1</capability></capabilities></hello>"
        )
        self.channel.sendall(frame(hello.encode(), chunked=False))
        self.deframer.use_chunked()
        self.count = 0

    def receive(self) -> bytes:
        """The next message."""
        while (message := self.deframer.next_message()) is None:
            data = self.channel.recv(65536)
            if not data:
                raise EOFError
            self.deframer.feed(data)
        return message

    def rpc(self, body: str) -> bytes:
        """One round trip."""
        self.count += 1
        self.channel.sendall(frame(netconf_rpc(body, str(self.count)), chunked=True))
        return self.receive()

    def close(self) -> None:
        """Drop the connection."""
        self.transport.close()


def bench_entries(first: int, count: int) -> str:
    """A ``bench-list`` merge body of ``count`` new entries (RFC 7951 JSON)."""
    entries = [
        {
            "id": key,
            "name": f"big{key}",
            "addr": f"172.{(key >> 16) & 255}.{(key >> 8) & 255}.{key & 255}",
            "target": f"t{key % 300}",
            "weight": 1,
        }
        for key in range(first, first + count)
    ]
    return json.dumps({"bench-list:bench": {"entry": entries}})


@dataclass
class Latencies:
    """Request latencies (ms) and failures of a legitimate client."""

    values: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)

    def p(self, fraction: float) -> float:
        """A percentile (nearest rank), ms."""
        ordered = sorted(self.values)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]

    @property
    def p50(self) -> float:
        """The median, ms."""
        return statistics.median(self.values) if self.values else float("nan")


class Legit:
    """An authenticated client repeating one request, ``pause`` seconds apart, timing each."""

    def __init__(self, request: Callable[[], str | None], pause: float = 0.02) -> None:
        self._request = request
        self._pause = pause
        self.latencies = Latencies()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Legit:
        """Start repeating."""
        self._thread.start()
        return self

    def stop(self) -> Latencies:
        """Stop; the latencies so far."""
        self._stopping.set()
        self._thread.join(timeout=120)
        return self.latencies

    def _run(self) -> None:
        while not self._stopping.is_set():
            began = time.perf_counter()
            try:
                failure = self._request()
            except Exception as exc:  # counted: the figure is what failed
                failure = type(exc).__name__
            self.latencies.values.append((time.perf_counter() - began) * 1000)
            if failure is not None:
                self.latencies.failures[failure] += 1
            self._stopping.wait(self._pause)


def restconf_reader(session: requests.Session, url: str) -> Callable[[], str | None]:
    """One GET of ``url`` on ``session``; its failure (None when 200)."""

    def read() -> str | None:
        reply = session.get(url, headers={"Accept": "application/yang-data+json"}, timeout=60)
        return None if reply.status_code == OK else str(reply.status_code)

    return read


def netconf_reader(session: NetconfSession, key: int) -> Callable[[], str | None]:
    """One get-config of a bench entry; its failure (None when the entry came back)."""
    body = (
        '<get-config><source><running/></source><filter type="subtree">'
        f'<bench xmlns="urn:example:bench-list"><entry><id>{key}</id></entry></bench>'
        "</filter></get-config>"
    )

    def read() -> str | None:
        reply = session.rpc(body)
        return None if f"<id>{key}</id>".encode() in reply else "no entry"

    return read
