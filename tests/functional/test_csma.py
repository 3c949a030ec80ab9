"""``catsctl csma`` between real SCIs and a real C-PS (service-metrics-op 6.1, 8;
agent-selection-mapping 9.1).

Three ``catsctl service-instance`` processes behind a ``catsctl sci`` report to a
``catsctl csma`` (per-SCI entries), which reports to ``catsctl serve``; a second C-SMA
aggregates per site what the test posts to it over RESTCONF. The C-PS's CST and its
report-senders counters are the evidence. Intervals are short: SCI checks 1 s, C-SMA
heartbeat 1 s, C-PS heartbeat-interval 2 s. The SCI's CSCI-ID is attached to an egress on the
C-PS, so that select-service can choose it before it has served anything (5.3.2: its Computing
Time is then the C-SMA's configured estimate, and the decision says so).
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree

from controller.auth import hash_password
from tests.conftest import ROOT
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import ADMIN, Server, free_port
from tests.functional.test_sci import CAPACITY, Instance, sci_command, sci_config, wait_for
from tools.bench.common import stop

pytestmark = pytest.mark.functional
CSMA, CSMA_SITE, SCI_USER, CPS_USER = "csma-ss1", "csma-ss2", "sci-1", "cps"
SECRET = "secret-"
AS = "urn:ietf:params:xml:ns:yang:ietf-cats-agent-selection"
JSON = "application/yang-data+json"
SM = "ietf-cats-service-metrics"
MARGIN = 0.8
TENANT, KEY = "tenant-a", "kv/session-1/prefix"
SCI_PORT = free_port()
INGRESS, EGRESS = "10.0.0.1", "10.9.0.254"
ESTIMATE = Decimal(50)  # ms: the C-SMA's computing-time-estimate
START_S = 120  # seconds a process may take to start on the loaded, shared machine


def seed() -> dict[str, object]:
    """The C-PS: the admin and both C-SMAs; heartbeat-interval 2 s (expiry 6 s); the SCI's
    CSCI-ID attached to EGRESS."""
    users = [{"name": n, "password": hash_password(SECRET + n)} for n in (CSMA, CSMA_SITE)]
    users.append({"name": ADMIN[0], "password": hash_password(ADMIN[1])})
    attachment = {"csci-id": f"127.0.0.1:{SCI_PORT}", "egress": EGRESS}
    return {
        "ietf-system:system": {"authentication": {"user": users}},
        f"{SM}:update-control": {"heartbeat-interval": 2},
        f"{SM}:csci-attachments": {"attachment": [attachment]},
    }


@dataclass
class Csma:
    """A ``catsctl csma`` process and its configuration (restartable)."""

    name: str
    folder: Path
    config: dict[str, Any]
    port: int = field(default_factory=free_port)
    netconf: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}/restconf"

    def start(self) -> None:
        path = self.folder / f"{self.name}.json"
        path.write_text(json.dumps(self.config))
        command = [
            sys.executable,
            "-m",
            "controller.cli",
            "csma",
            "--config",
            str(path),
            "--state-dir",
            str(self.folder / f"{self.name}-state"),
            "--restconf-port",
            str(self.port),
            "--netconf-port",
            str(self.netconf),
        ]
        with (self.folder / f"{self.name}.log").open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
        try:  # a loaded machine takes tens of seconds to start it: a bound, not a timing
            wait_for(f"{self.name}", self.up, timeout=START_S)
        except BaseException:
            self.stop()  # __exit__ does not run when __enter__ fails: no process left behind
            raise

    def up(self) -> bool:
        assert self.process is not None
        assert self.process.poll() is None, self.log()
        with contextlib.suppress(requests.RequestException):
            return requests.get(f"{self.root}/", timeout=1).status_code in (200, 401)
        return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=10)

    def __enter__(self) -> Csma:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        return (self.folder / f"{self.name}.log").read_text(errors="replace")

    def post(self, operation: str, members: dict[str, Any], user: str | None) -> requests.Response:
        auth = None if user is None else (user, SECRET + user)
        body = json.dumps({f"{operation.split(':', maxsplit=1)[0]}:input": members})
        return requests.post(
            f"{self.root}/operations/{operation}",
            data=body,
            headers={"Content-Type": JSON, "Accept": JSON},
            auth=auth,
            timeout=10,
        )


def csma_config(name: str, cps: Server, **reporting: Any) -> dict[str, Any]:
    """A C-SMA of site SS1 (or SS2): 0.2 s looks, 1 s heartbeat, one seeded element."""
    users = [
        {"name": SCI_USER, "password": SECRET + SCI_USER, "role": "sci"},
        {"name": CPS_USER, "password": SECRET + CPS_USER, "role": "cps"},
    ]
    return {
        "name": name,
        "site": "SS1" if name == CSMA else "SS2",
        "cps": {"url": f"{cps.root}/restconf", "username": name, "password": SECRET + name},
        "reporting": {"interval-ms": 200, "heartbeat-ms": 1000, **reporting},
        "users": users,
        "reservations": {"validity-ms": 1000, "max-rate": 3, "window-ms": 60_000},
        "instances": [
            {
                "csci-id": "10.9.0.1:80",
                "cs-id": "ARS",
                "capacity": 1000,
                "tenants": [TENANT],
                "state": [{"tenant": TENANT, "reuse-key": "seeded", "size": 100}],
            }
        ],
    }


@dataclass
class Bed:
    """The C-PS, the C-SMA, the SCI and its instances."""

    cps: Server
    csma: Csma
    instances: dict[str, Instance]
    sci_port: int
    manage: int
    sci: subprocess.Popen[bytes] | None = None

    @property
    def csci(self) -> str:
        return f"127.0.0.1:{self.sci_port}"

    def entries(self) -> dict[str, dict[str, Any]]:
        reply = self.cps.request("GET", f"data/{SM}:computing-service-table")
        if reply.status_code == 204:
            return {}
        found = reply.json().get(f"{SM}:computing-service-table", {}).get("entry", [])
        return {e["csci-id"]: e for e in found}

    def entry(self, check: Callable[[dict[str, Any]], bool], csci: str | None = None) -> Any:
        seen: list[dict[str, Any] | None] = [None]

        def probe() -> dict[str, Any] | None:
            seen[0] = found = self.entries().get(csci or self.csci)
            return found if found is not None and check(found) else None

        try:
            return wait_for("a CST entry", probe, timeout=45)
        except AssertionError as exc:
            raise AssertionError(f"no matching CST entry; the last one: {seen[0]}") from exc

    def sender(self, name: str = CSMA) -> dict[str, Any]:
        reply = self.cps.get_json(f"data/{SM}:report-senders")
        senders = reply[f"{SM}:report-senders"]["sender"]
        found: dict[str, Any] = next(s for s in senders if s["source"] == name)
        return found

    def send(self, count: int) -> None:
        for _ in range(count):
            assert requests.get(f"http://{self.csci}/work", timeout=10).status_code == 200


def gas(slots: float) -> int:
    """sci-implementation 4.3: floor(safety margin x available slots)."""
    return math.floor(MARGIN * slots)


@pytest.fixture(scope="module")
def bed(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("csma")
    instances = {n: Instance(n, free_port(), folder / f"si-{n}.log") for n in CAPACITY}
    for instance in instances.values():
        instance.start()
    estimated = csma_config(CSMA, server, **{"computing-time-estimate": str(ESTIMATE)})
    csma = Csma(CSMA, folder, estimated)
    sci_port, manage = SCI_PORT, free_port()
    config = folder / "sci.json"
    sci = None
    try:
        csma.start()  # restarted by a test, so stopped below rather than by a with block
        wait_for("the instances", lambda: all(i.ready() for i in instances.values()), 30)
        config.write_text(json.dumps(sci_config(sci_port, csma.root, list(instances.values()))))
        login = (SCI_USER, SECRET + SCI_USER)
        command = sci_command(config, folder / "sci-state", login, manage)
        with (folder / "sci.log").open("ab") as sink:
            sci = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
        yield Bed(server, csma, instances, sci_port, manage, sci)
    finally:
        if sci is not None:
            stop(sci, timeout=10)
        csma.stop()
        for instance in instances.values():
            instance.stop()


def _select(cps: Server) -> dict[str, Any]:
    """select-service for ARS at INGRESS, every candidate reported."""
    reply = cps.request(
        "POST",
        f"operations/{SM}:select-service",
        json={f"{SM}:input": {"cs-id": "ARS", "ingress": INGRESS, "candidate-report": "all"}},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()[f"{SM}:output"]
    return found


def _path_to_the_egress(cps: Server) -> None:
    """The admin reports INGRESS -> EGRESS, 5 ms (the NST of 6.2.3 Step 3)."""
    report = {
        "sequence-number": str(time.time_ns()),
        "timestamp": datetime.now(UTC).isoformat(),
        "path": [{"ingress": INGRESS, "egress": EGRESS, "delay": "5"}],
    }
    reply = cps.request(
        "POST",
        f"operations/{SM}:report-network-metrics",
        json={f"{SM}:input": report},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code == 200, reply.text


def test_a_site_that_served_nothing_is_advertised_with_its_estimate(bed: Bed) -> None:
    """5.3.2: no request served, no Computing Time measured: the C-SMA reports its configured
    estimate as ``confidence estimated`` (never 0 ms as a measurement), and a select-service
    decision that chooses the SCI, and its kept record, say its Computing Time was
    estimated."""
    entry = bed.entry(lambda e: e["gas"] == gas(10) and e["health"] == "healthy")
    assert (Decimal(entry["computing-time"]), entry["confidence"]) == (ESTIMATE, "estimated")
    assert entry["egress"] == EGRESS
    _path_to_the_egress(bed.cps)
    estimated = [f"{SM}:computing-time", f"{SM}:total-service-time"]
    reply = _select(bed.cps)
    assert (reply["result"], reply["csci-id"]) == ("selected", bed.csci)
    assert Decimal(reply["total-service-time"]) == ESTIMATE + 5
    assert reply["estimated-metric"] == estimated
    (candidate,) = (c for c in reply["candidate"] if c["csci-id"] == bed.csci)
    assert candidate["estimated-metric"] == estimated
    records = bed.cps.get_json(f"data/{SM}:selection-decisions")[f"{SM}:selection-decisions"]
    (record,) = (r for r in records["decision"] if r["id"] == reply["decision-id"])
    assert record["estimated-metric"] == estimated


def test_the_cps_shows_the_gas_and_computing_time_of_the_real_instances(bed: Bed) -> None:
    """sci-implementation 4.3: GAS = floor(0.8 x (4 + 4 + 2)) = 8, through the C-SMA; once
    measured, the Computing Time is asserted and no longer called estimated."""
    entry = bed.entry(lambda e: e["gas"] == gas(10) and e["health"] == "healthy")
    assert (entry["cs-id"], entry["site"], entry["source"]) == ("ARS", "SS1", CSMA)
    assert entry["observed-by"] == f"sci:{bed.csci}"
    bed.send(12)  # 20 ms of service each: the SCI observes the response times
    timed = bed.entry(lambda e: e["confidence"] == "asserted")
    # measured: at least the instances' 20 ms (no upper bound: a loaded machine adds its own)
    assert float(timed["computing-time"]) >= 20.0
    _path_to_the_egress(bed.cps)
    reply = _select(bed.cps)
    assert reply["csci-id"] == bed.csci
    assert "estimated-metric" not in reply


def test_health_transitions_move_gas_and_computing_time_at_the_cps(bed: Bed) -> None:
    """5.2-5.3: unhealthy gives 0, degraded half capacity and a slower Computing Time."""
    c = bed.instances["c"]
    c.admin(health=False)
    switched = time.time()
    bed.entry(lambda e: e["gas"] == gas(8))
    assert time.time() - switched >= 0.9
    c.admin(health=True)
    bed.entry(lambda e: e["gas"] == gas(10))
    before = float(bed.entries()[bed.csci]["computing-time"])
    a = bed.instances["a"]
    a.admin(slow_ms=300)
    bed.send(6)  # round-robin: a answers in more than the 150 ms threshold
    slow = bed.entry(lambda e: e["gas"] == gas(2 + 4 + 2))
    assert slow["health"] == "healthy"  # b and c are
    assert float(slow["computing-time"]) > before * 1.2  # beyond the 20 % band
    a.admin(slow_ms=0)
    b = bed.instances["b"]
    b.stop()
    bed.entry(lambda e: e["gas"] <= gas(4 + 2))  # b gone (a degraded or back)
    b.start()
    wait_for("b", b.ready, START_S)  # a restarted instance, on a loaded machine
    bed.send(6)
    bed.entry(lambda e: e["gas"] == gas(10))


QUIET_REPORTS = 3


def test_a_quiet_site_sends_heartbeats_and_no_more(bed: Bed) -> None:
    """Section 8: without a crossed threshold only the heartbeat (1 s) reaches the C-PS, with
    the current values (the default heartbeat is a full report): once the last changes are
    reported, reports keep coming and each refreshes the site's one entry."""
    bed.entry(lambda e: e["gas"] == gas(10))

    def more_reports(than: int) -> dict[str, Any] | None:
        counters: dict[str, Any] = bed.sender()["counters"]
        return counters if int(counters["reports-accepted"]) >= than else None

    def heartbeats() -> tuple[dict[str, Any], dict[str, Any]] | None:
        first = bed.sender()["counters"]
        wanted = int(first["reports-accepted"]) + QUIET_REPORTS
        second = wait_for(f"{QUIET_REPORTS} more reports", lambda: more_reports(wanted), 30)
        reports = int(second["reports-accepted"]) - int(first["reports-accepted"])
        entries = int(second["entries-accepted"]) - int(first["entries-accepted"])
        return (first, second) if entries == reports else None

    first, second = wait_for("reports that each refresh the one entry", heartbeats, timeout=60)
    assert int(second["reports-accepted"]) - int(first["reports-accepted"]) >= QUIET_REPORTS
    # none refused meanwhile (one refused earlier is a report that outlived its client's timeout
    # on a loaded machine and arrived after its successor: the C-PS refuses it, as it must)
    assert int(second["refused-sequence"]) == int(first["refused-sequence"])


def test_a_restarted_csma_resumes_with_a_higher_sequence_number(bed: Bed) -> None:
    before = bed.sender()
    last = int(before["last-sequence"])
    bed.csma.stop()
    bed.csma.start()
    wait_for("a new report", lambda: int(bed.sender()["last-sequence"]) > last)
    refused = int(bed.sender()["counters"]["refused-sequence"])
    assert refused == int(before["counters"]["refused-sequence"])  # none since the restart
    bed.entry(lambda e: e["gas"] == gas(10))  # the SCI found the C-SMA again


def _element(parent: Any, tag: str, text: str | None = None) -> Any:
    child = etree.SubElement(parent, f"{{{AS}}}{tag}")
    child.text = text
    return child


def _reserve(rid: str, session: str = "s1", size: int = 50) -> Any:
    request = etree.Element(f"{{{AS}}}reserve-state", nsmap={None: AS})
    for tag, text in (
        ("reservation-id", rid),
        ("session-id", session),
        ("tenant", TENANT),
        ("csci-id", "10.9.0.1:80"),
    ):
        _element(request, tag, text)
    wanted = _element(request, "element")
    _element(wanted, "reuse-key", KEY)
    _element(wanted, "residency", "host-memory")
    _element(request, "size", str(size))
    needed = datetime.now(UTC) + timedelta(seconds=0.5)
    _element(request, "needed-by", needed.isoformat())
    return request


def _query() -> Any:
    request = etree.Element(f"{{{AS}}}query-state", nsmap={None: AS})
    _element(request, "tenant", TENANT)
    _element(request, "reuse-key", KEY)
    return request


def _text(reply: Any, tag: str) -> list[str]:
    root = etree.fromstring(reply.xml.encode())
    return [str(e.text) for e in root.iter(f"{{{AS}}}{tag}")]


def test_a_repeated_reservation_is_one_reservation_and_it_expires(bed: Bed) -> None:
    """9.3: idempotent by reservation-id; the validity window passes: gone, notified."""
    with connect_nc(bed.csma.netconf, CPS_USER, SECRET + CPS_USER) as session:
        session.create_subscription()
        request = _reserve("r1")
        first = session.dispatch(request)
        again = session.dispatch(request)  # the same request again: the same answer
        assert _text(first, "status") == _text(again, "status") == ["accepted"]
        assert _text(first, "valid-until") == _text(again, "valid-until")
        present = session.take_notification(timeout=30)
        assert present is not None
        assert "<presence>present</presence>" in present.notification_xml
        assert _text(session.dispatch(_query()), "presence") == ["present"]
        state = bed.csma.post(f"{AS.rsplit(':', 1)[1]}:query-state", {}, None)
        assert state.status_code == 401
        absent = session.take_notification(timeout=30)  # valid 1 s past needed-by
        assert absent is not None
        assert "<presence>absent</presence>" in absent.notification_xml
        assert _text(session.dispatch(_query()), "presence") == ["absent"]
        assert session.take_notification(timeout=0.5) is None  # one reservation, one expiry
        conflict = session.dispatch(_reserve("r2"))
        assert _text(session.dispatch(_reserve("r2")), "refusal-reason") == [
            "cats-as:reservation-conflict"  # the same id, another needed-by
        ]
        assert _text(conflict, "status") == ["accepted"]


def test_reservations_are_rate_limited_per_session(bed: Bed) -> None:
    with connect_nc(bed.csma.netconf, CPS_USER, SECRET + CPS_USER) as session:
        statuses = [
            _text(session.dispatch(_reserve(f"q{n}", "s9", 1)), "status")[0] for n in range(4)
        ]
        assert statuses == ["accepted"] * 3 + ["refused"]
        refused = session.dispatch(_reserve("q9", "s9", 1))
        assert _text(refused, "refusal-reason") == ["cats-as:rate-limit-exceeded"]
        other = session.dispatch(_reserve("big", "s10", 10_000))
        assert _text(other, "refusal-reason") == ["cats-as:insufficient-storage"]
        release = etree.Element(f"{{{AS}}}release-state", nsmap={None: AS})
        _element(release, "session-id", "s9")
        _element(release, "tenant", TENANT)
        assert session.dispatch(release).ok  # MSG-16: no output


def _sci_report(csci: str, sequence: int, gas_value: int, ct: str) -> dict[str, Any]:
    return {
        "csci-id": csci,
        "cs-id": "ARS",
        "timestamp": datetime.now(UTC).isoformat(),
        "sequence-number": str(sequence),
        "report-kind": "heartbeat",
        "gas": gas_value,
        "computing-time": {"value": ct},
        "health-summary": {"healthy": 1, "degraded": 0, "unhealthy": 0},
    }


def test_bad_input_is_refused_and_the_csma_keeps_running(bed: Bed) -> None:
    report = "ietf-cats-sci:report-sci-metrics"
    members = _sci_report(bed.csci, 1, 5, "1.000")
    assert bed.csma.post(report, members, None).status_code == 401
    regressed = bed.csma.post(report, members, SCI_USER)  # below the SCI's own numbers
    assert regressed.json()["ietf-restconf:errors"]["error"][0]["error-app-tag"] == (
        "sequence-number-regressed"
    )
    denied = bed.csma.post(report, members | {"sequence-number": "99"}, CPS_USER)
    assert denied.json()["ietf-restconf:errors"]["error"][0]["error-tag"] == "access-denied"
    malformed = bed.csma.post(report, members | {"gas": "many"}, SCI_USER)
    assert malformed.status_code == 400
    query = "ietf-cats-agent-selection:query-state"
    forbidden = bed.csma.post(query, {"tenant": TENANT, "reuse-key": ["k"]}, SCI_USER)
    assert forbidden.status_code == 403
    assert bed.csma.up()
    bed.entry(lambda e: e["gas"] == gas(10))  # the real SCI's numbers still flow


def _last_sequence(bed: Bed) -> int:
    """The C-SMA's last accepted sequence number at the C-PS (0: none yet)."""
    with contextlib.suppress(StopIteration, KeyError):
        return int(bed.sender(CSMA_SITE)["last-sequence"])
    return 0


def test_without_an_estimate_an_unmeasured_site_is_withheld(server: Server, tmp_path: Path) -> None:
    """No SCI measured, no estimate configured: the C-SMA withholds the entry (and logs it
    once) rather than advertise a made-up Computing Time; the first measurement brings it."""
    site_csci = "SS2-unmeasured"
    config = csma_config(CSMA_SITE, server, aggregation="per-site", **{"site-csci-id": site_csci})
    with Csma(CSMA_SITE, tmp_path, config) as site:
        report = "ietf-cats-sci:report-sci-metrics"
        unmeasured = _sci_report("10.2.0.9:80", 1, 30, "1.000")
        del unmeasured["computing-time"]
        assert site.post(report, unmeasured, SCI_USER).ok
        bed = Bed(server, site, {}, 0, 0)
        first = wait_for("a report", lambda: _last_sequence(bed), 10)
        wait_for("one more report", lambda: _last_sequence(bed) > first)
        assert site_csci not in bed.entries()
        assert site.log().count("withheld") == 1
        assert site.post(report, _sci_report("10.2.0.9:80", 2, 30, "12.000"), SCI_USER).ok
        entry = bed.entry(lambda e: e["gas"] == 30, site_csci)
        assert (Decimal(entry["computing-time"]), entry["confidence"]) == (Decimal(12), "derived")


def test_a_site_aggregate_and_a_silent_sci_withdrawn(server: Server, tmp_path: Path) -> None:
    """Section 8 Hierarchical Aggregation; Soft-State Aging: a silent SCI counts GAS 0."""
    config = csma_config(CSMA_SITE, server, aggregation="per-site", **{"sci-expiry-ms": 2000})
    with Csma(CSMA_SITE, tmp_path, config) as site:
        report = "ietf-cats-sci:report-sci-metrics"
        assert site.post(report, _sci_report("10.2.0.1:80", 1, 30, "10.000"), SCI_USER).ok
        assert site.post(report, _sci_report("10.2.0.2:80", 1, 10, "30.000"), SCI_USER).ok
        bed = Bed(server, site, {}, 0, 0)
        entry = bed.entry(lambda e: e["gas"] == 40, "SS2")
        assert (entry["aggregated"], float(entry["computing-time"])) == (True, 15.0)
        assert bed.entry(lambda e: e["gas"] == 0, "SS2")  # neither SCI reports again


def test_a_change_below_the_thresholds_reaches_the_cps_at_the_heartbeat(
    server: Server, tmp_path: Path
) -> None:
    """6.1, 8: GAS 100 to 95 crosses no threshold (5 slots, 5 %); the default heartbeat (1 s)
    carries the current values, so the C-PS sees 95 (it kept 100 for as long as it lasted)."""
    config = csma_config(CSMA_SITE, server, aggregation="per-site", **{"site-csci-id": "SS2-hb"})
    with Csma(CSMA_SITE, tmp_path, config) as site:
        report = "ietf-cats-sci:report-sci-metrics"
        assert site.post(report, _sci_report("10.2.1.1:80", 1, 100, "10.000"), SCI_USER).ok
        bed = Bed(server, site, {}, 0, 0)
        bed.entry(lambda e: e["gas"] == 100, "SS2-hb")
        assert site.post(report, _sci_report("10.2.1.1:80", 2, 95, "10.000"), SCI_USER).ok
        bed.entry(lambda e: e["gas"] == 95, "SS2-hb")


def test_a_small_sites_single_slot_change_is_reported_at_once(
    server: Server, tmp_path: Path
) -> None:
    """GAS 10 to 9 is 10 %, one slot: on a site this small every change counts, as a delta,
    without waiting for the heartbeat (30 s here)."""
    config = csma_config(
        CSMA_SITE,
        server,
        aggregation="per-site",
        **{"heartbeat-ms": 30_000, "site-csci-id": "SS2-small"},
    )
    with Csma(CSMA_SITE, tmp_path, config) as site:
        report = "ietf-cats-sci:report-sci-metrics"
        assert site.post(report, _sci_report("10.2.2.1:80", 1, 10, "10.000"), SCI_USER).ok
        bed = Bed(server, site, {}, 0, 0)
        bed.entry(lambda e: e["gas"] == 10, "SS2-small")
        assert site.post(report, _sci_report("10.2.2.1:80", 2, 9, "10.000"), SCI_USER).ok
        bed.entry(lambda e: e["gas"] == 9, "SS2-small")


def test_an_operator_edit_of_the_state_view_is_notified(bed: Bed) -> None:
    """The seed edited and reloaded (SIGHUP): presence changes go out as notifications."""
    edited = json.loads(json.dumps(bed.csma.config))
    edited["instances"][0]["state"] = [{"tenant": TENANT, "reuse-key": "edited", "size": 10}]
    (bed.csma.folder / f"{CSMA}.json").write_text(json.dumps(edited))
    with connect_nc(bed.csma.netconf, CPS_USER, SECRET + CPS_USER) as session:
        session.create_subscription()
        assert bed.csma.process is not None
        bed.csma.process.send_signal(signal.SIGHUP)
        changed = session.take_notification(timeout=30)
    assert changed is not None
    xml = changed.notification_xml
    assert "state-presence-changed" in xml  # the users did not change: running did not
    assert "<reuse-key>edited</reuse-key><presence>present</presence>" in xml
    assert "<reuse-key>seeded</reuse-key><presence>absent</presence>" in xml


def test_a_malformed_configuration_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"site": "SS1", "reporting": {"aggregation": "per-pod"}}))
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli", "csma", "--config", str(path), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "/cats-csma-config:csma/reporting/aggregation" in result.stderr
    assert f"{path}: Invalid enumeration value" in result.stderr
