"""Scenarios A-D of service-metrics-op section 7 played on the running system.

Every step changes the real system (the C-NMA's topology, the service instances' switches),
waits until the C-PS's tables show the change, asks select-service for ARS at 10.0.0.1 and
checks the draft's outcome: who wins, who is excluded with which reason code, which fallback
level; TST = CT + delay is checked for every candidate by :func:`controller.demo.expect.check`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from controller.demo.bed import Entries
from controller.demo.expect import Expectation
from controller.demo.steps import Run, Stage, Step, decide
from controller.demo.table import number
from controller.demo.topology import ACCESS_MS, BY_LABEL, CF2, CF3, SM

ARS = ("SCI-1", "SCI-3")
ALL = ("SCI-1", "SCI-2", "SCI-3")
SETTLE_S = 3.0  # the SCIs' measurement window (2 s) and heartbeat (1 s): topology.sci_config
IN_FLIGHT = 2  # requests the demo has in flight at most
SLOW_MS = 300  # added to SCI-3's 6 ms: twice the 150 ms performance threshold
OBJECTIVES = [f"{SM}:minimize-latency", f"{SM}:maximize-gas"]
PATH_MS = {CF2: "8", CF3: "6"}  # 7.1: from the ingress 10.0.0.1
EQUALIZE_TRIES = 5


def margin(winner: str, paths: Mapping[str, str]) -> Decimal:
    """The draft's margin of ``winner`` (a label): the other ARS SCI's TST minus its own, with
    the instances' service times as Computing Times and ``paths`` (egress -> ms) as delays."""
    nominal = {
        label: Decimal(BY_LABEL[label].instances[0].service_ms)
        + Decimal(paths[BY_LABEL[label].egress])
        for label in ARS
    }
    other = next(label for label in ARS if label != winner)
    return nominal[other] - nominal[winner]


def _ars(run: Run) -> tuple[str, str]:
    """The CSCI-IDs of SCI-1 and SCI-3."""
    return run.bed.csci("SCI-1"), run.bed.csci("SCI-3")


def _ct(entry: dict[str, Any]) -> Decimal | None:
    value = entry.get("computing-time")
    return None if value is None else Decimal(str(value))


def _usable(table: Entries, csci_id: str, gas: int) -> bool:
    """Healthy with its full GAS (less the slots the demo's own requests may hold while in
    flight, sci-implementation 4.3) and a measured Computing Time (a C-SMA advertises 0 for
    none)."""
    entry = table.get(csci_id, {})
    full = gas - IN_FLIGHT <= int(entry.get("gas", -1)) <= gas
    return full and entry.get("health") == "healthy" and bool(_ct(entry))


def _measured(run: Run, table: Entries) -> str:
    cts = {label: _ct(table[run.bed.csci(label)]) for label in ARS}
    run.measured |= {k: v for k, v in cts.items() if v is not None}
    return "    measured Computing Time: " + ", ".join(
        f"{label} {number(ct)} ms (service time {BY_LABEL[label].instances[0].service_ms} ms)"
        for label, ct in cts.items()
    )


def ready_71(run: Run, *, settle: bool = False) -> str:
    """Wait for the 7.1 state: paths at 8 and 6 ms, SCI-1 and SCI-3 healthy with GAS 400 and
    600 and a Computing Time measured from steady traffic through every SCI. The first time
    (and with ``settle``) requests go on for one measurement window and one heartbeat, so
    that no window still holds the start-up's or a slow-down's response times."""
    sci1, sci3 = _ars(run)
    run.bed.set_paths(PATH_MS)

    def ready() -> Entries:
        return run.bed.wait_cst(
            "SCI-1 and SCI-3 healthy with GAS 400 and 600 and a measured Computing Time",
            lambda cst: _usable(cst, sci1, 400) and _usable(cst, sci3, 600),
            drive=ALL,
            timeout=60,
        )

    table = ready()
    if settle or not run.measured:
        settled = time.monotonic() + SETTLE_S
        while time.monotonic() < settled:
            run.bed.drive(ALL, 5)
        table = ready()
    return _measured(run, table)


def initial_state(run: Run) -> Step:
    """7.2: SCI-3 wins, TST = CT + 6 against CT' + 8."""
    sci1, sci3 = _ars(run)
    measured = ready_71(run)
    expected = Expectation(
        winner=sci3, egress=CF3, feasible=(sci1, sci3), margin_ms=margin("SCI-3", PATH_MS)
    )
    return decide(run, ("A", "initial state: SCI-3 wins"), expected, before=(measured,))


def congestion(run: Run) -> Step:
    """7.3: CF-3's path delay rises (20 ms in the draft): SCI-1 wins."""
    sci1, sci3 = _ars(run)
    ready_71(run)
    run.bed.set_paths({CF3: run.congested_delay})
    congested = margin("SCI-1", PATH_MS | {CF3: run.congested_delay})
    expected = Expectation(winner=sci1, egress=CF2, feasible=(sci1, sci3), margin_ms=congested)
    title = f"network congestion, CF-3 at {run.congested_delay} ms: SCI-1 wins"
    return decide(run, ("B1", title), expected)


def congestion_over(run: Run) -> Step:
    """7.3 undone: CF-3 back at 6 ms, SCI-3 wins again."""
    sci1, sci3 = _ars(run)
    run.bed.set_paths({CF3: PATH_MS[CF3]})
    expected = Expectation(
        winner=sci3, egress=CF3, feasible=(sci1, sci3), margin_ms=margin("SCI-3", PATH_MS)
    )
    return decide(run, ("B2", "congestion subsides, CF-3 at 6 ms: SCI-3 wins again"), expected)


def degraded(run: Run) -> Step:
    """7.4: SCI-3's instances slow down: DEGRADED, lower GAS, higher CT; SCI-1 wins."""
    sci1, sci3 = _ars(run)
    ready_71(run)
    before = run.measured["SCI-3"]
    run.bed.admin("SCI-3", slow_ms=SLOW_MS)

    def shows(cst: Entries) -> bool:
        entry = cst.get(sci3, {})
        ct = _ct(entry)
        return entry.get("health") == "degraded" and ct is not None and ct > before * 2

    run.bed.wait_cst("SCI-3 DEGRADED with a higher Computing Time", shows, drive=("SCI-3",))
    expected = Expectation(winner=sci1, egress=CF2, feasible=(sci1, sci3))
    title = f"site degradation, SCI-3 instances {SLOW_MS} ms slower: SCI-1 wins"
    return decide(run, ("C1", title), expected)


def withdrawn(run: Run) -> Step:
    """7.4: SCI-3's instances fail their health checks: GAS 0, excluded in step 1."""
    sci1, sci3 = _ars(run)
    run.bed.admin("SCI-3", health=False)
    run.bed.wait_cst("SCI-3 at GAS 0", lambda cst: cst.get(sci3, {}).get("gas") == 0)
    expected = Expectation(
        winner=sci1, decided_by="only-candidate", excluded={sci3: "gas-exhausted"}
    )
    return decide(run, ("C2", "failover, SCI-3 unhealthy: excluded gas-exhausted"), expected)


def all_withdrawn(run: Run) -> Step:
    """7.4 and 6.2.5: every ARS site at GAS 0: Fallback Level 2, network-only to CF-3."""
    sci1, sci3 = _ars(run)
    run.bed.admin("SCI-1", health=False)
    run.bed.wait_cst("SCI-1 at GAS 0", lambda cst: cst.get(sci1, {}).get("gas") == 0)
    expected = Expectation(
        result="egress-only",
        fallback_level="network-only",
        egress=CF3,
        excluded={sci1: "gas-exhausted", sci3: "gas-exhausted"},
    )
    return decide(run, ("C3", "every ARS instance fails: fallback network-only"), expected)


def recovered(run: Run) -> Step:
    """Both sites recover: healthy, full GAS, SCI-3's Computing Time back; SCI-3 wins."""
    sci1, sci3 = _ars(run)
    for label in ARS:
        run.bed.admin(label, health=True, slow_ms=0)
    measured = ready_71(run, settle=True)
    expected = Expectation(
        winner=sci3, egress=CF3, feasible=(sci1, sci3), margin_ms=margin("SCI-3", PATH_MS)
    )
    title = "recovery: both sites healthy again, SCI-3 wins as in A"
    return decide(run, ("C4", title), expected, before=(measured,))


def _price(limit: int, objectives: list[str] | None = OBJECTIVES) -> dict[str, Any]:
    requirement: dict[str, Any] = {"hard-constraints": {"max-price": limit}}
    if objectives:
        requirement["objective"] = objectives
    return requirement


def price_8(run: Run) -> Step:
    """7.5: max-price 8 excludes SCI-1 (price 10) in step 2."""
    sci1, sci3 = _ars(run)
    ready_71(run)
    expected = Expectation(
        winner=sci3, decided_by="only-candidate", excluded={sci1: "price-above-maximum"}
    )
    return decide(run, ("D1", "max-price 8: SCI-1 (price 10) excluded"), expected, _price(8))


def price_12(run: Run) -> Step:
    """7.5: max-price 12 keeps both; the primary objective (latency) picks SCI-3."""
    sci1, sci3 = _ars(run)
    expected = Expectation(
        winner=sci3,
        decided_by="objective",
        deciding="minimize-latency",
        feasible=(sci1, sci3),
        margin_ms=margin("SCI-3", PATH_MS),
    )
    title = "max-price 12: both feasible, minimize-latency picks SCI-3"
    return decide(run, ("D2", title), expected, _price(12))


def _equalize(run: Run) -> str:
    """Set CF-2's delay so that CT1 + delay = CT3 + 6 (the draft's "network change"); when
    SCI-1's measured Computing Time is so far above SCI-3's that CF-2 would need less than
    its access link (a negative delay was seen at load 36), CF-2 keeps its 8 ms and CF-3 is
    set so that CT3 + delay = CT1 + 8. Which path changed, and to what."""
    sci1, sci3 = _ars(run)
    table = run.bed.cst()
    ct1, ct3 = _ct(table[sci1]), _ct(table[sci3])
    if ct1 is None or ct3 is None:
        raise RuntimeError("no Computing Time in the CST")
    delay = ct3 + Decimal(PATH_MS[CF3]) - ct1
    if delay >= ACCESS_MS:
        run.bed.set_paths({CF2: str(delay), CF3: PATH_MS[CF3]})
        return f"CF-2 at {delay} ms"
    delay = ct1 + Decimal(PATH_MS[CF2]) - ct3
    run.bed.set_paths({CF2: PATH_MS[CF2], CF3: str(delay)})
    return f"CF-3 at {delay} ms"


def _on_equal_tst(
    run: Run, step: tuple[str, str], expected: Expectation, requirement: dict[str, Any]
) -> Step:
    """Equalize the TSTs, then decide; again if a Computing Time report came in between. When
    reports keep coming in between, the last decision is checked against the invariant
    (:func:`controller.demo.expect.judge`)."""
    for _ in range(EQUALIZE_TRIES):
        delay = _equalize(run)
        found = decide(run, (step[0], step[1].format(delay=delay)), expected, requirement)
        if run.last is not None and len({c.tst for c in run.last.candidates}) == 1:
            return found
    return found


def equal_tst(run: Run) -> Step:
    """7.5: equal TSTs (a network change); the secondary objective GAS picks SCI-3 (600)."""
    sci1, sci3 = _ars(run)
    expected = Expectation(
        winner=sci3,
        decided_by="objective",
        deciding="maximize-gas",
        feasible=(sci1, sci3),
        equal_tst=True,
    )
    title = "equal TST ({delay}): maximize-gas picks SCI-3, the higher GAS"
    return _on_equal_tst(run, ("D3", title), expected, _price(12))


def tie_break(run: Run) -> Step:
    """7.5 and 6.2.3 step 6: without objectives the first tie-break rule, highest GAS."""
    sci1, sci3 = _ars(run)
    expected = Expectation(
        winner=sci3,
        decided_by="tie-break",
        deciding="highest-gas",
        feasible=(sci1, sci3),
        equal_tst=True,
    )
    title = "equal TST ({delay}), no objective: tie-break highest-gas"
    step = _on_equal_tst(run, ("D4", title), expected, _price(12, []))
    run.bed.set_paths(PATH_MS)
    return step


SCENARIOS = (
    Stage("A", "Scenario A, initial state (service-metrics-op 7.2)", (initial_state,)),
    Stage("B", "Scenario B, network congestion (7.3)", (congestion, congestion_over)),
    Stage(
        "C",
        "Scenario C, site degradation and failover (7.4, 6.2.5)",
        (degraded, withdrawn, all_withdrawn, recovered),
    ),
    Stage("D", "Scenario D, price constraint (7.5)", (price_8, price_12, equal_tst, tie_break)),
)
