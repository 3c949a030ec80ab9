"""Building and encoding a 1,000-entry CST report: the SDK's objects against plain dicts.

Usage: ``python -m tools.bench.sdk [--entries N] [--xml]``. Three ways to produce the body of
one report-service-metrics (service-metrics-op 8) with N entries (cs-id, csci-id, GAS,
Computing Time, price, health, egress, source), each timed from nothing to the JSON text:

- ``hand-built dicts``: RFC 7951 members written by hand and ``json.dumps`` (what the agents do);
- ``sdk bulk``: :func:`controller.sdk.bulk.cst_entry` and
  :func:`~controller.sdk.bulk.service_report`, the SDK's fast path;
- ``sdk objects``: the pyangbind input object of the RPC filled entry by entry, encoded by
  :func:`controller.sdk.objects.to_members` (and with ``--xml``, also to XML, the NETCONF form).

It prints seconds, entries per second and the ratio to the dict path; every body is checked
to be the same data (libyang's canonical form) so no path is timed on a different document.
The SDK's docstring and the README state the rule this bench holds it to: more than 10x slower
than dicts, and the SDK offers the bulk path.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from controller.model import Encoding, InstanceKind, Schema, nodes
from controller.sdk import bulk, objects
from controller.sdk.objects import SM
from controller.types import Json

TIMESTAMP = "2026-11-30T10:00:00Z"
LIMIT = 10.0
"""The ratio above which the SDK must offer (and this bench shows) a fast path."""


def values(n: int) -> tuple[str, str, int, str, int, str, str, str]:
    """The n-th entry's values: CS-ID, CSCI-ID, GAS, Computing Time, price, health, ..."""
    return (
        f"svc-{n % 50}",
        f"10.{n // 250}.{n % 250}.1:80",
        100 + n % 400,
        f"{5 + n % 7}.5",
        10 + n % 5,
        "healthy",
        f"10.{n // 250}.{n % 250}.254",
        f"sci-{n}",
    )


def by_hand(count: int) -> str:
    """Members written as dicts, as the agents write them."""
    entries = []
    for n in range(count):
        cs_id, csci, gas, ct, price, health, egress, source = values(n)
        entries.append(
            {
                "cs-id": cs_id,
                "csci-id": csci,
                "gas": gas,
                "computing-time": ct,
                "price": price,
                "health": health,
                "egress": egress,
                "source": source,
            }
        )
    members = {
        "sequence-number": "1",
        "timestamp": TIMESTAMP,
        "report-type": "full",
        "entry": entries,
    }
    return json.dumps({f"{SM}:input": members})


def by_bulk(count: int) -> str:
    """The SDK's fast path."""
    entries = []
    for n in range(count):
        cs_id, csci, gas, ct, price, health, egress, source = values(n)
        entries.append(
            bulk.cst_entry(
                cs_id,
                csci,
                gas=gas,
                computing_time=ct,
                price=price,
                health=health,
                egress=egress,
                extra={"source": source},
            )
        )
    members = bulk.service_report(1, entries, timestamp=TIMESTAMP)
    return json.dumps({f"{SM}:input": members})


def by_objects(count: int, *, xml: bool = False) -> str:
    """The SDK's pyangbind input object, filled and encoded."""
    report = objects.operation(SM, "report-service-metrics").input
    report.sequence_number, report.timestamp, report.report_type = 1, TIMESTAMP, "full"
    for n in range(count):
        cs_id, csci, gas, ct, price, health, egress, source = values(n)
        entry = report.entry.add(cs_id=cs_id, csci_id=csci)
        entry.gas, entry.computing_time, entry.price = gas, ct, price
        entry.health, entry.egress, entry.source = health, egress, source
    if xml:
        objects.xml_text(report)
    return json.dumps({f"{SM}:input": objects.to_members(report)})


def canonical(schema: Schema, body: str) -> Any:
    """The report as libyang prints it (validated), to compare the three bodies."""
    members = json.loads(body)[f"{SM}:input"]
    text = json.dumps({f"{SM}:report-service-metrics": members})
    schema.validate(text, InstanceKind.RPC)
    tree, op = nodes.parse_op(
        schema.context.cdata, text, Encoding.JSON, nodes.lib.LYD_TYPE_RPC_YANG
    )
    printed = nodes.print_tree(op, Encoding.JSON)
    nodes.free_all(tree)
    return json.loads(printed)


def timed(build: Callable[[int], str], count: int) -> tuple[float, str]:
    """Seconds to build and encode, and the body."""
    start = time.perf_counter()
    body = build(count)
    return time.perf_counter() - start, body


def main(argv: list[str] | None = None) -> int:
    """Time the three paths; exit 1 if the bodies differ or the rule does not hold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--xml", action="store_true", help="objects: also encode to XML")
    args = parser.parse_args(argv)
    objects.binding_module(SM)  # the import (about 1 s without bytecode) is not the build
    paths: list[tuple[str, Callable[[int], str]]] = [
        ("hand-built dicts", by_hand),
        ("sdk bulk", by_bulk),
        (
            "sdk objects" + (" (+xml)" if args.xml else ""),
            lambda count: by_objects(count, xml=args.xml),
        ),
    ]
    results: Json = {}
    print(f"report-service-metrics with {args.entries} entries, built and encoded to JSON")
    print(f"{'path':<24}{'seconds':>10}{'entries/s':>12}{'x dicts':>10}")
    for name, build in paths:
        seconds, body = timed(build, args.entries)
        results[name] = (seconds, body)
        ratio = seconds / results["hand-built dicts"][0]
        print(f"{name:<24}{seconds:>10.4f}{args.entries / seconds:>12.0f}{ratio:>10.1f}")
    with Schema() as schema:
        documents = [canonical(schema, body) for _, body in results.values()]
    same = all(document == documents[0] for document in documents)
    print("bodies: the same data (libyang canonical form)" if same else "bodies DIFFER")
    slow = results[paths[2][0]][0] / results["hand-built dicts"][0]
    bulk_ratio = results["sdk bulk"][0] / results["hand-built dicts"][0]
    print(
        f"objects are {slow:.0f}x the dict path (limit {LIMIT:.0f}x): "
        f"{'the bulk path is the fast path' if slow > LIMIT else 'within the limit'}; "
        f"bulk is {bulk_ratio:.1f}x"
    )
    return 0 if same and bulk_ratio <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
