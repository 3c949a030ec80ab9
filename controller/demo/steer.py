"""Stage F: the C-PS steers the forwarders and client requests follow its decisions
(service-metrics-op 6.2.3 step 7, 6.2.5 re-routing, 7.3; ietf-cats-steering).

F1 gives the C-PS its forwarder inventory (RESTCONF), waits until the C-PS has written its
selection for ARS at 10.0.0.1 into the ingress forwarder (NETCONF edit-config through the
candidate, confirmed commit), then sends client requests through the ingress forwarder, half
naming the service with the ``CATS-Service-Id`` header and half with a ``/cats/ARS/`` path,
each on a new connection (a new flow: flow affinity keeps an established one, 6.2.4). The
service instances' own counters show where the requests landed. F2 congests CF-3's path as
scenario B does: the C-PS re-selects, re-steers the ingress, and new requests land behind
SCI-1; F3 lifts the congestion and they land behind SCI-3 again. A step fails when a request
lands anywhere but behind the SCI that the decision selected.

When the draft's margin is inside the measurements' noise, the C-PS rightly re-steers on
every newer report that reorders the TSTs, and on a loaded machine it may do so during every
batch (the C-PS's push count for the ingress tells, even when the entry came back). After
:data:`STEER_TRIES` such batches the requests are then judged one at a time: each one sent
while the ingress held the same feasible SCI, with no push, must land behind that SCI, and the
reply must name it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import requests

from controller.demo.expect import NOISE_MS, Expectation
from controller.demo.forwarders import (
    CS_IDS,
    INGRESS_NAME,
    ST,
    inventory,
    service,
    session_state,
    steering,
)
from controller.demo.launch import wait_until
from controller.demo.scenarios import PATH_MS, margin, ready_71
from controller.demo.steps import Run, Stage, Step, decide
from controller.demo.table import grid
from controller.demo.topology import BY_LABEL, CF2, CF3, INGRESS, SCIS

REQUESTS = 10
PUSH_TIMEOUT_S = 30.0
REDECIDE_S = 2.0  # the ingress holding another entry this long: the steering moved on
POLL_S = 0.1
STEER_TRIES = 3
SINGLE_SENDS = 5 * REQUESTS  # one-at-a-time sends to find REQUESTS under a steady entry
ONE_AT_A_TIME = "the steering kept following newer reports"
CS_ID = CS_IDS[0]
CSCI_HEADER = "CATS-CSCI-Id"


@dataclass(frozen=True)
class Landing:
    """Where a batch of client requests went: each reply's status and the CSCI-ID it names
    (``CATS-CSCI-Id``, empty when none), and the requests each service instance served."""

    statuses: tuple[int, ...]
    named: tuple[str, ...]
    served: Mapping[str, int]


def landing_problems(landing: Landing, label: str, csci_id: str) -> list[str]:
    """Every way the requests did not land behind the SCI ``label`` (CSCI-ID ``csci_id``)
    that the decision selected; empty when they all did."""
    sent = len(landing.statuses)
    problems = []
    if set(landing.statuses) != {200}:
        answered = landing.statuses.count(200)
        problems.append(
            f"{answered} of {sent} answered 200 (statuses {sorted(set(landing.statuses))})"
        )
    mine = {i.name for i in BY_LABEL[label].instances}
    landed = sum(count for name, count in landing.served.items() if name in mine)
    elsewhere = {n: c for n, c in landing.served.items() if n not in mine and c}
    if landed != sent:
        problems.append(f"{landed} of {sent} requests reached {label}'s instances")
    if elsewhere:
        problems.append(f"requests landed behind another SCI: {elsewhere}")
    if set(landing.named) != {csci_id}:
        problems.append(f"the replies name {sorted(set(landing.named))}, not {csci_id}")
    return problems


def landing_rows(landing: Landing, labels: Mapping[str, str]) -> list[list[str]]:
    """One row per SCI: its egress, the replies naming it, the requests its instances served."""
    rows = []
    for sci in SCIS:
        csci_id = next((c for c, name in labels.items() if name.startswith(sci.label + " ")), "")
        counts = [(i.name, landing.served.get(i.name, 0)) for i in sci.instances]
        total = sum(count for _, count in counts)
        detail = ", ".join(f"{name} {count}" for name, count in counts)
        named = landing.named.count(csci_id) if csci_id else 0
        rows.append([labels.get(csci_id, sci.label), sci.egress, str(named), f"{total} ({detail})"])
    return rows


def send_through_ingress(run: Run, count: int) -> Landing:
    """``count`` client requests through the ingress forwarder, each on a new connection."""
    ingress = run.bed.forwarders[INGRESS_NAME]
    before = run.bed.served()
    statuses, named = [], []
    for number in range(count):
        if number % 2:
            url, headers = f"{ingress.url}/cats/{CS_ID}/ars", {}
        else:
            url, headers = f"{ingress.url}/ars", {"CATS-Service-Id": CS_ID}
        try:
            reply = requests.get(url, headers=headers, timeout=10)
            statuses.append(reply.status_code)
            named.append(reply.headers.get(CSCI_HEADER, ""))
        except requests.RequestException:
            statuses.append(0)
            named.append("")
    after = run.bed.served()
    served = {name: after[name] - before[name] for name in after}
    return Landing(tuple(statuses), tuple(named), served)


def _held(run: Run) -> tuple[str | None, str | None, str | None]:
    """What the ingress forwarder holds for ARS: CSCI-ID, egress forwarder, entry state."""
    ingress = run.bed.forwarders[INGRESS_NAME]
    entry = service(steering(ingress, run.bed.settings.agent_password), CS_ID)
    state = entry.get("counters", {}).get("state")
    return entry.get("csci-id"), entry.get("egress-forwarder"), state


def wait_held(run: Run, csci_id: str, egress: str) -> float:
    """Wait until the ingress forwarder holds ARS -> ``csci_id`` via ``egress``, active; the
    monotonic time it was seen to."""
    wanted = (csci_id, egress, "active")
    seen: list[object] = [None]

    def holds() -> bool:
        seen[0] = found = _held(run)
        return found == wanted

    wait_until(
        f"the ingress forwarder to hold {CS_ID} -> {csci_id} via {egress}",
        holds,
        timeout=PUSH_TIMEOUT_S,
        seen=lambda: seen[0],
    )
    return time.monotonic()


def _decided_and_held(
    run: Run, step: tuple[str, str], expected: Expectation
) -> tuple[Step, float | None, int]:
    """Decide, and wait until the ingress holds that decision. When it holds another active
    entry for a while, the C-PS's steering followed a newer report (the decision's margin was
    inside the measurements' noise): decide again, and wait for that one. The step, when the
    ingress was seen to hold it (None: never), and how many decisions it took."""
    deadline = time.monotonic() + PUSH_TIMEOUT_S
    decided, asked = decide(run, step, expected), time.monotonic()
    decisions = 1
    while True:
        decision = run.last
        wanted = (decision.csci_id, decision.egress, "active") if decision else None
        found = _held(run)
        now = time.monotonic()
        if wanted is not None and found == wanted:
            return decided, now, decisions
        if now >= deadline:
            return decided, None, decisions
        other = found[2] == "active" and wanted is not None and found[0] != wanted[0]
        if other and now - asked >= REDECIDE_S:
            decided, asked = decide(run, step, expected), now
            decisions += 1
        time.sleep(POLL_S)


def _steered(
    run: Run, step: tuple[str, str], expected: Expectation, change: tuple[str, float]
) -> Step:
    """Decide, wait until the ingress holds the decision, send requests, check where they
    landed: behind the SCI the decision selected, and nowhere else. ``change`` is what
    changed and its monotonic time, from which the push is timed. When the ingress's entry
    changed while the requests went through (a newer report moved the steering, which the
    step cannot tell apart from a wrong landing), the step is played again, up to
    STEER_TRIES times."""
    for attempt in range(1, STEER_TRIES + 1):
        found = _steered_once(run, step, expected, change)
        if found is not None:
            return found
        note = f"    the steering moved while the requests went through (try {attempt})"
        change = (note.strip(), time.monotonic())
    margin = expected.margin_ms
    if margin is not None and margin < NOISE_MS:  # inside the noise, or contradicted
        found = _steered_once(run, step, expected, change, one_by_one=True)
        if found is not None:
            return found
    return Step(step[0], step[1], (), ("the steering kept moving while requests went through",))


def _one_by_one(run: Run, feasible: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Requests sent one at a time, each judged against the entry the ingress held just before
    and just after it (skipped when the C-PS pushed to the ingress meanwhile): it must land
    behind that SCI, a feasible one. The lines and the problems."""
    labels = run.bed.labels
    judged: list[tuple[str, Landing]] = []
    skipped = 0
    for _ in range(SINGLE_SENDS):
        if len(judged) == REQUESTS:
            break
        held, pushed = _held(run), _pushes(run)
        landing = send_through_ingress(run, 1)
        moved = _held(run) != held or _pushes(run) != pushed
        if moved or held[2] != "active" or held[0] is None:
            skipped += 1
            continue
        judged.append((held[0], landing))
    steered = sorted({csci_id for csci_id, _ in judged})
    header = ["SCI", "egress", f"replies naming it ({CSCI_HEADER})", "requests served"]
    lines = [
        f"    -> {ONE_AT_A_TIME}: {len(judged)} requests sent one at a time under a steady entry "
        f"({skipped} skipped while it moved), steered to "
        + ", ".join(labels.get(c, c) for c in steered),
        *grid(header, landing_rows(_total(judged), labels)),
    ]
    scis = {csci_id: run.bed.label_of(csci_id) for csci_id in steered}
    return lines, judged_problems(judged, feasible, scis, labels)


def _total(judged: list[tuple[str, Landing]]) -> Landing:
    """The landings of requests sent one at a time, as one batch."""
    served: dict[str, int] = {}
    for _, landing in judged:
        for name, count in landing.served.items():
            served[name] = served.get(name, 0) + count
    return Landing(
        tuple(status for _, landing in judged for status in landing.statuses),
        tuple(named for _, landing in judged for named in landing.named),
        served,
    )


def judged_problems(
    judged: list[tuple[str, Landing]],
    feasible: tuple[str, ...],
    scis: Mapping[str, str | None],
    labels: Mapping[str, str],
) -> list[str]:
    """Every request judged one at a time (with the CSCI-ID the ingress held around it) that
    did not land behind that SCI, a feasible one; and too few judged. ``scis`` gives each
    held CSCI-ID's SCI label (``SCI-3``), ``labels`` its full name."""
    problems = []
    if len(judged) < REQUESTS:
        problems.append(f"only {len(judged)} of {SINGLE_SENDS} requests saw a steady entry")
    for csci_id in sorted({csci_id for csci_id, _ in judged} - set(feasible)):
        problems.append(f"the ingress held {labels.get(csci_id, csci_id)}, not feasible")
    for csci_id, landing in judged:
        label = scis.get(csci_id)
        if label is None:
            problems.append(f"the ingress held an unknown CSCI-ID {csci_id}")
            continue
        problems += landing_problems(landing, label, csci_id)
    return problems


def _steered_once(
    run: Run,
    step: tuple[str, str],
    expected: Expectation,
    change: tuple[str, float],
    *,
    one_by_one: bool = False,
) -> Step | None:
    """One try of :func:`_steered`; None when the ingress's entry changed meanwhile (with
    ``one_by_one``, the requests are judged one at a time instead, see :func:`_one_by_one`)."""
    decided, held_at, decisions = _decided_and_held(run, step, expected)
    decision = run.last
    lines, problems = list(decided.lines), list(decided.problems)
    labels = run.bed.labels
    csci_id = decision.csci_id if decision is not None else None
    egress = decision.egress if decision is not None else None
    label = run.bed.label_of(csci_id) if csci_id is not None else None
    if csci_id is None or label is None or egress is None:
        problems.append("no SCI selected: nothing to steer the requests to")
        return Step(step[0], step[1], tuple(lines), tuple(problems))
    target = f"{labels[csci_id]} via {egress}"
    if held_at is None:
        problems.append(
            f"the ingress forwarder did not hold {CS_ID} -> {target} within "
            f"{PUSH_TIMEOUT_S:.0f} s (it holds {_held(run)})"
        )
        return Step(step[0], step[1], tuple(lines), tuple(problems))
    if decisions > 1:
        lines.append(
            f"    the steering followed newer reports: decided {decisions} times until the "
            "ingress held the decision"
        )
    lines.append(
        f"    the ingress forwarder {INGRESS} held {CS_ID} -> {target} "
        f"{held_at - change[1]:.1f} s after {change[0]}"
    )
    if one_by_one:
        sent, found = _one_by_one(run, expected.feasible)
        lines += [*sent, _session_line(run)]
        return Step(step[0], step[1], tuple(lines), tuple(problems + found))
    pushed = _pushes(run)
    landing = send_through_ingress(run, REQUESTS)
    if _held(run) != (csci_id, egress, "active") or _pushes(run) != pushed:
        return None  # moved, perhaps away and back (seen at load 42)
    header = ["SCI", "egress", f"replies naming it ({CSCI_HEADER})", "requests served"]
    lines += [
        f"    -> {REQUESTS} client requests through the ingress forwarder "
        f"{run.bed.forwarders[INGRESS_NAME].url}, each a new flow: statuses "
        f"{sorted(set(landing.statuses))}",
        *grid(header, landing_rows(landing, labels)),
    ]
    problems += landing_problems(landing, label, csci_id)
    lines.append(_session_line(run))
    return Step(step[0], step[1], tuple(lines), tuple(problems))


def _pushes(run: Run) -> object:
    """How many times the C-PS has pushed steering to the ingress forwarder: a change between
    two reads is a move, even one that came back to the same entry."""
    return session_state(run.bed.cps, INGRESS_NAME).get("pushes")


def _session_line(run: Run) -> str:
    """The C-PS's southbound session to the ingress, as its operational state shows it."""
    state = session_state(run.bed.cps, INGRESS_NAME)
    return (
        f"    C-PS southbound to the ingress: {state.get('session', '-')}, in-sync "
        f"{str(state.get('in-sync', '-')).lower()}, {state.get('pushes', '-')} pushes, "
        f"{state.get('edits', '-')} edit-configs, {state.get('entries-written', '-')} "
        "entries written (candidate, confirmed commit)"
    )


def _ars(run: Run) -> tuple[str, str]:
    return run.bed.csci("SCI-1"), run.bed.csci("SCI-3")


def steering_installed(run: Run) -> Step:
    """7.2 at the ingress: the C-PS writes its selection, requests land behind SCI-3."""
    sci1, sci3 = _ars(run)
    ready_71(run)
    settings = run.bed.settings
    document = inventory(run.bed.forwarders, settings.agent_password, agents=settings.agents)
    began = time.monotonic()
    run.bed.cps.put(f"{ST}:forwarders", document)
    expected = Expectation(
        winner=sci3, egress=CF3, feasible=(sci1, sci3), margin_ms=margin("SCI-3", PATH_MS)
    )
    title = "the C-PS steers the ingress forwarder: requests land behind SCI-3"
    change = ("the forwarder inventory was configured at the C-PS", began)
    return _steered(run, ("F1", title), expected, change)


def steering_congested(run: Run) -> Step:
    """7.3 at the ingress: CF-3 congested, the C-PS re-steers, requests land behind SCI-1."""
    sci1, sci3 = _ars(run)
    began = time.monotonic()
    run.bed.set_paths({CF3: run.congested_delay})
    congested = margin("SCI-1", PATH_MS | {CF3: run.congested_delay})
    expected = Expectation(winner=sci1, egress=CF2, feasible=(sci1, sci3), margin_ms=congested)
    title = f"CF-3 at {run.congested_delay} ms: re-steered, new requests land behind SCI-1"
    change = ("the C-NMA's topology changed", began)
    return _steered(run, ("F2", title), expected, change)


def steering_restored(run: Run) -> Step:
    """7.3 undone at the ingress: CF-3 back at 6 ms, requests land behind SCI-3 again."""
    sci1, sci3 = _ars(run)
    began = time.monotonic()
    run.bed.set_paths({CF3: PATH_MS[CF3]})
    expected = Expectation(
        winner=sci3, egress=CF3, feasible=(sci1, sci3), margin_ms=margin("SCI-3", PATH_MS)
    )
    title = "CF-3 back at 6 ms: new requests land behind SCI-3 again"
    change = ("the C-NMA's topology changed", began)
    return _steered(run, ("F3", title), expected, change)


STEERING = Stage(
    "F",
    "Steering the forwarders over NETCONF, client requests through the ingress (6.2.3 step 7)",
    (steering_installed, steering_congested, steering_restored),
)
