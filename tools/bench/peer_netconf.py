"""The same NETCONF workload against any server: this project's or a peer's (netopeer2).

Run with ``python -m tools.bench.peer_netconf --port PORT [--host H --user U --password P]``
from the repository root, against a server whose running datastore holds the bench list of
``tests/yang/bench-list@2026-11-30.yang`` (``--seed N`` writes N entries and their targets
first, with one edit-config; docs/benchmarks.md says how to install the module in
netopeer2). Over plain paramiko sessions (base:1.1 chunked framing), for ``--seconds`` each,
interleaved with 1 and 8 sessions:

* ``get-config``: one entry by subtree filter;
* ``edit-config``: merge of one entry's name and weight into running;
* ``full read``: get-config of the whole bench container (the client's round trip: server
  time plus the transfer).

Run it against two servers one after the other (or alternately with ``--rounds``) and compare
the rates; it prints the load average with each figure, since absolute rates depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tools.bench import common, netconf
from tools.bench.group_commit import rate

BL = netconf.BL


def seed(session: netconf.Session, size: int) -> None:
    """Replace the bench container with ``size`` entries (common.seed's shape)."""
    document = common.seed(size)["bench-list:bench"]
    assert isinstance(document, dict)
    targets = "".join(f"<target><name>{t['name']}</name></target>" for t in document["target"])
    entries = "".join(
        "<entry>" + "".join(f"<{k}>{v}</{k}>" for k, v in entry.items()) + "</entry>"
        for entry in document["entry"]
    )
    reply = session.rpc(
        "<edit-config><target><running/></target><default-operation>merge</default-operation>"
        f'<config><bench xmlns="{BL}" xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" '
        f'nc:operation="replace">{targets}{entries}</bench></config></edit-config>'
    )
    if b"<ok/>" not in reply:
        raise SystemExit(f"seeding failed: {reply[:500]!r}")


def full_read(session: netconf.Session) -> tuple[float, int]:
    """Seconds and bytes of one get-config of the whole bench container."""
    began = time.perf_counter()
    reply = session.rpc(
        '<get-config><source><running/></source><filter type="subtree">'
        f'<bench xmlns="{BL}"/></filter></get-config>'
    )
    if b"<rpc-error" in reply:
        raise SystemExit(f"full read failed: {reply[:500]!r}")
    return time.perf_counter() - began, len(reply)


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Run the workload and print one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default=common.USER)
    parser.add_argument("--password", default=common.PASSWORD)
    parser.add_argument("--size", type=int, default=100_000, help="entries the list holds")
    parser.add_argument("--seed", action="store_true", help="write --size entries first")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)

    def session() -> netconf.Session:
        return netconf.Session(args.port, args.host, args.user, args.password)

    first = session()
    if args.seed:
        began = time.perf_counter()
        seed(first, args.size)
        print(f"seeded {args.size} entries in {time.perf_counter() - began:.1f} s")
    print(f"server {args.host}:{args.port}, {args.size} entries, load {_load()}")
    for round_ in range(1, args.rounds + 1):
        for name, operation in (
            ("get-config", netconf.get_entry),
            ("edit-config", netconf.edit_entry),
        ):
            for count in (1, 8):
                sessions = [session() for _ in range(count)]
                try:
                    per_s = rate(sessions, operation, args.size, args.seconds)
                finally:
                    for each in sessions:
                        each.close()
                print(
                    f"round {round_} {name:<12} {count} session(s): {per_s:8.1f}/s (load {_load()})"
                )
        seconds, size = min(full_read(first) for _ in range(3))
        print(f"round {round_} full read: {seconds:.3f} s for {size} bytes  (load {_load()})")
    first.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
