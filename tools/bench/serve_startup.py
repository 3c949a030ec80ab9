"""``catsctl serve`` on a persisted 100k-entry state: time to serving, RSS idle and after edits.

Run with ``python -m tools.bench.serve_startup [--state DIR] [--runs N]`` from the repository
root, after ``python -m tools.bench.startup_read`` has seeded ``--state`` (the same default).
The state directory is copied once; each run starts ``catsctl serve`` on the copy (RESTCONF and
NETCONF on free loopback ports; the first run also makes the SSH host keys) and prints, with
the load average (the modules' bytecode is cached in the temporary folder, as an installed
server has it: the first run compiles them):

* the wall seconds until it serves, and its CPU seconds by then (interpreter, imports,
  schema, core open, listeners: ``utime + stime`` of ``/proc/PID/stat``). Serving is both:
  RESTCONF answers a request (401 without credentials: the listener starts once running is
  loaded) and the NETCONF port sends its SSH banner (host keys loaded). Then, apart, the
  seconds until the first data read is answered (GET of one entry): that adds the first
  login's password check, a SHA-512 crypt hash of 656,000 rounds (0.2-0.5 s of CPU in the
  login workers), a cost of each new credential, not of the start;
* its RSS once serving (idle) and after ``--edits`` RESTCONF PATCHes of distinct entries:
  of their weight and name (``--edit-kind plain``, what the indexes of ``unique`` and leafref
  do not read: they are never built) or of their unique address too (``--edit-kind unique``:
  the first edit builds them);
* the seconds SIGTERM takes (the clean shutdown folds the journal into the snapshot).

Targets of issue 21: start-up to serving <= 1.0 s, RSS idle at 100k entries <= 200 MiB.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools.bench import common, restconf


def rss_mib(pid: int) -> float:
    """The resident set size of a process, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def _netconf_banner(port: int) -> bool:
    """Whether the NETCONF port sends an SSH identification string (RFC 4253 4.2)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            return connection.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def _serving(restconf_port: int, netconf_port: int) -> bool:
    """Whether RESTCONF answers (a request without credentials: 401) and NETCONF listens."""
    try:
        connection = http.client.HTTPConnection("127.0.0.1", restconf_port, timeout=5)
        connection.request("GET", "/restconf/yang-library-version")
        status = connection.getresponse().status
    except OSError:
        return False
    return status == 401 and _netconf_banner(netconf_port)  # noqa: PLR2004


def _read(restconf_port: int) -> bool:
    """Whether a data read (one entry, with credentials) is answered."""
    try:
        return restconf.Client(restconf_port).call("GET", f"{restconf.ENTRY}=0")[0] == 200  # noqa: PLR2004
    except OSError:
        return False


def _patch_address(client: restconf.Client, key: int, run: int) -> int:
    """Merge a new unique address (one no entry has, nor had in an earlier run: the runs share
    the state) and weight into an entry."""
    address = f"moved-{run}-{key}"
    body = {"bench-list:entry": [{"id": key, "addr": address, "weight": 1 + key % 1000}]}
    return client.call("PATCH", f"{restconf.ENTRY}={key}", body)[0]


@dataclass(frozen=True)
class Workload:
    """The edits of a run: how many, over how many entries, of which kind."""

    edits: int
    size: int
    kind: str


def one_run(state: Path, folder: Path, work: Workload, run: int) -> None:
    """Start, measure, edit, measure, stop one server on the copy of ``state``."""
    copy = folder / "state"  # the first run makes the host keys and the history
    if not copy.exists():
        shutil.copytree(state, copy)
    port, netconf = common.free_port(), common.free_port()
    command = [
        sys.executable,
        "-m",
        "controller.cli",
        "serve",
        "--state-dir",
        str(copy),
        "--yang-dir",
        str(common.YANG_DIR),
        "--restconf-port",
        str(port),
        "--netconf-port",
        str(netconf),
        "--metrics-address",
        f"127.0.0.1:{common.free_port()}",
    ]
    log = (folder / "serve.log").open("wb")
    # compiled modules cached as an installed server has them (not in the checkout)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    began = time.monotonic()
    process = subprocess.Popen(command, cwd=common.ROOT, stdout=log, stderr=log, env=env)
    try:
        while True:
            if process.poll() is not None:
                raise SystemExit(f"catsctl serve exited: see {folder / 'serve.log'}")
            if _serving(port, netconf):
                break
            time.sleep(0.01)
        wall, cpu = time.monotonic() - began, common.cpu_seconds(process.pid)
        while not _read(port):
            time.sleep(0.01)
        read = time.monotonic() - began
        idle = rss_mib(process.pid)
        load = os.getloadavg()[0]
        print(
            f"to serving: wall {wall:6.2f} s  cpu {cpu:5.2f} s  first data read {read:5.2f} s  "
            f"RSS idle {idle:6.1f} MiB  load {load:.1f}"
        )
        client = restconf.Client(port)
        edit_began = time.monotonic()
        for number in range(work.edits):
            key = (number * 7919) % work.size
            if work.kind == "unique":
                status = _patch_address(client, key, run)
            else:
                status = restconf.patch(client, key)
            if status != 204:  # noqa: PLR2004
                raise SystemExit(f"PATCH answered {status}")
        took = time.monotonic() - edit_began
        print(
            f"after {work.edits} PATCHes ({work.kind}, {took:.1f} s): "
            f"RSS {rss_mib(process.pid):6.1f} MiB  "
            f"cpu {common.cpu_seconds(process.pid):5.2f} s  load {os.getloadavg()[0]:.1f}"
        )
    finally:
        stopped = time.monotonic()
        common.stop(process, timeout=60)
        log.close()
    print(f"SIGTERM to exit (compaction): {time.monotonic() - stopped:5.2f} s")


def main(argv: list[str] | None = None) -> int:
    """Run ``--runs`` servers one after the other."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(tempfile.gettempdir()) / "cats-bench-startup-100k"
    parser.add_argument("--state", type=Path, default=default)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--edit-kind", choices=("plain", "unique"), default="plain")
    args = parser.parse_args(argv)
    if not (args.state / "running.json").exists():
        raise SystemExit(f"no state in {args.state}: run python -m tools.bench.startup_read")
    with tempfile.TemporaryDirectory(prefix="cats-serve-startup-") as folder:
        for run in range(args.runs):
            work = Workload(args.edits, args.size, args.edit_kind)
            one_run(args.state, Path(folder), work, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
