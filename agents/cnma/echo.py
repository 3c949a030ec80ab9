"""A tiny UDP echo responder: the loopback endpoint of the C-NMA's probes.

It sends every datagram back after ``delay`` seconds, so a test or a lab can give a probed path
a round trip of its choice (and change it while the C-NMA runs); with ``mangle`` set it sends the
bytes reversed, a bad reply the probe must refuse. It serves until ``close``.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

_MAX_DATAGRAM = 2048


class EchoResponder:
    """Echo UDP datagrams on ``host:port`` (port 0: any free port) after ``delay`` seconds."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, delay: float = 0.0) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((host, port))
        self._sock.settimeout(0.1)
        self.address: tuple[str, int] = self._sock.getsockname()
        self.delay = delay
        self.mangle = False
        self.echoed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="cnma-echo", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self._sock.recvfrom(_MAX_DATAGRAM)
            except TimeoutError:
                continue
            except OSError:
                return
            if self.delay:
                time.sleep(self.delay)
            self._sock.sendto(data[::-1] if self.mangle else data, peer)
            self.echoed += 1

    def close(self) -> None:
        """Stop serving and release the port."""
        self._stop.set()
        self._thread.join()
        self._sock.close()

    def __enter__(self) -> EchoResponder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
