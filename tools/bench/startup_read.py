"""Start-up with 100k entries persisted, and full reads, measured in process (server time).

Run with ``python -m tools.bench.startup_read [--state DIR] [--size N]`` from the repository
root. The first run seeds ``--size`` entries of ``tests/yang/bench-list@2026-11-30.yang`` into
the state directory (minutes on a loaded machine) and keeps it; every run then opens a core
on it (snapshot load, journal replay, validation: the start-up of ``catsctl serve`` before
its listeners) and times, as the best of ``--repeat``:

* the core's read of the whole bench container, printed as XML and as JSON (what a RESTCONF
  GET of the whole list returns);
* NETCONF get-config replies, serialised, without a filter and with subtree filters (the
  whole container; every entry, which the core selects on its tree);
* the process's RSS after the reads, and after one edit of an entry's weight (which needs no
  index and links startup's snapshot as loaded), then the clean close (the compaction).

Each figure is printed as wall and CPU seconds of this process with the load average: on a
shared machine the CPU seconds are what compare (targets of issue 21: start-up <= 1.0 s,
full get-config <= 0.3 s).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    ReadRequest,
)
from controller.model.paths import PathResolver
from controller.model.schema import Encoding
from controller.model.serverschema import server_schema
from controller.netconf.messages import BASE_NS, reply, to_bytes
from controller.netconf.outcome import Outcome, raw_data
from controller.netconf.reads import Filter, Reads
from controller.statedir import seed_running
from controller.types import DataPath
from tools.bench import common

BL = "urn:example:bench-list"
BENCH = DataPath("/bench-list:bench")


def timed(label: str, run: Callable[[], object], repeat: int) -> None:
    """Print the best wall and CPU seconds of ``repeat`` runs."""
    wall = cpu = float("inf")
    size = 0
    for _ in range(repeat):
        began, began_cpu = time.perf_counter(), time.process_time()
        out = run()
        wall = min(wall, time.perf_counter() - began)
        cpu = min(cpu, time.process_time() - began_cpu)
        size = len(out) if isinstance(out, (str, bytes)) else 0
    load = os.getloadavg()[0]
    print(f"{label:<44} wall {wall:7.3f} s  cpu {cpu:6.3f} s  {size:>9} bytes  load {load:.1f}")


def rss_mib() -> float:
    """The resident set size of this process (``VmRSS``), in MiB."""
    status = Path("/proc/self/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def edit_one(core: Core, size: int) -> None:
    """Merge one entry (its weight changed), as an edit session would."""
    key = size // 2
    entry = {"id": key, "weight": 1 + (key + 1) % 1000}
    path = DataPath(f"/bench-list:bench/entry[id='{key}']")
    document = json.dumps({"bench-list:entry": [entry]})
    core.edit(DatastoreName.RUNNING, [Edit(EditOperation.MERGE, path, document)], SYSTEM)


def get_config(reads: Reads, filter_: Filter | None) -> bytes:
    """A get-config reply as the NETCONF session serialises it."""
    attributes = [("message-id", "1")]
    raw = reads.read_raw(DatastoreName.RUNNING, SYSTEM, content=Content.CONFIG, filter_=filter_)
    if raw is not None:
        outcome = raw_data(raw)
    else:
        data = etree.Element(f"{{{BASE_NS}}}data", nsmap={None: BASE_NS})
        data.extend(
            reads.read(DatastoreName.RUNNING, SYSTEM, content=Content.CONFIG, filter_=filter_)
        )
        outcome = Outcome((data,))
    return outcome.serialize(to_bytes(reply(attributes, outcome.children)))


def main(argv: list[str] | None = None) -> int:
    """Seed if needed, open the core, time the reads."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(tempfile.gettempdir()) / "cats-bench-startup-100k"
    parser.add_argument("--state", type=Path, default=default)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    schema = server_schema((common.YANG_DIR,))
    fresh = not args.state.exists()
    began, began_cpu = time.perf_counter(), time.process_time()
    core = Core(schema, args.state)
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    load = os.getloadavg()[0]
    if fresh:
        init = args.state.parent / f"{args.state.name}-init.json"
        init.write_text(json.dumps(common.seed(args.size)))
        seed_running(core, init)
        print(f"seeded {args.size} entries into {args.state}: run again to time the start-up")
    else:
        print(f"{'start-up (core open) with the persisted state':<44} wall {wall:7.3f} s  "
              f"cpu {cpu:6.3f} s  load {load:.1f}")  # fmt: skip
    reads = Reads(core, PathResolver(schema.context))

    def core_read(encoding: Encoding) -> Callable[[], object]:
        request = ReadRequest(DatastoreName.RUNNING, BENCH, encoding)
        return lambda: core.read(request, SYSTEM).document

    def subtree(body: str) -> Filter:
        return Filter(subtree=(etree.fromstring(body),))

    timed("core read of the list, XML", core_read(Encoding.XML), args.repeat)
    timed("core read of the list, JSON (RESTCONF GET)", core_read(Encoding.JSON), args.repeat)
    timed("get-config, no filter", lambda: get_config(reads, None), args.repeat)
    whole = subtree(f'<bench xmlns="{BL}"/>')
    timed("get-config, subtree <bench/>", lambda: get_config(reads, whole), args.repeat)
    entries = subtree(f'<bench xmlns="{BL}"><entry/></bench>')
    timed("get-config, subtree <bench><entry/></bench>", lambda: get_config(reads, entries), 1)
    gc.collect()
    print(f"{'RSS after start-up and the reads':<44} {rss_mib():7.1f} MiB")
    timed("one edit of a weight (no index needed)", lambda: edit_one(core, args.size), 1)
    gc.collect()
    print(f"{'RSS after that edit':<44} {rss_mib():7.1f} MiB")
    timed("indexes built (as a unique edit builds them)", core.validator.ready, 1)
    gc.collect()
    print(f"{'RSS with the indexes built':<44} {rss_mib():7.1f} MiB")
    timed("clean close (compaction)", core.close, 1)
    schema.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
