"""Kill -9 the leader in the middle of a steady stream of commits and CST changes (issue 22).

Real processes on loopback: 3 etcd members, 3 ``catsctl serve --cluster`` replicas, one
ingress ``catsctl forwarder`` serving a classic service (``ARS``: CST-driven ``steering/service``
entries, as in test_steering) and an agent service (commitment ``steering/rule`` entries, as in
test_agent_steering), and one ``catsctl csma`` answering for the agent candidates B and C of
the 6.8 example. An agent session is admitted on the leader and a move of it to B is put in
flight (the handoff reserved at B's C-SMA, kept in etcd). Then, in background threads:

- commits: bench-list targets created over RESTCONF, round-robin over the three replicas,
  each acknowledged one (2xx) recorded;
- CST changes: report-service-metrics to every live replica, SCI-3's GAS alternating between
  600 and 0, switched each time the forwarder shows the selection the last value implies (so
  every switch is a flip of the ``ARS`` entry at the forwarder);
- an observer of the session's rules at the forwarder.

The leader is SIGKILLed mid-stream. The new leader's first push is accepted within 3 s of the
kill (the forwarder's log, as test_cluster_leader measures it); the stream goes on until the
new leader has flipped the entry, more commits are acknowledged and the rule has moved (the
target's completion sent to the surviving follower). Then: every acknowledged commit is on
both survivors, which serve one configuration; the handoff is committed on both and the
forwarder's rule moved from the source commitment to the target's, never two rules nor none
at any observation; the session goes on (step 31 on the new leader extends the target's
commitment and its rule); after a final report the forwarder holds what the new leader
computes, the new leader says it is in sync and the other survivor has pushed nothing.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import requests

from controller.auth import hash_password
from controller.cluster.etcd import Etcd, endpoints_of
from tests.functional.cluster import (
    Cluster,
    config_tree,
    running_cluster,
    wait_identical,
    wait_until,
)
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import ADMIN, JSON, Server, admin_policy, free_port
from tests.functional.test_agent_selection import (
    AS,
    Csma,
    call,
    session,
)
from tests.functional.test_agent_steering import (
    EGRESS,
    NS,
    SERVICE,
    _members,
    reporter_user,
    rules_of,
    running_rules,
)
from tests.functional.test_cluster_leader import (
    FAILOVER_BOUND_S,
    accepted_at,
    forwarder_term,
    leader_of,
    pushes,
)
from tests.functional.test_cluster_sessions import PREFIX, agents, leader_state, reconciled
from tests.functional.test_forwarder import CPS, Forwarder
from tests.functional.test_service_metrics import CF2, CF3, SCI1, SCI3
from tests.functional.test_steering import A_ID, report, running_services, target
from tests.unit.agent_selection import drafts

pytestmark = pytest.mark.functional
SM = "ietf-cats-service-metrics"
ST = "ietf-cats-steering"
TARGETS = "data/bench-list:bench"
SESSION = "s-fo"
BEFORE_KILL = 10  # acknowledged commits (and two flips) before the kill
AFTER_KILL = 10  # acknowledged commits made after the kill before the stream stops
IMPLIED = {600: (SCI3, CF3), 0: (SCI1, CF2)}  # SCI-3's GAS: the ARS entry at ingress A (7.2)


@dataclass
class Bed:
    """The cluster, its forwarder, the candidates (B, C) and their C-SMA."""

    cluster: Cluster
    forwarder: Forwarder
    specs: list[drafts.Spec]
    csma: Csma


def seed(specs: list[drafts.Spec], c_sma: dict[str, Any], forwarder: Forwarder) -> Any:
    """One running document for both services: the agent-selection configuration of the
    candidates (test_agent_steering's seed), the classic service's attachments and rate limit
    (test_steering's inventory), the forwarder handling both, a bench-list to commit into."""
    users = [
        {"name": ADMIN[0], "password": hash_password(ADMIN[1])},
        reporter_user(),
    ]
    letters = {s.csci_id: letter for s, letter in zip(specs, "BC", strict=True)}
    return {
        "ietf-system:system": {"authentication": {"user": users}},
        f"{AS}:agent-selection": drafts.config(specs, lambda s: c_sma),
        **admin_policy(csma=["csma-1"]),
        f"{SM}:csci-attachments": {
            "attachment": [
                {"csci-id": SCI1, "egress": CF2},
                {"csci-id": "188.3.67.3:68", "egress": CF2},
                {"csci-id": SCI3, "egress": CF3},
                *({"csci-id": s.csci_id, "egress": EGRESS[letters[s.csci_id]]} for s in specs),
            ]
        },
        f"{SM}:update-control": {"rate-limit": {"max-reports": 10_000}},
        f"{ST}:forwarders": {
            "reconcile-interval": 1,
            "forwarder": [
                {
                    "name": "ingress-1",
                    "address": "127.0.0.1",
                    "port": forwarder.netconf,
                    "username": CPS[0],
                    "password": CPS[1],
                    "role": ["ingress"],
                    "ingress-id": A_ID,
                    "cs-id": ["ARS", SERVICE],
                }
            ],
        },
        "bench-list:bench": {"target": [{"name": "t0"}]},
    }


def located(delay: float, locators: list[str]) -> list[drafts.Spec]:
    """The 6.8 candidates (B's forwarding delay as given) under loopback locators."""
    return [
        replace(s, csci_id=locator, service=SERVICE)
        for s, locator in zip(drafts.example_68(delay), locators, strict=True)
    ]


@pytest.fixture
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("failover")
    specs = located(0.6, [f"127.0.0.1:{free_port()}" for _ in range(2)])  # C preferred
    with contextlib.ExitStack() as stack:
        forwarder, csma = agents(stack, folder, specs, A_ID)
        cluster = stack.enter_context(running_cluster(folder, seed(specs, csma.c_sma(), forwarder)))
        now = time.time()
        for replica in cluster.replicas:  # each replica keeps its own candidate book
            call(replica, "advertise-capability", drafts.capability(specs, now))
            call(replica, "advertise-forwarding-view", drafts.forwarding(specs, now))
        yield Bed(cluster, forwarder, specs, csma)


@dataclass
class Flip:
    """The forwarder showed the ARS entry a report implied: when that value was first
    reported, the forwarder's term when it was seen, the entry."""

    reported_at: float
    term: int
    entry: tuple[str | None, str | None]


@dataclass
class Stream:
    """The background writers and observers; what each of them saw."""

    replicas: list[Server]
    forwarder: Forwarder
    stop: threading.Event = field(default_factory=threading.Event)
    acked: list[tuple[float, str, int]] = field(default_factory=list)  # (when, name, port)
    refused: list[str] = field(default_factory=list)  # why each was not acknowledged
    flips: list[Flip] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rules: list[list[tuple[str, str]]] = field(default_factory=list)  # (commitment, csci-id)
    killed: set[int] = field(default_factory=set)  # the ports of the replicas killed
    killed_at: float = 0.0
    gas: int = 600  # the value reported last
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        for work in (self._commit, self._report, self._observe):
            thread = threading.Thread(target=self._guarded, args=(work,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def halt(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)
        assert not any(t.is_alive() for t in self.threads), "a stream thread did not stop"
        assert self.errors == [], self.errors

    def acked_since(self, moment: float) -> int:
        return sum(1 for when, _, _ in self.acked if when > moment)

    def _guarded(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as error:
            self.errors.append(f"{work.__name__}: {error!r}")

    def _commit(self) -> None:
        """Create targets, round-robin over the replicas; record those acknowledged."""
        sessions = [_client() for _ in self.replicas]
        for number in itertools.count(1):
            if self.stop.is_set():
                return
            index = number % len(self.replicas)
            replica, client = self.replicas[index], sessions[index]
            name = f"fo-{number}"
            body = {"bench-list:target": [{"name": name}]}
            try:
                reply = client.post(
                    replica.url(TARGETS), json=body, headers={"Content-Type": JSON}, timeout=30
                )
            except requests.RequestException as error:  # not acknowledged
                self.refused.append(type(error).__name__)
                continue
            if 200 <= reply.status_code < 300:
                self.acked.append((time.time(), name, replica.port))
            else:
                self.refused.append(str(reply.status_code))

    def _report(self) -> None:
        """Report the CST to every live replica; switch the value once the forwarder shows
        the entry it implies (one sequence, increasing, from this thread only)."""
        reporters = {r.port: replace(r, session=_client()) for r in self.replicas}
        self.gas, reported_at = 0, time.time()
        while not self.stop.is_set():
            for replica in self.replicas:
                if replica.port in self.killed:
                    continue
                try:
                    report(reporters[replica.port], sci3_gas=self.gas)
                except (requests.RequestException, AssertionError):
                    if replica.port not in self.killed:  # not the one killed meanwhile
                        raise
            with contextlib.suppress(Exception):  # the forwarder read again next round
                if target(self.forwarder, "ARS") == IMPLIED[self.gas]:
                    term = forwarder_term(self.forwarder)
                    self.flips.append(Flip(reported_at, term, IMPLIED[self.gas]))
                    self.gas, reported_at = 600 - self.gas, time.time()

    def _observe(self) -> None:
        """Read the session's rules at the forwarder, again and again (one NETCONF session,
        opened again if it breaks)."""
        while not self.stop.is_set():
            with contextlib.suppress(Exception), connect_nc(self.forwarder.netconf, *CPS) as nc:
                while not self.stop.is_set():
                    reply = nc.get_config(source="running")
                    found = [_members(r) for r in reply.data_ele.iter(f"{{{NS}}}rule")]
                    self.rules.append(
                        [
                            (r["commitment-id"], r["csci-id"])
                            for r in found
                            if r["match"]["session-id"] == SESSION
                        ]
                    )
                    self.stop.wait(0.02)
            self.stop.wait(0.1)


def _client() -> requests.Session:
    client = requests.Session()
    client.auth = ADMIN
    return client


def handoff_of(replica: Server) -> dict[str, Any]:
    (handoff,) = session(replica, SESSION)["handoff"]
    found: dict[str, Any] = handoff
    return found


def committed_on(replica: Server, source: tuple[str, str], moved: str) -> bool:
    """Whether ``replica`` serves the handoff committed and the move to ``moved`` in force."""
    entry = session(replica, SESSION)
    commitments = [(c["csci-id"], c["state"]) for c in entry["commitment"]]
    return handoff_of(replica)["state"] == "committed" and commitments == [
        (source[1], "superseded"),
        (moved, "active"),
    ]


def bench_targets(replica: Server) -> set[str]:
    """The names of the bench-list targets in the replica's running."""
    return {t["name"] for t in config_tree(replica)["bench-list:bench"]["target"]}


def session_rules(forwarder: Forwarder) -> list[tuple[str, str]]:
    """(commitment-id, csci-id) of each rule of the session at the forwarder."""
    return [(r["commitment-id"], r["csci-id"]) for r in rules_of(forwarder, SESSION)]


def reserved_on(replica: Server) -> bool:
    return bool(handoff_of(replica)["state"] == "reserved")


@dataclass
class Roles:
    """Who leads at first (and is killed), who survives, who leads after."""

    first: int
    leader: Server
    survivors: list[Server]
    second: int = 0
    new_leader: Server | None = None


def test_a_leader_killed_mid_stream_loses_no_commit_and_its_handoff_completes(bed: Bed) -> None:
    """The issue's scenario, in the order the module docstring tells it."""
    wait_until(lambda: forwarder_term(bed.forwarder) > 0, "the first leader pushed its term")
    first = forwarder_term(bed.forwarder)
    leader = leader_of(bed.cluster.replicas, first)
    roles = Roles(first, leader, [r for r in bed.cluster.replicas if r is not leader])
    source, handoff_id = put_a_handoff_in_flight(bed, roles)
    stream = Stream(bed.cluster.replicas, bed.forwarder)
    stream.start()
    try:
        moved = kill_the_leader_mid_stream(bed, roles, stream, handoff_id)
    finally:
        stream.halt()
    print(
        f"stream: {len(stream.acked)} commits acknowledged ({stream.acked_since(stream.killed_at)}"
        f" after the kill), not acknowledged: {dict(Counter(stream.refused))}, "
        f"{len(stream.flips)} flips, {len(stream.rules)} observations of the rule"
    )
    assert {f.term for f in stream.flips if f.reported_at > stream.killed_at} == {roles.second}
    no_acknowledged_commit_is_lost(roles.survivors, stream)
    the_handoff_is_committed_never_half_applied(bed, roles, stream, source, moved)
    the_forwarder_holds_what_the_new_leader_computes(bed, roles)


def put_a_handoff_in_flight(bed: Bed, roles: Roles) -> tuple[tuple[str, str], str]:
    """Steer the classic service; admit the session on the leader (at C) and move it to B:
    B's path got faster, the step boundary reserves at B's C-SMA; the handoff is in etcd
    and on the other replicas. The source commitment (id, instance) and the handoff id."""
    replicas, forwarder = bed.cluster.replicas, bed.forwarder
    b, c = bed.specs
    for replica in replicas:
        report(replica)
    wait_until(lambda: target(forwarder, "ARS") == IMPLIED[600], "the ARS entry at SCI-3")
    descriptor = drafts.descriptor_68(SESSION, 29, SERVICE)
    admitted = call(roles.leader, "submit-descriptor", {"descriptor": descriptor})
    assert admitted["selected"] == c.csci_id
    source = (admitted["commitment"]["commitment-id"], c.csci_id)
    wait_until(lambda: session_rules(forwarder) == [source], "the source rule at the forwarder")

    faster = located(0.3, [s.csci_id for s in bed.specs])
    for replica in replicas:
        call(replica, "advertise-forwarding-view", drafts.forwarding(faster, time.time(), 2))
    call(roles.leader, "step-boundary", {"session-id": SESSION, "turn-id": 1, "step-id": 30})
    handoff = handoff_of(roles.leader)
    assert (handoff["state"], handoff["target"]) == ("reserved", b.csci_id), handoff
    assert session(roles.leader, SESSION)["current-commitment"] == source[0]
    (reserve,) = bed.csma.exchanges("reserve-state", SESSION)
    assert (reserve["csci-id"], reserve["status"]) == ([b.csci_id], "accepted")
    assert Etcd(endpoints_of(bed.cluster.etcd.url)).get(PREFIX + SESSION) is not None
    for other in roles.survivors:
        wait_until(functools.partial(reserved_on, other), f"the handoff on {other.port}")
    return source, str(handoff["handoff-id"])


def kill_the_leader_mid_stream(bed: Bed, roles: Roles, stream: Stream, handoff_id: str) -> str:
    """Once the stream has commits acknowledged and flips, kill -9 the leader: the new
    leader's first push is accepted within 3 s; the target's completion goes to the survivor
    that does not lead; the stream goes on until more commits are acknowledged, the new
    leader has flipped the entry and the rule has moved. The instance moved to."""
    forwarder = bed.forwarder
    wait_until(
        lambda: (
            (len(stream.acked) >= BEFORE_KILL and len(stream.flips) >= 2) or bool(stream.errors)
        ),
        "commits acknowledged and the ARS entry flipped before the kill",
    )
    assert not stream.errors, stream.errors
    assert any(port == roles.leader.port for _, _, port in stream.acked)  # it acknowledged some
    stream.killed.add(roles.leader.port)
    stream.killed_at = time.time()
    roles.leader.process.kill()
    roles.leader.process.wait(timeout=30)
    wait_until(lambda: forwarder_term(forwarder) > roles.first, "a new leader pushed its term")
    roles.second = forwarder_term(forwarder)
    roles.new_leader = leader_of(roles.survivors, roles.second)
    took = accepted_at(forwarder, roles.second) - stream.killed_at
    print(f"failover under the stream: killed to the new term accepted: {took:.2f} s")
    assert took <= FAILOVER_BOUND_S

    (follower,) = (r for r in roles.survivors if r is not roles.new_leader)
    notice = {
        "handoff-id": handoff_id,
        "reporter": "target",
        "status": "completed",
        "usable-key": ["ctx"],
        "at": drafts.iso(time.time()),
    }
    call(follower, "state-transfer-notice", notice)
    moved = bed.specs[0].csci_id  # B
    entry = session(follower, SESSION)
    assert entry["handoff"][0]["state"] == "committed"
    wanted = [(entry["current-commitment"], moved)]
    wait_until(
        lambda: (
            (
                stream.acked_since(stream.killed_at) >= AFTER_KILL
                and any(f.reported_at > stream.killed_at for f in stream.flips)
                and stream.rules[-1:] == [wanted]
            )
            or bool(stream.errors)
        ),
        "commits acknowledged, the ARS entry flipped and the rule moved by the new leader",
    )
    return moved


def no_acknowledged_commit_is_lost(survivors: list[Server], stream: Stream) -> None:
    """Every acknowledged commit is on both survivors, which serve one configuration."""
    tree = wait_identical(survivors, any_order=True)
    present = {t["name"] for t in tree["bench-list:bench"]["target"]}
    after = {port for when, _, port in stream.acked if when > stream.killed_at}
    assert after >= {r.port for r in survivors}  # both took commits after the kill
    lost = {name for _, name, _ in stream.acked} - present
    assert not lost, f"acknowledged, then lost: {sorted(lost)}"
    assert all(bench_targets(r) >= present for r in survivors)


def the_handoff_is_committed_never_half_applied(
    bed: Bed, roles: Roles, stream: Stream, source: tuple[str, str], moved: str
) -> None:
    """The handoff committed on every survivor, the target's commitment the rule at the
    forwarder; every observation of the rule was one rule, the source's, then the target's.
    The session goes on at the target: a step boundary on the new leader extends it."""
    for replica in roles.survivors:
        wait_until(
            functools.partial(committed_on, replica, source, moved),
            f"the handoff committed on {replica.port}",
        )
    assert roles.new_leader is not None
    moved_to = (session(roles.new_leader, SESSION)["current-commitment"], moved)
    assert session_rules(bed.forwarder) == [moved_to]
    assert all(seen in ([source], [moved_to]) for seen in stream.rules), stream.rules
    switched = [seen == [moved_to] for seen in stream.rules]
    assert (switched[0], switched[-1]) == (False, True), "the observer saw no move"
    assert switched == sorted(switched), "the rule went back to the source"

    # the session goes on at the target, on the new leader: step 31 extends its commitment
    call(roles.new_leader, "step-boundary", {"session-id": SESSION, "turn-id": 1, "step-id": 31})
    wanted = [(moved_to[0], "active", {"first": 30, "last": 31})]
    for replica in roles.survivors:
        wait_until(
            functools.partial(in_force, replica, wanted),
            f"the extended target commitment on {replica.port}",
        )
    wait_until(
        lambda: (
            [
                (r["commitment-id"], r["match"].get("last-step"))
                for r in rules_of(bed.forwarder, SESSION)
            ]
            == [(moved_to[0], "31")]
        ),
        "the target's rule revised to step 31 at the forwarder",
    )


def in_force(replica: Server, wanted: list[tuple[str, str, Any]]) -> bool:
    """Whether the session's commitments in force on ``replica`` are ``wanted`` (id, state,
    steps)."""
    found = session(replica, SESSION)["commitment"]
    return [
        (c["commitment-id"], c["state"], c["steps"]) for c in found if c["state"] == "active"
    ] == wanted


def the_forwarder_holds_what_the_new_leader_computes(bed: Bed, roles: Roles) -> None:
    """A final report with a known value (a change): the ARS entry it implies at the
    forwarder, the new leader in sync, its intended counts those the forwarder holds."""
    forwarder, leader = bed.forwarder, roles.new_leader
    assert leader is not None
    shown = target(forwarder, "ARS")
    final = next(gas for gas, entry in IMPLIED.items() if entry != shown)
    for replica in roles.survivors:
        report(replica, sci3_gas=final)
    wait_until(lambda: target(forwarder, "ARS") == IMPLIED[final], "the final ARS entry")
    reconciled(leader)
    state = leader_state(leader)
    assert state["in-sync"]
    (follower,) = (r for r in roles.survivors if r is not leader)
    assert pushes(follower) == 0  # the new leader alone acts on the network
    services = running_services(forwarder)  # the agent service's: its default route
    assert (sorted(services), services[SERVICE]["fallback-mode"]) == (
        ["ARS", SERVICE],
        "default-route",
    )
    assert int(state["intended-services"]) == len(services)
    assert int(state["intended-rules"]) == len(running_rules(forwarder)) == 1
    assert target(forwarder, "ARS") == IMPLIED[final]
    assert forwarder_term(forwarder) == roles.second
