"""Active measurement of configured paths: round-trip probes and their precedence over the model.

A probe sends ``count`` round trips to a loopback (or any) endpoint standing for the path's
egress: a UDP echo of a 16-byte payload (8-byte nonce, 8-byte sequence; a reply that is not the
exact payload is refused and counted lost), or a TCP connect (SYN to SYN-ACK). The one-way delay
is half the median round trip, the jitter the mean absolute difference of consecutive one-way
samples (the smoothed inter-arrival variation of RFC 3550 6.4.1, without smoothing), min and
max delay half the extreme round trips; all in whole microseconds, the IGP TE / BGP-LS unit
(RFC 7471 4.1-4.3), so reports may carry them as ``delay-us``.

Precedence (:func:`apply`): ``replace`` puts the measured delay, jitter and min/max delay in
place of the modelled ones (confidence ``asserted``); ``bound`` keeps the model but never reports
less than was measured: each value becomes the larger of the two, and min/max delay widen to
cover both. A round without a single valid reply changes nothing (unknown is not a value).
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import statistics
import struct
import time
from dataclasses import dataclass, replace
from enum import StrEnum

from agents.cnma.paths import PathKey, PathMetrics
from controller.selection.units import Micros
from controller.types import ForwarderId

LOG = logging.getLogger(__name__)
_PAYLOAD = struct.Struct("!8sQ")


class ProbeMethod(StrEnum):
    """How a round trip is measured."""

    UDP_ECHO = "udp-echo"
    TCP_CONNECT = "tcp-connect"


class ProbeUse(StrEnum):
    """What a measurement does to the modelled path metrics."""

    REPLACE = "replace"
    BOUND = "bound"


@dataclass(frozen=True, slots=True)
class Probe:
    """The probe of one (Ingress, Egress) path."""

    ingress: ForwarderId
    egress: ForwarderId
    host: str
    port: int
    method: ProbeMethod = ProbeMethod.UDP_ECHO
    count: int = 5
    timeout: float = 0.5
    use: ProbeUse = ProbeUse.REPLACE

    @property
    def key(self) -> PathKey:
        """(Ingress, Egress)."""
        return (self.ingress, self.egress)


@dataclass(frozen=True, slots=True)
class Measurement:
    """The round trips of one probe round, in microseconds; ``lost`` had no valid reply."""

    key: PathKey
    round_trips: tuple[int, ...]
    lost: int = 0

    @property
    def one_way(self) -> tuple[int, ...]:
        """Half of each round trip."""
        return tuple(rtt // 2 for rtt in self.round_trips)

    @property
    def delay(self) -> Micros:
        """Half the median round trip."""
        return Micros(round(statistics.median(self.round_trips) / 2))

    @property
    def jitter(self) -> Micros:
        """Mean absolute difference of consecutive one-way samples (0 for one sample)."""
        steps = [abs(b - a) for a, b in itertools.pairwise(self.one_way)]
        return Micros(round(statistics.fmean(steps))) if steps else Micros(0)


def apply(path: PathMetrics, measured: Measurement, use: ProbeUse) -> PathMetrics:
    """The path metrics after a measurement, per the precedence in the module docstring."""
    if not measured.round_trips:
        return path
    low, high = Micros(min(measured.one_way)), Micros(max(measured.one_way))
    if use is ProbeUse.REPLACE:
        return replace(
            path,
            delay=measured.delay,
            jitter=measured.jitter,
            min_delay=low,
            max_delay=max(high, measured.delay),
            measured=True,
        )
    return replace(
        path,
        delay=max(path.delay, measured.delay),
        jitter=max(path.jitter, measured.jitter),
        min_delay=min(path.min_delay, low),
        max_delay=max(path.max_delay, high, measured.delay),
    )


def _udp_round(sock: socket.socket, nonce: bytes, sequence: int, timeout: float) -> int | None:
    payload = _PAYLOAD.pack(nonce, sequence)
    start = time.perf_counter_ns()
    deadline = start + int(timeout * 1e9)
    sock.send(payload)
    while (left := deadline - time.perf_counter_ns()) > 0:
        sock.settimeout(left / 1e9)
        try:
            reply = sock.recv(64)
        except (TimeoutError, ConnectionRefusedError):
            return None
        if reply == payload:
            return (time.perf_counter_ns() - start) // 1000
        LOG.warning("probe reply refused: %d bytes that are not the probe payload", len(reply))
    return None


def _tcp_round(host: str, port: int, timeout: float) -> int | None:
    start = time.perf_counter_ns()
    try:
        with socket.create_connection((host, port), timeout):
            return (time.perf_counter_ns() - start) // 1000
    except OSError:
        return None


def _udp_rounds(probe: Probe) -> list[int | None]:
    nonce = os.urandom(8)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            probe.host, probe.port, type=socket.SOCK_DGRAM
        )[0]
        with socket.socket(family, kind, proto) as sock:
            sock.connect(address)
            return [_udp_round(sock, nonce, n, probe.timeout) for n in range(probe.count)]
    except OSError as exc:
        LOG.warning("probe %s:%d failed: %s", probe.host, probe.port, exc)
        return [None] * probe.count


def measure(probe: Probe) -> Measurement:
    """Run one probe round (the I/O half; :func:`apply` is the pure half)."""
    samples: list[int | None]
    if probe.method is ProbeMethod.TCP_CONNECT:
        samples = [_tcp_round(probe.host, probe.port, probe.timeout) for _ in range(probe.count)]
    else:
        samples = _udp_rounds(probe)
    valid = tuple(s for s in samples if s is not None)
    return Measurement(probe.key, valid, lost=len(samples) - len(valid))
