"""Loss of the cluster store's quorum is visible and safe (issue 22).

Real processes: 3 etcd members, 3 replicas. One member killed: writes go on. Two killed: a
configuration write is refused on every northbound with ``resource-denied``, error-app-tag
``cluster-unavailable`` (RESTCONF 503), nothing changes, reads and select-service answer from
the replica's own tables and /readyz says why; the members restarted: writes resume.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from ncclient.operations.rpc import RPCError

from tests.functional.cluster import Cluster, running_cluster, wait_identical, wait_until
from tests.functional.netconf_client import admin_nc
from tests.functional.restconf_server import JSON, Server
from tests.functional.test_service_metrics import INGRESS, cst_report, nst_report, rpc
from tests.functional.test_service_metrics import seed as metrics_seed

pytestmark = pytest.mark.functional
SM = "ietf-cats-service-metrics"
ENTRIES = "data/bench-list:bench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas with the service-metrics seed and a bench target."""
    document = metrics_seed()
    document["bench-list:bench"] = {"target": [{"name": "t1"}]}
    with running_cluster(tmp_path_factory.mktemp("quorum"), document) as running:
        yield running


def post_entry(server: Server, key: int) -> requests.Response:
    """Create one bench-list entry."""
    body = {"bench-list:entry": [{"id": key, "name": f"e{key}", "target": "t1", "weight": 1}]}
    return server.request(
        "POST", ENTRIES, data=json.dumps(body), headers={"Content-Type": JSON}, timeout=60
    )


def leading(server: Server) -> bool:
    """Whether the replica's log says it leads now (the last word on it is "leads")."""
    words = re.findall(r"cluster: \S+ (leads|stepped down)", server.stderr())
    return bool(words) and words[-1] == "leads"


def readyz(server: Server) -> tuple[int, Any]:
    """The management listener's /readyz: status and document."""
    reply = requests.get(f"http://127.0.0.1:{server.metrics_port}/readyz", timeout=10)
    return reply.status_code, reply.json()


def test_quorum_loss_refuses_writes_and_keeps_reads_and_selection(cluster: Cluster) -> None:
    a, b, _ = cluster.replicas
    members = cluster.etcd.members
    assert rpc(a, "report-service-metrics", cst_report()).status_code in (200, 204)
    assert rpc(a, "report-network-metrics", nst_report()).status_code in (200, 204)

    cluster.etcd.kill(members[0])  # one member down: a majority is left
    assert post_entry(a, 1).status_code == 201
    wait_identical(cluster.replicas)

    cluster.etcd.kill(members[1])  # two down: no quorum
    wait_until(lambda: readyz(a)[0] == 503, "replica A's /readyz reports the loss")
    _, ready = readyz(a)
    assert ready["checks"]["cluster-writes"] is False
    assert "etcd" in ready["why"]["cluster-writes"]
    wait_until(lambda: not any(leading(r) for r in cluster.replicas), "the leader stepped down")

    before = a.get_json(ENTRIES)
    refused = post_entry(a, 2)
    assert refused.status_code == 503, refused.text
    error = refused.json()["ietf-restconf:errors"]["error"][0]
    assert (error["error-tag"], error["error-app-tag"]) == (
        "resource-denied",
        "cluster-unavailable",
    )
    assert "unavailable" in error["error-message"]
    with admin_nc(b) as session, pytest.raises(RPCError) as netconf_refused:
        session.edit_config(
            target="running",
            config='<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
            '<bench xmlns="urn:example:bench-list"><entry><id>3</id><name>e3</name>'
            "<target>t1</target><weight>1</weight></entry></bench></config>",
        )
    assert netconf_refused.value.tag == "resource-denied"
    assert netconf_refused.value.app_tag == "cluster-unavailable"
    assert a.get_json(ENTRIES) == before  # reads answer, nothing changed
    selected = rpc(b, "select-service", {"cs-id": "ARS", "ingress": INGRESS})
    assert selected.status_code == 200, selected.text
    assert selected.json()[f"{SM}:output"]["decision-id"]

    for member in members[:2]:  # quorum back: writes resume
        cluster.etcd.start(member)
    cluster.etcd.wait_healthy()
    wait_until(lambda: readyz(a)[0] == 200, "replica A is ready again")
    assert post_entry(a, 2).status_code == 201
    tree = wait_identical(cluster.replicas)
    assert {e["id"] for e in tree["bench-list:bench"]["entry"]} == {1, 2}
