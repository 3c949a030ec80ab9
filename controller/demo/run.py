"""``catsctl demo``: start the system on loopback, play the stages, print PASS/FAIL per step
and a summary; exit 0 only if everything happened as the drafts say (service-metrics-op 7,
agent draft 8.4; docs/architecture.md)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

import requests

from controller.demo.bed import Bed, BedSettings, start_bed
from controller.demo.client import RestconfError
from controller.demo.console import console_lines, start_console
from controller.demo.episode import CPS_USER, GATEWAY_USER, SESSION
from controller.demo.forwarders import INGRESS_NAME, ST, USER
from controller.demo.launch import WaitTimeout
from controller.demo.stages import STAGES, check_model
from controller.demo.steps import Run, Stage, Step
from controller.demo.table import grid, verdict
from controller.demo.topology import SCIS

SIGTERM = signal.SIGTERM
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
FAILURES = (WaitTimeout, RestconfError, RuntimeError, requests.RequestException, OSError)


@dataclass(frozen=True)
class DemoOptions:
    """The command line: state directory, --keep, the stages to play, scenario B's delay,
    the path delay to candidate B in stage G."""

    state_dir: Path | None = None
    keep: bool = False
    only: frozenset[str] = frozenset()
    congested_delay: str = "20"
    b_path_delay: str = "400"


class Printer:
    """Prints to ``out`` line by line, flushed, so the demo reads as it plays."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out, flush=True)


def legend(bed: Bed) -> list[str]:
    """The draft's names and the loopback locators standing in for them."""
    rows = [
        [
            s.label,
            s.draft_csci_id,
            bed.csci(s.label),
            s.cs_id,
            f"{s.site} via {s.egress}",
            str(s.price),
            ", ".join(f"{i.name} ({i.capacity} slots, {i.service_ms} ms)" for i in s.instances),
        ]
        for s in SCIS
    ]
    header = ["SCI", "draft CSCI-ID", "loopback CSCI-ID", "CS-ID", "site", "price", "instances"]
    return grid(header, rows) + forwarder_legend(bed)


def forwarder_legend(bed: Bed) -> list[str]:
    """The forwarders, when started: identifier, role, data-plane and NETCONF ports."""
    if not bed.forwarders:
        return []
    rows = [
        [f.spec.name, f.spec.forwarder_id, f.spec.role, f.url, f"127.0.0.1:{f.netconf}"]
        for f in bed.forwarders.values()
    ]
    return ["", *grid(["forwarder", "forwarder-id", "role", "data plane", "NETCONF"], rows)]


def play(stage: Stage, run: Run, say: Printer) -> tuple[list[Step], bool]:
    """Play one stage; its steps, and whether the demo can go on (no step broke)."""
    say("", f"{stage.key}. {stage.title}")
    if stage.not_yet is not None:
        say(f"  not yet: {stage.not_yet}")
        return [], True
    done: list[Step] = []
    for step_fn in stage.steps:
        try:
            step = step_fn(run)
        except FAILURES as exc:
            name = (step_fn.__doc__ or step_fn.__name__).splitlines()[0]
            done.append(Step(stage.key, name, (), (str(exc),)))
            say(*verdict(stage.key, name, done[-1].problems))
            return done, False
        say(*step.lines, *verdict(step.step_id, step.title, step.problems))
        done.append(step)
    return done, True


def connect_lines(bed: Bed, password: str) -> list[str]:
    """How to reach the running system with curl, netconf-console2 and ncclient."""
    rc, nc = bed.ports["restconf"], bed.ports["netconf"]
    root, sm = f"http://127.0.0.1:{rc}/restconf", "ietf-cats-service-metrics"
    ns = f"urn:ietf:params:xml:ns:yang:{sm}"
    sci1 = bed.scis["SCI-1"].url
    lines = [
        "",
        "The system stays up until Ctrl-C. Connect as admin / " + password + ":",
        f"  curl -s -u admin:{password} {root}/data/{sm}:computing-service-table",
        f"  curl -s -u admin:{password} -X POST -H 'Content-Type: application/yang-data+json' \\",
        f"       {root}/operations/{sm}:select-service \\",
        f'       -d \'{{"{sm}:input": {{"cs-id": "ARS", "ingress": "10.0.0.1"}}}}\'',
        f"  netconf-console2 --host 127.0.0.1 --port {nc} -u admin -p {password} "
        f"--get -x /{sm}:selection-decisions",
        "  python3 -c \"from ncclient import manager; m = manager.connect(host='127.0.0.1', "
        f"port={nc}, username='admin', password='{password}', hostkey_verify=False, "
        f"allow_agent=False, look_for_keys=False); print(m.get(('subtree', "
        f'\'<network-service-table xmlns=\\"{ns}\\"/>\')).xml)"',
        f"  curl -s {sci1}/ars      # a client request through SCI-1 (188.3.67.3:67)",
        f"  export CATSCTL_URL=http://127.0.0.1:{rc} CATSCTL_USER=admin "
        f"CATSCTL_PASSWORD={password}",
        "  catsctl show cst; catsctl show decisions; catsctl config history; catsctl audit",
    ]
    serve = next((c for c in bed.launcher.children if c.kind == "serve"), None)
    metrics = serve.management_url() if serve is not None else None
    if metrics:
        lines.append(f"  curl -s {metrics}/metrics   # the C-PS's Prometheus metrics; /readyz")
    if INGRESS_NAME in bed.forwarders:
        ingress = bed.forwarders[INGRESS_NAME]
        lines += [
            f"  curl -si {ingress.url}/cats/ARS/ars   # through the ingress forwarder 10.0.0.1",
            f"  netconf-console2 --host 127.0.0.1 --port {ingress.netconf} -u {USER} "
            f"-p {bed.settings.agent_password} --get-config -x /{ST}:steering",
            f"  catsctl explain --forwarder {INGRESS_NAME} --service ARS   # why its entry",
        ]
    return lines + agent_lines(bed, password)


def agent_lines(bed: Bed, password: str) -> list[str]:
    """How to look at the agent sessions (stage G), when it played."""
    if not bed.locators:
        return []
    root, agent = f"{bed.cps.root}/data", "ietf-cats-agent-selection"
    folder, secret = bed.settings.folder, bed.settings.agent_password
    csma = next(iter(bed.csmas.values())).restconf
    return [
        f"  curl -s -u admin:{password} {root}/{agent}:agent-selection/sessions"
        "   # decision records",
        f"  curl -s -u admin:{password} {root}/{agent}:agent-selection/candidates",
        f"  curl -s -u {CPS_USER}:{secret} "
        f"http://127.0.0.1:{csma}/restconf/data/{agent}:agent-selection   # a C-SMA's state view",
        f"  catsctl gateway {folder / 'step30-episode.json'} "
        f"--cps-url {bed.cps.root} --username {GATEWAY_USER} "
        f"--password-file {folder / 'gateway.password'} --check",
        f"  (the session {SESSION} is closed; a copy of the description with another "
        "session-id plays it again)",
    ]


def _wait_for_signal() -> None:
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, SIGTERM)}
    try:
        stop.wait()
    finally:
        for signum, action in previous.items():
            signal.signal(signum, action)


@contextlib.contextmanager
def _folder(options: DemoOptions, say: Printer) -> Iterator[tuple[Path, list[bool]]]:
    """The state directory: --state-dir, or a fresh one removed unless something failed."""
    if options.state_dir is not None:
        options.state_dir.mkdir(parents=True, exist_ok=True)
        yield options.state_dir, [False]
        return
    folder = Path(tempfile.mkdtemp(prefix="cats-demo-"))
    failed = [True]
    try:
        yield folder, failed
    finally:
        if failed[0]:
            say(f"State and logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does: every `with` block unwinds


def run_demo(options: DemoOptions, out: TextIO) -> int:
    """Run the demo; the process exit code (0 when every step passed)."""
    say = Printer(out)
    began = time.monotonic()
    previous = signal.signal(SIGTERM, _terminate)
    try:
        return _run(options, say, began)
    except KeyboardInterrupt:  # the `with` blocks have stopped every process by now
        say("", "Interrupted: every process of the demo was stopped.")
        return INTERRUPTED
    finally:
        signal.signal(SIGTERM, previous)


def _run(options: DemoOptions, say: Printer, began: float) -> int:
    say("CATS controller demo: service-metrics-op section 7 and agent-selection 8.4 on loopback")
    model = check_model()
    say("", "M. The model (YANG modules and yang/examples/)", *model.lines)
    say(*verdict("M", model.title, model.problems))
    steps = [model]
    stages = [s for s in STAGES if not options.only or s.key in options.only]
    with _folder(options, say) as (folder, failed), contextlib.ExitStack() as stack:
        agents = any(s.key == "G" for s in stages)
        steered = agents or any(s.key == "F" for s in stages)
        more = ", 3 forwarders" if steered else ""
        more += " (the C-SMAs also answering for agent state)" if agents else ""
        say(
            "",
            f"S. Starting the C-PS, 5 service instances, 3 SCIs, 2 C-SMAs, a C-NMA{more} "
            f"({folder})",
        )
        settings = BedSettings(folder, forwarders=steered, agents=agents, progress=say)
        try:
            bed = stack.enter_context(start_bed(settings))
        except FAILURES as exc:
            say(*verdict("S", "the system starts", [str(exc)]))
            return 1
        say(f"  up in {time.monotonic() - began:.1f} s; the draft's names on loopback:")
        say(*legend(bed))
        run = Run(bed, options.congested_delay, options.b_path_delay)
        for stage in stages:
            done, going = play(stage, run, say)
            steps += done
            if not going:
                break
        failed[0] = not all(s.passed for s in steps)
        say(*summary(steps, time.monotonic() - began))
        if options.keep:
            say(*connect_lines(bed, bed.settings.admin_password))
            try:
                say(*console_lines(start_console(bed), bed.settings))
            except FAILURES as exc:
                say("", f"The operator console did not start: {exc}")
            _wait_for_signal()
    return 1 if failed[0] else 0


def summary(steps: list[Step], elapsed: float) -> list[str]:
    """One line per step and the totals."""
    passed = sum(s.passed for s in steps)
    lines = ["", "Summary"]
    lines += [f"  {'PASS' if s.passed else 'FAIL'} {s.step_id}: {s.title}" for s in steps]
    word = "all passed" if passed == len(steps) else f"{len(steps) - passed} FAILED"
    lines.append(f"{passed}/{len(steps)} steps passed ({word}) in {elapsed:.1f} s")
    return lines
