"""NETCONF round trips of ``catsctl serve`` at 1k, 10k and 100k list entries.

Run with ``python -m tools.bench.netconf`` from the repository root. For each size it seeds
``tests/yang/bench-list@2026-11-30.yang`` through ``--init-data`` (as tools.bench.restconf
does), starts a real server on loopback and measures, over plain paramiko sessions (base:1.1
chunked framing; no client-side polling to measure), with one session and with eight:

* ``get-config``: one entry by subtree filter;
* ``edit-config``: merge of one entry's name and weight into running (validated edit).

It also sends edit-configs that must be refused (dangling leafref, duplicate unique address,
missing mandatory name) and checks each is refused and changes nothing, at every size, and
prints the 100k/1k rate ratio of each operation (target >= 0.5: a read of one entry by its key
is narrowed to that entry, an edit validates locally).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable

import paramiko

from controller.netconf.framing import Deframer, frame
from controller.netconf.messages import BASE_11, BASE_NS
from tools.bench import common
from tools.bench.common import PASSWORD, THREADS, USER, Figure

BL = "urn:example:bench-list"
HELLO = (
    f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_11}</capability>'
    "</capabilities></hello>"
).encode()


class Session:
    """One NETCONF session on paramiko: hello, then one rpc at a time."""

    def __init__(
        self, port: int, host: str = "127.0.0.1", user: str = USER, password: str = PASSWORD
    ) -> None:
        self.transport = paramiko.Transport(socket.create_connection((host, port), 30))
        self.transport.connect(username=user, password=password)
        self.channel = self.transport.open_session()
        self.channel.settimeout(60)
        self.channel.invoke_subsystem("netconf")
        self.deframer = Deframer(1 << 30)
        self.receive()
        self.channel.sendall(frame(HELLO, chunked=False))
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
        """One rpc round trip; the reply's bytes."""
        self.count += 1
        message = f'<rpc xmlns="{BASE_NS}" message-id="{self.count}">{body}</rpc>'
        self.channel.sendall(frame(message.encode(), chunked=True))
        return self.receive()

    def close(self) -> None:
        """Drop the connection."""
        self.transport.close()


def get_entry(session: Session, key: int) -> bool:
    """get-config of one entry by subtree filter; True when the entry came back."""
    reply = session.rpc(
        f'<get-config><source><running/></source><filter type="subtree"><bench xmlns="{BL}">'
        f"<entry><id>{key}</id></entry></bench></filter></get-config>"
    )
    return b"<rpc-error" not in reply and f"<id>{key}</id>".encode() in reply


def _edit(entry: str) -> str:
    return (
        f'<edit-config><target><running/></target><config><bench xmlns="{BL}">'
        f"{entry}</bench></config></edit-config>"
    )


def edit_entry(session: Session, key: int) -> bool:
    """Merge a new name and weight into one entry; True on ``<ok/>``."""
    entry = f"<entry><id>{key}</id><name>n{key}</name><weight>{1 + key * 7 % 1000}</weight>"
    return b"<ok/>" in session.rpc(_edit(entry + "</entry>"))


OPERATIONS: dict[str, Callable[[Session, int], bool]] = {
    "get-config": get_entry,
    "edit-config": edit_entry,
}


def measure(port: int, size: int, name: str, threads: int) -> Figure:
    """Run one operation from ``threads`` sessions for SECONDS; latencies in ms."""
    operation = OPERATIONS[name]
    sessions = [Session(port) for _ in range(threads)]

    def step(session: Session, key: int) -> int | None:
        return None if operation(session, key) else key

    try:
        latencies, elapsed, failures = common.drive(sessions, step, size)
    finally:
        for session in sessions:
            session.close()
    if failures:
        raise SystemExit(f"{name} at {size}: {len(failures)} failed, e.g. key {failures[0]}")
    return common.figure(size, name, threads, latencies, elapsed)


def check_rejections(port: int, size: int) -> list[str]:
    """Edits that must be refused, each with the datastore unchanged; returns the failures."""
    session = Session(port)

    def refuse(entry: dict[str, object]) -> str | None:
        leaves = "".join(f"<{leaf}>{value}</{leaf}>" for leaf, value in entry.items())
        reply = session.rpc(_edit(f"<entry>{leaves}</entry>"))
        return None if b"<rpc-error" in reply else "not refused"

    try:
        return common.check_rejections(size, refuse, lambda key: get_entry(session, key))
    finally:
        session.close()


def _ready(port: int) -> bool:
    Session(port).close()
    return True


def _verdicts(figures: list[Figure], sizes: list[int]) -> bool:
    """Print the largest/smallest rate ratios (target >= 0.5); True when one misses it."""
    rates = {(f.size, f.operation, f.threads): f.rate for f in figures}
    small, large = min(sizes), max(sizes)
    missed = False
    print()
    for name in OPERATIONS:
        for threads in THREADS:
            ratio = rates[(large, name, threads)] / rates[(small, name, threads)]
            met = ratio >= 0.5  # noqa: PLR2004
            missed = missed or not met
            print(
                f"{name} {threads} session(s): {large}/{small} ratio {ratio:.2f}"
                f"  (target >= 0.50: {'met' if met else 'MISSED'})"
            )
    return missed


BENCH = common.Bench(
    name="netconf",
    description=__doc__.split("\n\n")[0],
    operations=tuple(OPERATIONS),
    options=lambda port: ["--restconf-port", str(common.free_port()), "--netconf-port", str(port)],
    ready=_ready,
    check_rejections=check_rejections,
    measure=measure,
    columns=(11, "sessions", "rpc/s"),
    verdicts=_verdicts,
    not_ready=(OSError, EOFError, paramiko.SSHException),
)


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print the table, the rate ratios and the verdict."""
    return common.main(BENCH, argv)


if __name__ == "__main__":
    sys.exit(main())
