"""Agents report to every replica of a C-PS cluster (issue 22: soft state without flooding etcd).

Real processes: 3 etcd members, 3 ``catsctl serve --cluster`` replicas, one ``catsctl cnma``
and one ``catsctl csma`` whose ``[cps]`` names the three (``url`` and ``replica-url``). Each
replica keeps its own NST and CST from the agents' reports (nothing of it in etcd) and answers
select-service from them; the C-NMA's forwarding view (MSG-7) and the C-SMA's
advertise-capability (MSG-4) are accepted by each; a replica killed, the reports keep
reaching the others.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from controller.auth import hash_password
from controller.cluster.etcd import Etcd, endpoints_of
from controller.demo import drafts
from tests.functional.cluster import Cluster, running_cluster
from tests.functional.restconf_server import Server
from tests.functional.test_cnma import (
    CANDIDATES,
    CF2,
    CNMA,
    EXAMPLE,
    Cnma,
    delay,
    running_cnma,
)
from tests.functional.test_cnma import sender as cnma_sender
from tests.functional.test_cnma import wait_for as cnma_wait
from tests.functional.test_csma import (
    CPS_USER,
    CSMA_SITE,
    EGRESS,
    SCI_USER,
    SECRET,
    SM,
    Bed,
    Csma,
    _path_to_the_egress,
    _sci_report,
    _select,
    csma_config,
    seed,
)
from tests.functional.test_sci import wait_for

pytestmark = pytest.mark.functional
REPORT = "ietf-cats-sci:report-sci-metrics"
SITE = "SS2"  # the C-SMA's per-site entry (its CSCI-ID is the site)


INSTANCE = "10.9.0.1:80"  # csma_config's one instance (service ARS): advertised in MSG-4


@pytest.fixture(scope="module")
def testbed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Csma]]:
    """3 etcd members and 3 replicas that know the C-SMA's and the C-NMA's logins, with the
    site attached to EGRESS and the C-SMA's instance and the C-NMA's example instances
    configured candidates; the C-SMA reporting to all three
    (``url`` the first, ``replica-url`` the others; 0.5 s advertisements)."""
    site = Csma(CSMA_SITE, tmp_path_factory.mktemp("csma"), {})
    document = seed()
    document[f"{SM}:csci-attachments"] = {"attachment": [{"csci-id": SITE, "egress": EGRESS}]}
    login = (CPS_USER, SECRET + CPS_USER)  # how the C-PS would log in at the C-SMA
    selection = drafts.config(
        [drafts.Spec(INSTANCE, service="ARS")],
        lambda _: drafts.c_sma(site.netconf, CSMA_SITE, login),
    )
    selection["candidates"]["candidate"] += [{"csci-id": c, "cs-id": "ARS"} for c in CANDIDATES]
    document[f"{drafts.AS}:agent-selection"] = selection
    users: Any = document["ietf-system:system"]
    users["authentication"]["user"].append({"name": CNMA[0], "password": hash_password(CNMA[1])})
    with running_cluster(tmp_path_factory.mktemp("agents"), document) as running:
        a, b, c = running.replicas
        config = csma_config(CSMA_SITE, a, aggregation="per-site", **{"sci-expiry-ms": 600_000})
        config["cps"]["replica-url"] = [f"{b.root}/restconf", f"{c.root}/restconf"]
        config["advertising"] = {"interval-ms": 500}
        site.config = config
        with site:
            yield running, site


def last_sequence(bed: Bed) -> int:
    """The C-SMA's last accepted sequence number as one replica has it."""
    return int(bed.sender(CSMA_SITE)["last-sequence"])


def advertised_to(site: Csma, url: str) -> bool:
    """Whether ``url`` accepted an advertise-capability of the C-SMA (its log says so only
    on a 2xx answer)."""
    return any(
        "advertise-capability" in line and f"to {url}: 1 instances" in line
        for line in site.log().splitlines()
    )


def nst_delay_is(replica: Server, value: Decimal) -> bool:
    """Whether the replica's NST has (10.0.0.1, CF-2) at ``value`` ms."""
    return delay(replica, CF2) == value


def logged(cnma: Cnma, pattern: str) -> bool:
    """Whether the C-NMA's log has a line matching ``pattern``."""
    return re.search(pattern, cnma.stderr()) is not None


def test_a_cnma_reports_and_advertises_to_every_replica(
    testbed: tuple[Cluster, Csma], tmp_path: Path
) -> None:
    """The section 7.1 NST and its forwarding view (MSG-7) reach each replica, which keeps
    them in its own tables; each replica has an increasing part of the one sequence."""
    cluster, _ = testbed
    a, b, c = cluster.replicas
    document = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "cnma.password").write_text(CNMA[1] + "\n")
    document["cps"] = {
        "url": f"{a.root}/restconf",
        "replica-url": [f"{b.root}/restconf", f"{c.root}/restconf"],
        "username": CNMA[0],
        "password-file": "cnma.password",
    }
    document["reporting"] |= {"interval-ms": 200, "heartbeat-ms": 3000, "forwarding-view": True}
    config = tmp_path / "cnma.json"
    config.write_text(json.dumps(document))
    with running_cnma(config, tmp_path / "state") as cnma:
        for replica in cluster.replicas:
            cnma_wait(functools.partial(nst_delay_is, replica, Decimal(8)), cnma)
            url = f"{replica.root}/restconf"
            view = rf"forwarding view \d+: {len(CANDIDATES)} candidates \(to {re.escape(url)}\)"
            cnma_wait(functools.partial(logged, cnma, view), cnma)
        numbers = {int(cnma_sender(replica)["last-sequence"]) for replica in cluster.replicas}
        assert len(numbers) == 3  # each number went to one replica


def test_a_csma_reports_to_every_replica_and_each_selects_from_its_own_tables(
    testbed: tuple[Cluster, Csma],
) -> None:
    cluster, site = testbed
    c = cluster.replicas[2]
    assert site.post(REPORT, _sci_report(INSTANCE, 1, 30, "10.000"), SCI_USER).ok
    beds = [Bed(replica, site, {}, 0, 0) for replica in cluster.replicas]
    for each in beds:  # every replica has the entry in its own CST
        entry = each.entry(lambda e: e["gas"] == 30, SITE)
        assert (entry["source"], entry["aggregated"]) == (CSMA_SITE, True)
    # one sequence for all: each number went to one replica, each saw increasing numbers
    numbers = {last_sequence(each) for each in beds}
    assert len(numbers) == 3
    for replica in cluster.replicas:  # select-service answered from each replica's tables
        _path_to_the_egress(replica)
        selected = _select(replica)
        assert (selected["result"], selected["csci-id"]) == ("selected", SITE)
    members = cluster.etcd.members
    etcd = Etcd(endpoints_of(f"etcd://127.0.0.1:{members[0].client_port}"))
    keys = [kv.key for kv in etcd.range_prefix("/")]
    assert keys  # the configuration's log, the leader, the key check
    assert not [k for k in keys if "computing-service-table" in k or "metric" in k]
    log = "\n".join(kv.value.decode(errors="replace") for kv in etcd.range_prefix("/cats/"))
    assert not [n for n in numbers if str(n) in log]  # the reports: soft state stays off etcd

    for replica in cluster.replicas:  # MSG-4 accepted by every replica
        url = f"{replica.root}/restconf"
        wait_for(f"MSG-4 to {url}", functools.partial(advertised_to, site, url))

    c.process.kill()  # one replica gone: the others keep getting the reports
    c.process.wait()
    assert site.post(REPORT, _sci_report(INSTANCE, 2, 20, "10.000"), SCI_USER).ok
    for each in beds[:2]:
        each.entry(lambda e: e["gas"] == 20, SITE)
    before = [last_sequence(each) for each in beds[:2]]
    wait_for(  # and the heartbeats too, while the C-SMA retries the dead one
        "reports after the kill",
        lambda: all(last_sequence(e) > n for e, n in zip(beds[:2], before, strict=True)),
        timeout=60,
    )
    assert f"{c.root}/restconf unreachable" in site.log()
