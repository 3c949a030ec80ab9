"""``catsctl serve --plugin``: RPC and action handlers and state of a plugin, over real HTTP.

The server runs tests/functional/plugins/rc_test_plugin.py, which serves rc-test's operations.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from lxml import etree

from tests.functional.restconf_server import JSON, XML, Server, admin_users

pytestmark = pytest.mark.functional

PLUGIN = "tests.functional.plugins.rc_test_plugin"
RC_NS = "urn:example:rc-test"
RESTCONF_NS = "urn:ietf:params:xml:ns:yang:ietf-restconf"
PING = "operations/rc-test:ping"


SERVE_ARGS = ("--plugin", PLUGIN)


def seed() -> dict[str, object]:
    """The admin and one link."""
    document = admin_users()
    document["rc-test:top"] = {"link": [{"from": "x", "to": "y", "speed": 10}]}
    return document


def post(server: Server, path: str, body: object) -> requests.Response:
    """POST a JSON body."""
    return server.request("POST", path, headers={"Content-Type": JSON}, json=body)


def error_of(reply: requests.Response, status: int, tag: str) -> dict[str, Any]:
    """The reply is ``status`` with one ``ietf-restconf:errors`` error of ``tag``."""
    assert reply.status_code == status, reply.text
    assert reply.headers["Content-Type"].startswith(JSON)
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-tag"] == tag, reply.text
    return dict(error)


def test_rpc_output_in_json(server: Server) -> None:
    reply = post(server, PING, {"rc-test:input": {"message": "hi"}})
    assert reply.status_code == 200, reply.text
    assert reply.headers["Content-Type"].startswith(JSON)
    assert reply.json() == {"rc-test:output": {"echo": "hi"}}


def test_rpc_output_in_xml(server: Server) -> None:
    body = f'<input xmlns="{RC_NS}"><message>hello</message></input>'
    reply = server.request("POST", PING, data=body, headers={"Content-Type": XML, "Accept": XML})
    assert reply.status_code == 200, reply.text
    assert reply.headers["Content-Type"].startswith(XML)
    root = etree.fromstring(reply.content)
    assert root.tag == f"{{{RC_NS}}}output"
    assert root.findtext(f"{{{RC_NS}}}echo") == "hello"


def test_rpc_without_output_is_204_and_state_shows_its_effect(server: Server) -> None:
    assert post(server, PING, {"rc-test:input": {"message": "count me"}}).status_code == 200
    counters = server.get_json("data/rc-test:top/counters")
    assert int(counters["rc-test:counters"]["packets"]) >= 1
    reply = post(server, "operations/rc-test:reset-counters", {"rc-test:input": {"delay": 0}})
    assert reply.status_code == 204, reply.text
    assert reply.content == b""
    assert server.get_json("data/rc-test:top/counters") == {"rc-test:counters": {"packets": "0"}}


def test_plugin_state_shows_in_operational_reads(server: Server) -> None:
    top = server.get_json("data/rc-test:top")["rc-test:top"]
    assert "packets" in top["counters"]
    assert top["link"] == [{"from": "x", "to": "y", "speed": 10}]
    whole = server.get_json("data")["ietf-restconf:data"]
    assert "packets" in whole["rc-test:top"]["counters"]
    config = server.get_json("data/rc-test:top", content="config")["rc-test:top"]
    assert "counters" not in config
    running = server.request("GET", "ds/ietf-datastores:running/rc-test:top/counters")
    assert running.status_code == 404


def test_action_on_a_list_entry(server: Server) -> None:
    path = "data/rc-test:top/link=x,y/reset"
    reply = post(server, path, {"rc-test:input": {"reason": "test"}})
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"rc-test:output": {"done": True}}
    error_of(post(server, path, {"rc-test:input": {"reason": "locked"}}), 409, "in-use")


def test_invalid_input_is_400(server: Server) -> None:
    error_of(post(server, PING, {"rc-test:input": {"nonsense": 1}}), 400, "unknown-element")
    reply = post(server, "operations/rc-test:reset-counters", {"rc-test:input": {"delay": 300}})
    error_of(reply, 400, "invalid-value")
    malformed = server.request(
        "POST", PING, data='{"rc-test:input": ', headers={"Content-Type": JSON}
    )
    error_of(malformed, 400, "malformed-message")
    malformed_xml = server.request(
        "POST", PING, data=f'<input xmlns="{RC_NS}"><message>', headers={"Content-Type": XML}
    )
    assert malformed_xml.status_code == 400, malformed_xml.text


def test_handler_errors_keep_their_tag(server: Server) -> None:
    error = error_of(
        post(server, PING, {"rc-test:input": {"message": "refuse"}}), 409, "resource-denied"
    )
    assert error["error-message"] == "ping refused on request"
    xml = server.request(
        "POST",
        PING,
        data=f'<input xmlns="{RC_NS}"><message>refuse</message></input>',
        headers={"Content-Type": XML, "Accept": XML},
    )
    assert xml.status_code == 409
    root = etree.fromstring(xml.content)
    assert root.findtext(f"{{{RESTCONF_NS}}}error/{{{RESTCONF_NS}}}error-tag") == (
        "resource-denied"
    )


@pytest.mark.parametrize(
    ("message", "logged"),
    [("bad-output", "returned invalid output"), ("crash", "Traceback")],
)
def test_invalid_output_or_failing_handler_is_500_without_internals(
    server: Server, message: str, logged: str
) -> None:
    reply = post(server, PING, {"rc-test:input": {"message": message}})
    error = error_of(reply, 500, "operation-failed")
    assert error["error-type"] == "application"
    assert "rc-test:ping" in error["error-message"]
    for leaked in ("Traceback", "no-such-leaf", "RuntimeError", "bug", 'File "'):
        assert leaked not in reply.text
    assert logged in server.stderr()  # the operator learns what the client does not


def test_state_entity_tag_follows_the_state(server: Server) -> None:
    """A conditional GET of state never answers 304 once the state has changed."""
    path = "data/rc-test:top/counters"
    first = server.request("GET", path)
    etag = first.headers["ETag"]
    unchanged = server.request("GET", path, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304
    post(server, "operations/rc-test:ping", {"rc-test:input": {"message": "tick"}})
    changed = server.request("GET", path, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag
    assert changed.json() != first.json()
