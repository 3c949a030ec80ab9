"""Stage G: an agent session through the step-30 and tail-event episode of
agent-selection-mapping 8.4 (and the step-30 comparison of 6.8), played by a real
``catsctl gateway`` against the C-PS, its commitment steering the ingress forwarder.

G1 configures the ingress forwarder to handle the agent service too, waits until the C-PS
holds what the site C-SMAs advertised of B and C themselves (MSG-4: each ``catsctl csma`` is
configured with its candidate's capability, the draft's numbers, and advertises it at start and
every 15 s), sends the C-NMA's paths to them (MSG-7, under the C-NMA's user; why not by
``catsctl cnma``: controller.demo.episode), and runs ``catsctl gateway`` on agents/gateway/examples/
step30-episode.json with the session left open at the end (``close: false``), so that the
gateway checks the example's own expectations and the demo can look at the commitment's rule
before the session closes; it prints the session's decision records. G2 finds the commitment
as one ``steering/rule`` at the ingress forwarder. G3-G4 read the decision records: at step 30
C is kept although B reports more free capacity and computes faster, because moving the 7.5 GB
context to B costs a 3.0 s transfer (recompute: 128 s) that the gain over the horizon does not
cover; the retrieval tool still running after 4 s against 100 ms is a tail event, answered by
the reduced retrieval set without a migration (no reserve-state at any C-SMA). G5 closes the
session as the gateway would (MSG-16): the accounting shows the step's consumption, C's C-SMA
releases the state, the rule is removed from the forwarder.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from pathlib import Path

import requests
from prometheus_client.parser import text_string_to_metric_families

from controller.demo import records
from controller.demo.client import Restconf
from controller.demo.episode import (
    ADVERTISING_MS,
    AS,
    BY_LETTER,
    CANDIDATES,
    CPS_USER,
    GATEWAY_USER,
    SESSION,
    forwarding_advertisement,
    localized,
)
from controller.demo.forwarders import AGENT_CS_ID, INGRESS_NAME, ST, inventory, rules, steering
from controller.demo.launch import ROOT, WaitTimeout, wait_until
from controller.demo.steps import Run, Stage, Step
from controller.demo.table import grid
from controller.demo.topology import write_json
from controller.types import Json

EXAMPLE = ROOT / "agents" / "gateway" / "examples" / "step30-episode.json"
KEPT, OTHER = "C", "B"  # C holds the working set; B reports more free capacity
GATEWAY_TIMEOUT_S = 240.0  # the whole episode, on a loaded machine
GATEWAY_REQUEST_MS = 60_000  # each request of the gateway (its default, 10 s, is short under load)
ADVERTISED_TIMEOUT_S = 120.0  # the C-SMAs advertised at their start; a refusal retries in 15 s
ADVERTISED_METRIC = "cats_csma_advertisements_total"
RULE_TIMEOUT_S = 15.0
STEP = (1, 30)  # turn, step of the episode
HTTP_OK = 200
DRAFT_B_DELAY = "400"  # ms, the draft's forwarding p95 to B (--b-path-delay)
CONSUMED = {"time": Decimal(4600), "tokens": Decimal(2400)}  # the example's step-30 cost


def description(locators: dict[str, str], example: Path = EXAMPLE) -> Json:
    """The shipped episode with its candidates named by their CSCI-IDs and the session left
    open at its end (the demo closes it)."""
    document: Json = localized(json.loads(example.read_text(encoding="utf-8")), locators)
    for session in document["sessions"]:
        session["close"] = False
    return document


def _names(run: Run) -> dict[str, str]:
    """CSCI-ID -> the draft's letter."""
    return {csci_id: letter for letter, csci_id in run.bed.locators.items()}


def announced(document: Json) -> list[Json]:
    """The working-set elements the description's session announces."""
    found: list[Json] = document["sessions"][0]["descriptor"]["working-set"]["element"]
    return found


def _session(run: Run) -> Json:
    found = run.bed.cps.get(f"{AS}:agent-selection/sessions/session={SESSION}")
    (entry,) = found.get(f"{AS}:session", [{}])
    session: Json = entry
    return session


def _delays(run: Run) -> dict[str, float]:
    """The forwarding p95 of B (--b-path-delay), in seconds."""
    return {OTHER: float(Decimal(run.b_path_delay) / 1000)}


def _advertise_paths(run: Run) -> list[str]:
    """MSG-7 under the C-NMA's user (catsctl cnma cannot state the draft's p95 paths)."""
    ad = forwarding_advertisement(time.time(), run.bed.locators, _delays(run))
    client = Restconf(run.bed.cps.root, ad.user, run.bed.settings.agent_password)
    try:
        client.call(AS, ad.operation, ad.members)
    finally:
        client.close()
    which = ", ".join(_names(run)[c["csci-id"]] for c in ad.members["candidate"])
    return [f"    {ad.operation} for {which}: sent as {ad.user} would, under its user"]


def _advertised(run: Run, site: str) -> int:
    """How many advertise-capability the C-PS accepted from a site's ``catsctl csma`` (its
    ``cats_csma_advertisements_total{result="sent"}``); 0 while its /metrics does not answer."""
    url = f"http://127.0.0.1:{run.bed.csmas[site].metrics}/metrics"
    try:
        reply = requests.get(url, timeout=10)
    except requests.RequestException:
        return 0
    for family in text_string_to_metric_families(reply.text if reply.ok else ""):
        for sample in family.samples:
            if sample.name == ADVERTISED_METRIC and sample.labels.get("result") == "sent":
                return int(sample.value)
    return 0


def _advertised_by_csmas(run: Run) -> tuple[list[str], list[str]]:
    """Wait until the C-PS accepted MSG-4 from every site C-SMA (``catsctl csma`` itself,
    configured with its candidate's capability: the draft's numbers); the lines that say so,
    or the problem."""

    def counts() -> dict[str, int] | None:
        found = {c.site: _advertised(run, c.site) for c in CANDIDATES}
        return found if all(found.values()) else None

    try:
        accepted = wait_until(
            "the C-PS to accept advertise-capability from every site C-SMA",
            counts,
            timeout=ADVERTISED_TIMEOUT_S,
            seen=lambda: {c.csma: _advertised(run, c.site) for c in CANDIDATES},
        )
    except WaitTimeout as exc:
        return [], [f"{exc} (logs: {run.bed.settings.folder}/csma-ss*.log)"]
    return [
        f"    advertise-capability for {c.letter}: sent by catsctl csma {c.csma} itself from its "
        f"configuration, every {ADVERTISING_MS / 1000:g} s ({accepted[c.site]} accepted so far)"
        for c in CANDIDATES
    ], []


def legend_rows(locators: dict[str, str], delays: dict[str, float]) -> list[list[str]]:
    """The episode's candidates: where they are and what their C-SMAs advertise."""
    return [
        [
            c.letter,
            locators.get(c.letter, "-"),
            f"{c.site} via {c.egress}",
            c.csma,
            f"{c.spec.free_capacity:.1f}",
            f"{c.spec.wait * 1000:g}",
            f"{delays.get(c.letter, c.spec.delay) * 1000:g}",
            f"{c.spec.bw / 1e9:g}",
            ", ".join(c.spec.holds),
        ]
        for c in CANDIDATES
    ]


LEGEND_HEADER = [
    "candidate",
    "CSCI-ID",
    "site",
    "C-SMA",
    "free capacity",
    "queue p95 ms",
    "path p95 ms",
    "path GB/s",
    "holds (reuse keys)",
]


def episode_played(run: Run) -> Step:
    """8.4 step 30 played by ``catsctl gateway``: admitted at C, every expectation held."""
    title = "catsctl gateway plays the step-30 episode: admitted at C, its expectations hold"
    bed, settings = run.bed, run.bed.settings
    folder = settings.folder
    document = inventory(bed.forwarders, settings.agent_password, agents=True)
    bed.cps.put(f"{ST}:forwarders", document)  # the ingress handles the agent service too
    changed = "" if run.b_path_delay == DRAFT_B_DELAY else f"; B's path {run.b_path_delay} ms"
    advertised, problems = _advertised_by_csmas(run)
    lines = [
        f"    the candidates of the episode (the draft's numbers{changed}):",
        *grid(LEGEND_HEADER, legend_rows(bed.locators, _delays(run))),
        *advertised,
        *_advertise_paths(run),
    ]
    described = description(bed.locators)
    path = write_json(folder / "step30-episode.json", described)
    secret = folder / "gateway.password"
    secret.write_text(settings.agent_password + "\n", encoding="utf-8")
    exchanges = folder / "gateway-exchanges.json"
    began = time.monotonic()
    code, output = bed.launcher.run(
        "gateway",
        [
            "gateway",
            str(path),
            "--cps-url",
            bed.cps.root,
            "--username",
            GATEWAY_USER,
            "--password-file",
            str(secret),
            "--log",
            str(exchanges),
            "--timeout-ms",
            str(GATEWAY_REQUEST_MS),
        ],
        timeout=GATEWAY_TIMEOUT_S,
    )
    run.seen |= {"ended": time.monotonic(), "announced": announced(described)}
    run.seen["exchanges"] = json.loads(exchanges.read_text()) if exchanges.exists() else {}
    said = [line for line in output.splitlines() if line.strip()]
    last = said[-1] if said else "-"
    lines.append(
        f"    -> catsctl gateway {EXAMPLE.relative_to(ROOT)} (close: false) exited "
        f"{code} in {time.monotonic() - began:.1f} s: {last}"
    )
    session = run.seen["session"] = _session(run)
    lines += records.decision_table(session.get("decision-record", []), _names(run))
    problems += [f"the gateway: {line.strip()}" for line in said if "FAILED" in line]
    if code != 0:
        problems.append(f"catsctl gateway exited {code} (log: {folder / 'gateway.log'})")
    problems += records.admission_problems(session, bed.locators[KEPT])
    return Step("G1", title, tuple(lines), tuple(problems))


def _reserved(run: Run) -> list[str]:
    """Every reserve-state a C-SMA answered for the session: none without a migration."""
    found = []
    for site, exchanges in _csma_exchanges(run).items():
        found += [
            f"{site} answered reserve-state for {e.get('csci-id')}"
            for e in exchanges
            if e.get("operation") == "reserve-state"
        ]
    return found


def _csma_exchanges(run: Run) -> dict[str, list[Json]]:
    """What each site C-SMA answered for the session (its exchange log), by C-SMA."""
    found = {}
    for site, ports in run.bed.csmas.items():
        root = f"http://127.0.0.1:{ports.restconf}/restconf"
        client = Restconf(root, CPS_USER, run.bed.settings.agent_password)
        try:
            log = client.get(f"{AS}:agent-selection/c-sma").get(f"{AS}:c-sma", {})
        finally:
            client.close()
        name = next(c.csma for c in CANDIDATES if c.site == site)
        found[name] = [e for e in log.get("exchange", []) if e.get("session-id") == SESSION]
    names = _names(run)
    for exchanges in found.values():
        for e in exchanges:
            e["csci-id"] = [names.get(str(c), str(c)) for c in e.get("csci-id", [])]
    return found


def step30_kept(run: Run) -> Step:
    """6.8 and 8.4 at step 30: C kept though B reports more free capacity."""
    title = (
        "step 30: C kept though B reports more free capacity; at B a 3.0 s transfer "
        "against a 128 s recompute"
    )
    session: Json = run.seen.get("session", {})
    record = records.record_at(session, "t1-step-boundary")
    locators, names = run.bed.locators, _names(run)
    free = {locators[c.letter]: c.spec.free_capacity or 0.0 for c in CANDIDATES}
    lines = []
    if record is not None:
        change = record.get("change", {})
        chosen, target = names.get(str(record.get("selected"))), names.get(str(change.get("to")))
        lines = [
            f"    -> {records.local(record.get('outcome'))} {chosen}: moving to {target} costs "
            f"{change.get('cost')} ms (state cost = min(transfer, recompute), M49) against a "
            f"gain of {change.get('gain-time', '-')} s over {change.get('horizon-steps')} steps",
            *records.valuation_table(record, free, names),
        ]
    problems = records.boundary_problems(record, locators[KEPT], locators[OTHER])
    if free[locators[OTHER]] <= free[locators[KEPT]]:
        problems.append(f"{OTHER} does not report more free capacity than {KEPT}")
    problems += _reserved(run)
    return Step("G3", title, tuple(lines), tuple(problems))


def _overrun_line(run: Run) -> str:
    """The invalidation-notice the gateway sent, as its log has it."""
    sent = [
        e
        for e in run.seen.get("exchanges", {}).get("exchanges", [])
        if str(e.get("operation")).endswith("invalidation-notice")
    ]
    if not sent:
        return "    the gateway sent no invalidation-notice"
    progress = sent[-1].get("input", {}).get("step-progress", {})
    answer = "acted on" if sent[-1].get("output", {}).get("acted-on") else "not acted on"
    return (
        f"    the gateway reported step-overrun (MSG-14): {progress.get('endpoint')} still "
        f"running after {progress.get('elapsed')} ms, expected {progress.get('expected')} ms"
        f": {answer}"
    )


def tail_event(run: Run) -> Step:
    """8.4 T8: the overrun is a tail event; the reduced retrieval set, no migration."""
    title = (
        "the retrieval tool at 4 s against 100 ms is a tail event (T8): reduced retrieval "
        "set applied, no migration"
    )
    session: Json = run.seen.get("session", {})
    record = records.record_at(session, "t8-tail-event")
    known: list[Json] = run.seen.get("announced", [])
    names = _names(run)
    lines = [_overrun_line(run)]
    if record is not None:
        why = [
            r
            for r in records.reasons(record, names)
            if not r.startswith(("eligible", "state", "mov"))
        ]
        chosen = names.get(str(record.get("selected")))
        lines.append(f"    -> {records.local(record.get('outcome'))} {chosen}: " + "; ".join(why))
    lines += records.working_set_lines(session, known)
    reserved = _reserved(run)
    if not reserved and "handoff" not in session:
        lines.append("    no handoff: no reserve-state at csma-ss2 or csma-ss3 for the session")
    problems = records.tail_problems(record, session, run.bed.locators[KEPT], known) + reserved
    return Step("G4", title, tuple(lines), tuple(problems))


def _rules(run: Run) -> list[Json]:
    ingress = run.bed.forwarders[INGRESS_NAME]
    return rules(steering(ingress, run.bed.settings.agent_password), SESSION)


def _served(run: Run) -> dict[str, int]:
    """Requests each of the episode's instances has served, by letter."""
    return {
        letter: int(requests.get(f"http://{locator}/admin", timeout=5).json()["requests"])
        for letter, locator in run.bed.locators.items()
    }


def _through_ingress(run: Run) -> tuple[list[str], list[str]]:
    """A client request of the session's step 30 through the ingress forwarder (the C-TC's
    attribution in headers): it must reach C, and only C."""
    ingress = run.bed.forwarders[INGRESS_NAME]
    headers = {
        "CATS-Service-Id": AGENT_CS_ID,
        "CATS-Session-Id": SESSION,
        "CATS-Turn-Id": str(STEP[0]),
        "CATS-Step-Id": str(STEP[1]),
        "Connection": "close",
    }
    before = _served(run)
    try:
        reply = requests.get(f"{ingress.url}/infer", headers=headers, timeout=10)
        status, named = reply.status_code, reply.headers.get("CATS-CSCI-Id", "")
        commitment = reply.headers.get("CATS-Commitment-Id", "-")
    except requests.RequestException as exc:
        status, named, commitment = 0, "", str(exc)
    delta = {k: v - before[k] for k, v in _served(run).items()}
    lines = [
        f"    -> a client request of step 30 of {SESSION} through the ingress forwarder: "
        f"{status}, CATS-CSCI-Id {named or '-'}, CATS-Commitment-Id {commitment}; served by "
        + ", ".join(f"{k} {v}" for k, v in sorted(delta.items()))
    ]
    problems = [] if status == HTTP_OK else [f"the request through the ingress got {status}"]
    if named != run.bed.locators[KEPT] or delta != {KEPT: 1, OTHER: 0}:
        problems.append(f"the request did not land at {KEPT} only: {named or '-'}, {delta}")
    return lines, problems


def rule_installed(run: Run) -> Step:
    """P8, MSG-10: the commitment is one steering rule at the ingress forwarder."""
    title = (
        "the commitment to C is one steering rule at the ingress forwarder (P8, MSG-10); "
        "a request of step 30 lands at C"
    )
    session: Json = run.seen.get("session", {})
    egress = BY_LETTER[KEPT].egress

    def as_committed() -> list[Json]:
        """The session's rules once they hold the commitment as it stands (the push after
        the step boundary may follow the admission's by a moment)."""
        found = _rules(run)
        return found if found and not records.rule_problems(found, session, egress) else []

    try:
        found = wait_until(
            f"the rule for {SESSION} at the ingress forwarder", as_committed, timeout=RULE_TIMEOUT_S
        )
    except WaitTimeout:
        found = _rules(run)  # what it holds after the wait, judged below
        if not found:  # the session goes on to its close
            return Step("G2", title, (), (f"no rule for {SESSION} at the ingress forwarder",))
    rows = [records.rule_row(r, _names(run)) for r in found]
    lines = [
        "    -> the C-PS wrote it to the ingress forwarder 10.0.0.1 (edit-config, confirmed "
        "commit); the forwarder's steering/rule:",
        *grid(records.RULE_HEADER, rows),
    ]
    problems = records.rule_problems(found, session, egress)
    landing, more = _through_ingress(run)
    return Step("G2", title, (*lines, *landing), (*problems, *more))


def session_closed(run: Run) -> Step:
    """MSG-16 and P11: close; accounting shown, state released at C, the rule removed."""
    title = "close: step 30's consumption accounted, C's C-SMA releases the state, rule removed"
    settings = run.bed.settings
    before = len(run.seen.get("session", {}).get("decision-record", []))
    client = Restconf(run.bed.cps.root, GATEWAY_USER, settings.agent_password)
    try:
        client.call(AS, "close-session", {"session-id": SESSION, "reason": "completed"})
    finally:
        client.close()
    session = _session(run)
    spent = records.consumed(session, *STEP)
    released = {
        name: [e for e in found if e.get("operation") == "release-state"]
        for name, found in _csma_exchanges(run).items()
    }
    wait_until(f"the rule of {SESSION} removed", lambda: not _rules(run), timeout=RULE_TIMEOUT_S)
    lines = [
        f"    -> close-session (MSG-16): the session is {session.get('state')}; accounting of "
        f"turn 1 step 30: {records.amounts(spent)}",
        *(
            f"    {name}: release-state for {', '.join(map(str, e.get('csci-id', [])))} "
            f"({', '.join(map(str, e.get('reuse-key', [])))})"
            for name, found in released.items()
            for e in found
        ),
        "    the ingress forwarder no longer holds a rule for the session",
    ]
    problems = records.close_problems(session, before, spent, CONSUMED)
    holder = BY_LETTER[KEPT].csma
    if [e.get("csci-id") for e in released.get(holder, [])] != [[KEPT]]:
        problems.append(f"{holder} did not release {KEPT}'s state once: {released.get(holder)}")
    return Step("G5", title, tuple(lines), tuple(problems))


AGENT_SESSION = Stage(
    "G",
    "Agent session: the step-30 and tail-event episode (agent-selection-mapping 8.4, 6.8)",
    (episode_played, rule_installed, step30_kept, tail_event, session_closed),
)
