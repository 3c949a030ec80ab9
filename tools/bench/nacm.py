"""What access control (RFC 8341) costs: NACM on with 20 rules against NACM off, at 100k entries.

Run with ``python -m tools.bench.nacm`` from the repository root. It seeds
``tests/yang/bench-list@2026-11-30.yang`` with 100k entries twice: once with ``enable-nacm``
false, once with the bench user in a group whose rule-list holds 20 rules (19 that a bench
request must be checked against and passes: denials of other modules, operations and entries,
and one read denial of a single entry's address, so a read of the whole list is filtered per
entry; then a permit). Against a real ``catsctl serve`` each time it measures, with one client:

* RESTCONF PATCH of one entry and GET of one entry;
* NETCONF edit-config of one entry and get-config of one entry (subtree filter);
* the read of the whole 100k-entry list over RESTCONF (median of 3), filtered per entry with
  NACM on.

Targets (the access-control issue): each single-entry rate with NACM on at least 0.8x the rate
with it off; the filtered whole-list read at most 2x the unfiltered one.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tools.bench import common, netconf, restconf
from tools.bench.common import USER

SIZE = 100_000
MIN_RATIO = 0.8
MAX_FILTERED = 2.0
BL = "bench-list"
ENTRY = f"/{BL}:bench/entry"
NC = "ietf-netconf"


def _rule(name: str, action: str, **fields: str) -> dict[str, str]:
    rule = {"name": name, "action": action}
    rule.update({key.replace("_", "-"): value for key, value in fields.items()})
    return rule


def twenty_rules() -> list[dict[str, str]]:
    """19 rules a bench request is checked against and passes, then a permit of the rest."""
    rules = [
        _rule(f"no-{module}", "deny", module_name=module)
        for module in ("ietf-system", "ietf-cats-steering", "ietf-cats-sci")
    ]
    rules += [  # other entries' writes
        _rule(
            f"e{n}", "deny", path=f"/{BL}:bench/entry[id='{SIZE + n}']", access_operations="update"
        )
        for n in range(8)
    ]
    rules += [
        _rule(
            f"no-{rpc}", "deny", module_name="ietf-netconf", rpc_name=rpc, access_operations="exec"
        )
        for rpc in ("kill-session", "delete-config", "copy-config", "lock")
    ]
    rules += [
        _rule(f"no-{name}", "deny", module_name="ietf-cats-service-metrics", notification_name=name)
        for name in ("cst-entry-changed", "nst-entry-changed", "report-refused")
    ]
    hidden = f"{ENTRY}[id='7']/addr"
    rules.append(_rule("hide-one-address", "deny", path=hidden, access_operations="read"))
    rules.append(_rule("the-rest", "permit"))
    assert len(rules) == 20  # noqa: PLR2004 - the bench's premise
    return rules


def policies() -> dict[str, dict[str, object]]:
    """The two policies compared."""
    on: dict[str, object] = {
        "groups": {"group": [{"name": "bench", "user-name": [USER]}]},
        "rule-list": [{"name": "bench", "group": ["bench"], "rule": twenty_rules()}],
    }
    return {"off": {"enable-nacm": False}, "on": on}


ROUNDS = 3


def rate(operation: Callable[[int], bool], seconds: float = 1.5) -> float:
    """Operations per second of one client over ``seconds``."""
    done, key = 0, 11
    deadline = time.monotonic() + seconds
    began = time.monotonic()
    while time.monotonic() < deadline:
        if not operation(key % SIZE):
            raise SystemExit(f"an operation on entry {key % SIZE} failed")
        done += 1
        key += 7919
    return done / (time.monotonic() - began)


def whole_read(client: restconf.Client) -> float:
    """Seconds to read the whole 100k-entry list over RESTCONF."""
    began = time.perf_counter()
    status, body = client.call("GET", f"/restconf/data/{BL}:bench")
    elapsed = time.perf_counter() - began
    if status != 200 or body.count(b'"id"') < SIZE - 1:  # noqa: PLR2004
        raise SystemExit(f"the whole-list read failed: {status}")
    return elapsed


def measure(port: int, netconf_port: int) -> dict[str, float]:
    """One round of the figures of one running server."""
    client = restconf.Client(port)
    session = netconf.Session(netconf_port)
    try:
        return {
            "RESTCONF PATCH /s": rate(lambda key: restconf.patch(client, key) == 204),  # noqa: PLR2004
            "RESTCONF GET /s": rate(lambda key: restconf.get(client, key) == 200),  # noqa: PLR2004
            "NETCONF edit-config /s": rate(lambda key: netconf.edit_entry(session, key)),
            "NETCONF get-config /s": rate(lambda key: netconf.get_entry(session, key)),
            "whole-list read s": whole_read(client),
        }
    finally:
        session.close()


@contextlib.contextmanager
def server(mode: str, nacm: dict[str, object], folder: Path) -> Iterator[tuple[int, int]]:
    """A seeded ``catsctl serve`` with one policy: its RESTCONF and NETCONF ports."""
    init = folder / f"init-{mode}.json"
    init.write_text(json.dumps(common.seed(SIZE, nacm)))
    port, netconf_port = common.free_port(), common.free_port()
    command = [
        *(sys.executable, "-m", "controller.cli", "serve"),
        *("--state-dir", str(folder / f"state-{mode}"), "--yang-dir", str(common.YANG_DIR)),
        *("--init-data", str(init), "--restconf-port", str(port)),
        *("--netconf-port", str(netconf_port)),
    ]
    with (folder / f"serve-{mode}.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=common.ROOT, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + common.START_TIMEOUT_S
            while True:
                try:
                    if restconf.Client(port).call("GET", "/restconf/yang-library-version")[0]:
                        break
                except (OSError, http.client.HTTPException):
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"catsctl serve ({mode}) did not start") from None
                    time.sleep(0.2)
            yield port, netconf_port
        finally:
            common.stop(process, timeout=60)


def median_figures(rounds: list[dict[str, float]]) -> dict[str, float]:
    """The median of each figure over the rounds."""
    return {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}


def main() -> int:
    """Both servers run side by side and are measured in alternating rounds (a shared machine's
    load then weighs on both alike); the medians, ratios and verdicts are printed."""
    print(f"NACM bench: {SIZE} entries, one client; load average {os.getloadavg()[0]:.2f}")
    rounds: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="nacm-") as temp, contextlib.ExitStack() as stack:
        ports = {
            mode: stack.enter_context(server(mode, nacm, Path(temp)))
            for mode, nacm in policies().items()
        }
        for _ in range(ROUNDS):
            for mode in ("off", "on"):
                rounds[mode].append(measure(*ports[mode]))
    off, on = (median_figures(rounds[mode]) for mode in ("off", "on"))
    print(f"load average after: {os.getloadavg()[0]:.2f}; medians of {ROUNDS} rounds")
    print(f"\n{'figure':<24} {'NACM off':>10} {'NACM on':>10} {'on/off':>8}")
    failed = False
    for name in off:
        ratio = on[name] / off[name]
        print(f"{name:<24} {off[name]:>10.2f} {on[name]:>10.2f} {ratio:>8.2f}")
        if name.endswith("/s") and ratio < MIN_RATIO:
            print(f"  MISSED: {name} with NACM on is {ratio:.2f}x the rate off (>= {MIN_RATIO})")
            failed = True
        if name.endswith(" s") and ratio > MAX_FILTERED:
            print(
                f"  MISSED: the filtered read takes {ratio:.2f}x the unfiltered (<= {MAX_FILTERED})"
            )
            failed = True
    print("all targets met" if not failed else "some targets missed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
