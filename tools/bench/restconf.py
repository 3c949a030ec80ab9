"""RESTCONF edit and read throughput of ``catsctl serve`` at 1k, 10k and 100k list entries.

Run with ``python -m tools.bench.restconf`` from the repository root. For each size it seeds
``tests/yang/bench-list@2026-11-30.yang`` (entries with a leafref, a ``unique`` address and a
mandatory name) through ``--init-data``, starts a real server on loopback, and measures over
keep-alive connections (``http.client``), with one client thread and with eight:

* ``PATCH``: plain merge of one entry's ``weight`` and ``name`` (validated edit);
* ``PUT``: replace one whole entry;
* ``GET``: read one entry.

It also sends edits that must be refused (dangling leafref, duplicate unique address, missing
mandatory name) and checks that each is refused and changes nothing, at every size. Targets:
at 100k entries at least 200 validated edits/s, and no less than half the 1k figure.
"""

from __future__ import annotations

import base64
import http.client
import json
import sys
from collections.abc import Callable

from tools.bench import common
from tools.bench.common import PASSWORD, TARGETS, THREADS, USER, Figure

TARGET_RATE = 200.0
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
JSON = "application/yang-data+json"
ENTRY = "/restconf/data/bench-list:bench/entry"


class Client:
    """One keep-alive connection."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, bytes]:
        """One request; returns status and body."""
        headers = {"Authorization": AUTH, "Accept": JSON}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = JSON
        self.connection.request(method, path, body=data, headers=headers)
        reply = self.connection.getresponse()
        return reply.status, reply.read()


Operation = Callable[[Client, int], int]


def patch(client: Client, key: int) -> int:
    """Merge a new weight and name into an entry."""
    body = {"bench-list:entry": [{"id": key, "weight": 1 + (key * 7) % 1000, "name": f"p{key}"}]}
    return client.call("PATCH", f"{ENTRY}={key}", body)[0]


def put(client: Client, key: int) -> int:
    """Replace an entry with the same address (its unique value stays its own)."""
    addr = f"10.{key >> 16}.{(key >> 8) & 255}.{key & 255}"
    body = {
        "bench-list:entry": [
            {"id": key, "name": f"r{key}", "addr": addr, "target": f"t{(key + 1) % TARGETS}"}
        ]
    }
    return client.call("PUT", f"{ENTRY}={key}", body)[0]


def get(client: Client, key: int) -> int:
    """Read one entry."""
    return client.call("GET", f"{ENTRY}={key}")[0]


OPERATIONS: dict[str, tuple[Operation, int]] = {
    "PATCH": (patch, 204),
    "PUT": (put, 204),
    "GET": (get, 200),
}


def measure(port: int, size: int, name: str, threads: int) -> Figure:
    """Run one operation from ``threads`` clients for SECONDS; latencies in ms."""
    operation, expected = OPERATIONS[name]

    def step(client: Client, key: int) -> int | None:
        status = operation(client, key)
        return None if status == expected else status

    clients = [Client(port) for _ in range(threads)]
    latencies, elapsed, failures = common.drive(clients, step, size)
    if failures:
        raise SystemExit(f"{name} at {size}: unexpected statuses {sorted(set(failures))}")
    return common.figure(size, name, threads, latencies, elapsed)


def check_rejections(port: int, size: int) -> list[str]:
    """Edits that must be refused, each with the datastore unchanged; returns the failures."""
    client = Client(port)

    def refuse(entry: dict[str, object]) -> str | None:
        status, _ = client.call("PUT", f"{ENTRY}={entry['id']}", {"bench-list:entry": [entry]})
        return None if 400 <= status < 500 else f"status {status}"  # noqa: PLR2004

    def exists(key: int) -> bool:
        return client.call("GET", f"{ENTRY}={key}")[0] != 404  # noqa: PLR2004

    return common.check_rejections(size, refuse, exists)


def _ready(port: int) -> bool:
    return Client(port).call("GET", "/restconf/yang-library-version")[0] == 200  # noqa: PLR2004


def _verdicts(figures: list[Figure], sizes: list[int]) -> bool:
    """Print the 100k/1k ratios and whether the targets hold; True when one does not."""
    small, large = min(sizes), max(sizes)
    rates = {(f.size, f.operation, f.threads): f.rate for f in figures}
    missed = False
    print()
    for name in ("PATCH", "PUT", "GET"):
        for threads in THREADS:
            low, high = rates[(small, name, threads)], rates[(large, name, threads)]
            ratio = high / low
            line = f"{name:<6} {threads} thread(s): {large}/{small} ratio {ratio:.2f}"
            if name != "GET":
                ok = high >= TARGET_RATE and ratio >= 0.5  # noqa: PLR2004
                missed = missed or not ok
                line += (
                    f"  (target >= {TARGET_RATE:.0f}/s and >= 0.50: {'met' if ok else 'MISSED'})"
                )
            print(line)
    return missed


BENCH = common.Bench(
    name="restconf",
    description=__doc__.split("\n\n")[0],
    operations=tuple(OPERATIONS),
    options=lambda port: ["--restconf-port", str(port)],
    ready=_ready,
    check_rejections=check_rejections,
    measure=measure,
    columns=(6, "threads", "req/s"),
    verdicts=_verdicts,
)


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print the table, the ratios and the verdicts."""
    return common.main(BENCH, argv)


if __name__ == "__main__":
    sys.exit(main())
