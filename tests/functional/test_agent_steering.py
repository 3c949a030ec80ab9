"""An agent session's commitment becomes a steering rule on a real forwarder (agent draft 8.1
P8, 9.1 MSG-10; ietf-cats-steering ``rule``).

``catsctl serve`` is the C-PS with agent selection and the southbound wired in (controller.app):
running is seeded with its ``agent-selection`` configuration, the ``csci-attachments`` (the
egress of each instance) and the forwarder inventory: one ingress ``catsctl forwarder`` that
handles the agent service. One ``catsctl csma`` answers query-state for the candidates and
advertises their capability itself (MSG-4, the draft's numbers in its configuration; started
with the helpers of test_agent_selection); the paths are advertised as a C-NMA would (MSG-7).
Admitting a session commits it to an instance (the 8.4 example: C); the C-PS's steering worker
writes the commitment's rule into the forwarder, read back from the forwarder's running
configuration over NETCONF. Repeated instructions leave
exactly one rule and nothing to repair; a client request carrying the session's attribution
goes through the forwarder to the committed instance (a loopback HTTP server standing for its
CSCI-ID); closing the session removes the rule.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
from lxml import etree

from controller.auth import hash_password
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    Server,
    admin_policy,
    free_port,
    running_server,
    write_init,
)
from tests.functional.test_agent_selection import (
    ADVERTISING,
    AS,
    _instances,
    advertised_by,
    call,
    csma_process,
    session,
)
from tests.functional.test_forwarder import CPS, Forwarder
from tests.functional.test_steering import wait_for
from tests.unit.agent_selection import drafts

pytestmark = pytest.mark.functional
ST = "ietf-cats-steering"
SM = "ietf-cats-service-metrics"
NS = f"urn:ietf:params:xml:ns:yang:{ST}"
SERVICE = "agent-steer"
INGRESS_ID = "10.0.0.1"
EGRESS = {"A": "CF-1", "B": "CF-2", "C": "CF-3"}
RECONCILE_S = 1
REPORTER = ("csma-1", "csma-1-report")
"""The C-SMA's user at the C-PS (its reports, MSG-4)."""
CPS_LOGIN = ("cps-1", "cps-1-secret")
"""How the C-PS logs in at the C-SMA (MSG-5, MSG-11)."""


def reports_to(port: int) -> dict[str, str]:
    """Where the C-SMA reports: the C-PS's RESTCONF on ``port``, as :data:`REPORTER`."""
    url = f"http://127.0.0.1:{port}/restconf"
    return {"url": url, "username": REPORTER[0], "password": REPORTER[1]}


def reporter_user() -> dict[str, str]:
    """:data:`REPORTER` as a user of the C-PS's ``ietf-system`` (a crypt hash)."""
    return {"name": REPORTER[0], "password": hash_password(REPORTER[1])}


@dataclass
class Instance:
    """A loopback HTTP server standing for a service contact instance: its CSCI-ID is its
    IP:port locator; it counts the requests that reach it and the session each one names."""

    letter: str
    server: ThreadingHTTPServer = field(init=False)
    sessions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.sessions.append(self.headers.get("CATS-Session-Id", ""))
                body = f"served by {owner.letter}".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)

    @property
    def csci_id(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"


@dataclass
class Bed:
    """The C-PS, its forwarder and the instances by letter."""

    cps: Server
    forwarder: Forwarder
    instances: dict[str, Instance]
    specs: list[drafts.Spec]


def _specs(instances: dict[str, Instance]) -> list[drafts.Spec]:
    """The 8.4 candidates (C's forwarding 0.5 s over B's: C is selected) under their locators."""
    return [
        replace(s, csci_id=instances[s.csci_id].csci_id, service=SERVICE)
        for s in drafts.example_84(0.5)
    ]


def _seed(specs: list[drafts.Spec], c_sma: dict[str, Any], forwarder: Forwarder) -> Any:
    letters = {s.csci_id: letter for s, letter in zip(specs, "ABC", strict=True)}
    users = [
        {"name": ADMIN[0], "password": hash_password(ADMIN[1])},
        reporter_user(),
    ]
    return {
        "ietf-system:system": {"authentication": {"user": users}},
        f"{AS}:agent-selection": drafts.config(specs, lambda s: c_sma),
        **admin_policy(csma=["csma-1"]),  # the C-SMA's user may advertise (MSG-4)
        f"{SM}:csci-attachments": {
            "attachment": [
                {"csci-id": s.csci_id, "egress": EGRESS[letters[s.csci_id]]} for s in specs
            ]
        },
        f"{ST}:forwarders": {
            "reconcile-interval": RECONCILE_S,
            "forwarder": [
                {
                    "name": "ingress-1",
                    "address": "127.0.0.1",
                    "port": forwarder.netconf,
                    "username": CPS[0],
                    "password": CPS[1],
                    "role": ["ingress"],
                    "ingress-id": INGRESS_ID,
                    "cs-id": [SERVICE],
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("agent_steering")
    instances = {letter: Instance(letter) for letter in "ABC"}
    specs = _specs(instances)
    cps_port = free_port()
    forwarder = Forwarder(folder, name="ingress-1", forwarder_id=INGRESS_ID)
    with contextlib.ExitStack() as stack:
        for instance in instances.values():
            thread = threading.Thread(target=instance.server.serve_forever, daemon=True)
            thread.start()
            stack.callback(instance.server.server_close)
            stack.callback(instance.server.shutdown)
        forwarder.start()
        stack.callback(forwarder.stop)
        held = _instances(specs, advertised=True)
        report = reports_to(cps_port)
        csma = stack.enter_context(
            csma_process(folder, "csma-1", held, CPS_LOGIN, report, advertising=ADVERTISING)
        )
        csma.wait()
        wait_for(forwarder.up, 60)
        (folder / "cps").mkdir()
        init = write_init(folder / "cps", _seed(specs, csma.c_sma(), forwarder))
        cps = stack.enter_context(running_server(folder / "cps" / "state", init, port=cps_port))
        advertised_by(csma)
        call(cps, "advertise-forwarding-view", drafts.forwarding(specs, time.time()))
        yield Bed(cps, forwarder, instances, specs)


def _members(element: Any) -> Any:
    children = [c for c in element if isinstance(c.tag, str)]
    if not children:
        return element.text or ""
    return {etree.QName(c).localname: _members(c) for c in children}


def running_rules(forwarder: Forwarder) -> list[dict[str, Any]]:
    """The ``steering/rule`` entries of the forwarder's running configuration (NETCONF)."""
    with connect_nc(forwarder.netconf, *CPS) as manager:
        reply = manager.get_config(source="running")
    return [_members(rule) for rule in reply.data_ele.iter(f"{{{NS}}}rule")]


def rules_of(forwarder: Forwarder, session_id: str) -> list[dict[str, Any]]:
    return [r for r in running_rules(forwarder) if r["match"]["session-id"] == session_id]


def southbound(server: Server) -> dict[str, Any]:
    """The C-PS's state of its session to the forwarder."""
    document = server.get_json(f"data/{ST}:forwarders", content="nonconfig")
    (item,) = document[f"{ST}:forwarders"]["forwarder"]
    state: dict[str, Any] = item["state"]
    return state


def reconciled(server: Server, times: int = 2) -> None:
    """Wait until the C-PS has compared the forwarder with the intended state ``times`` more
    times (its ``last-reconcile`` moved on that often)."""
    for _ in range(times):
        wait_for(functools.partial(_moved_on, server, southbound(server).get("last-reconcile")))


def _moved_on(server: Server, mark: object) -> bool:
    return southbound(server).get("last-reconcile") != mark


def through_forwarder(forwarder: Forwarder, session_id: str, step: int) -> requests.Response:
    """A client request of the session's step through the ingress forwarder's data plane."""
    headers = {
        "CATS-Service-Id": SERVICE,
        "CATS-Session-Id": session_id,
        "CATS-Turn-Id": "1",
        "CATS-Step-Id": str(step),
        "Connection": "close",
    }
    return requests.get(f"{forwarder.url}/infer", headers=headers, timeout=10)


def test_a_commitment_becomes_one_rule_on_the_forwarder_until_the_session_closes(
    bed: Bed,
) -> None:
    c = bed.instances["C"].csci_id
    admitted = call(
        bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-st", SERVICE)}
    )
    assert admitted["selected"] == c
    (commitment,) = session(bed.cps, "s-st")["commitment"]
    commitment_id = commitment["commitment-id"]

    (rule,) = wait_for(lambda: rules_of(bed.forwarder, "s-st"))
    assert rule["commitment-id"] == commitment_id
    assert (rule["cs-id"], rule["csci-id"], rule["egress-forwarder"]) == (SERVICE, c, "CF-3")
    assert rule["match"] == {"session-id": "s-st", "first-step": "1", "last-step": "1"}
    assert rule["decision-id"] == "s-st/1"
    assert rule["lifetime"] == "600"
    assert rule["expires-at"].startswith(commitment["expires-at"][:23])

    # the same step announced again, the same descriptor re-submitted: still one rule
    for _ in range(2):
        call(bed.cps, "step-boundary", {"session-id": "s-st", "turn-id": 1, "step-id": 1})
    call(bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-st", SERVICE)})
    reconciled(bed.cps)  # reconciliations compare the forwarder with the intended state
    (again,) = rules_of(bed.forwarder, "s-st")
    assert again["commitment-id"] == commitment_id
    (entry,) = session(bed.cps, "s-st")["commitment"]  # and one commitment at the C-PS
    assert entry["commitment-id"] == commitment_id
    state = wait_for(lambda: (s := southbound(bed.cps))["in-sync"] and s)
    assert state["intended-rules"] == 1
    assert state["repairs"] == "0"  # what the forwarder returns is what was intended

    # a request of the session's step lands at the committed instance, none elsewhere
    before = {letter: len(i.sessions) for letter, i in bed.instances.items()}
    reply = through_forwarder(bed.forwarder, "s-st", 1)
    assert reply.status_code == 200, reply.text
    assert reply.text == "served by C"
    assert bed.instances["C"].sessions[before["C"] :] == ["s-st"]
    assert all(len(bed.instances[x].sessions) == before[x] for x in "AB")
    states = {r["commitment-id"]: r for r in bed.forwarder.state().get("rule", [])}
    assert states[commitment_id]["counters"]["matched-packets"] == "1"

    # step 2 is not committed yet: its request matches no rule (and the service no entry)
    assert through_forwarder(bed.forwarder, "s-st", 2).status_code != 200
    assert len(bed.instances["C"].sessions) == before["C"] + 1
    # its step boundary extends the commitment: the same rule, revised, now covers step 2
    call(bed.cps, "step-boundary", {"session-id": "s-st", "turn-id": 1, "step-id": 2})
    (revised,) = wait_for(
        lambda: [r for r in rules_of(bed.forwarder, "s-st") if r["match"].get("last-step") == "2"]
    )
    assert revised["commitment-id"] == commitment_id
    assert len(rules_of(bed.forwarder, "s-st")) == 1
    assert through_forwarder(bed.forwarder, "s-st", 2).text == "served by C"

    call(bed.cps, "close-session", {"session-id": "s-st"})
    wait_for(lambda: rules_of(bed.forwarder, "s-st") == [])
    assert southbound(bed.cps)["intended-rules"] == 0


def test_a_255_character_session_id_gets_its_rule_and_its_state(bed: Bed) -> None:
    long_id = "run-" + "x" * 247 + "-end"
    assert len(long_id) == 255
    admitted = call(
        bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_84(long_id, SERVICE)}
    )
    commitment_id = admitted["commitment"]["commitment-id"]
    assert len(commitment_id) <= 128
    (rule,) = wait_for(lambda: rules_of(bed.forwarder, long_id))
    assert rule["commitment-id"] == commitment_id
    assert len(rule["decision-id"]) <= 128
    entry = session(bed.cps, long_id)  # the server renders the state (libyang)
    assert entry["current-commitment"] == commitment_id
    assert [c["state"] for c in entry["commitment"]] == ["active"]
    call(bed.cps, "close-session", {"session-id": long_id})
    wait_for(lambda: rules_of(bed.forwarder, long_id) == [])


def test_an_egress_configured_after_the_commitment_gets_its_rule(bed: Bed) -> None:
    """No egress known when the session is admitted: no rule; once the instance's attachment
    is configured, the C-PS's sweeper places the rule without a new decision."""
    c = bed.instances["C"].csci_id
    path = f"data/{SM}:csci-attachments/attachment={urllib.parse.quote(c, safe='')}"
    attachment = {f"{SM}:attachment": [{"csci-id": c, "egress": EGRESS["C"]}]}
    removed = bed.cps.request("DELETE", path)
    assert removed.status_code == 204, removed.text
    try:
        admitted = call(
            bed.cps, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-late", SERVICE)}
        )
        assert admitted["selected"] == c
        reconciled(bed.cps)  # the C-PS has looked at the forwarder since: still no rule
        assert rules_of(bed.forwarder, "s-late") == []
    finally:
        restored = bed.cps.request("PUT", path, json=attachment, headers={"Content-Type": JSON})
        assert restored.status_code in (201, 204), restored.text
    (rule,) = wait_for(lambda: rules_of(bed.forwarder, "s-late"))
    assert (rule["csci-id"], rule["egress-forwarder"]) == (c, EGRESS["C"])
    call(bed.cps, "close-session", {"session-id": "s-late"})
    wait_for(lambda: rules_of(bed.forwarder, "s-late") == [])
