"""RESTCONF (RFC 8040, 8072, 8527) against a real ``catsctl serve`` over real HTTP.

One server serves the module; each test uses its own keys so that tests stay independent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree

from tests.functional.restconf_server import JSON, XML, Server, admin_users, seeded_server

pytestmark = pytest.mark.functional

RC_NS = "urn:example:rc-test"
RESTCONF_NS = "urn:ietf:params:xml:ns:yang:ietf-restconf"
TOP = "data/rc-test:top"


#: Each test runs against RESTCONF in the server process and in two worker processes.
RESTCONF_WORKERS = (0, 2)


def seed() -> dict[str, object]:
    """Running at start: the admin, rc-test and a small bench-list."""
    document: dict[str, object] = admin_users()
    document["rc-test:top"] = {
        "name": "seeded",
        "hop": [{"name": "a", "cost": 1}, {"name": "b", "cost": 2}, {"name": "c", "cost": 3}],
        "link": [{"from": "x", "to": "y", "speed": 10}],
    }
    document["bench-list:bench"] = {
        "target": [{"name": "t1"}, {"name": "t2"}],
        "entry": [
            {"id": 1, "name": "one", "addr": "10.0.0.1", "target": "t1", "weight": 5},
            {"id": 2, "name": "two", "addr": "10.0.0.2", "target": "t2", "weight": 5},
        ],
    }
    return document


def hops(server: Server) -> list[str]:
    """The names of rc-test:top/hop, in order."""
    return [hop["name"] for hop in server.get_json(TOP)["rc-test:top"]["hop"]]


def errors_of(reply: requests.Response) -> list[dict[str, Any]]:
    """The error list of an ietf-restconf:errors reply."""
    errors: list[dict[str, Any]] = reply.json()["ietf-restconf:errors"]["error"]
    return errors


def assert_error(reply: requests.Response, status: int, tag: str) -> dict[str, Any]:
    """The reply is ``status`` with ``tag`` as its first error; returns that error."""
    assert reply.status_code == status, reply.text
    assert reply.headers["Content-Type"].startswith(JSON)
    first = errors_of(reply)[0]
    assert first["error-tag"] == tag, reply.text
    return first


# ------------------------------------------------------------------------- discovery


def test_root_discovery(server: Server) -> None:
    reply = requests.get(server.url("/.well-known/host-meta"), timeout=10)
    assert reply.status_code == 200
    link = etree.fromstring(reply.content).find("{http://docs.oasis-open.org/ns/xri/xrd-1.0}Link")
    assert link is not None
    assert link.get("rel") == "restconf"
    assert link.get("href") == "/restconf"
    api = server.get_json("")
    assert set(api["ietf-restconf:restconf"]) == {"data", "operations", "yang-library-version"}
    version = server.get_json("yang-library-version")
    assert version == {"ietf-restconf:yang-library-version": "2019-01-04"}
    operations = server.get_json("operations")["ietf-restconf:operations"]
    assert operations["rc-test:ping"] == [None]


def test_unauthenticated_requests_get_401(server: Server) -> None:
    for auth in (None, ("admin", "wrong"), ("ghost", "admin-secret")):
        reply = requests.get(server.url(TOP), auth=auth, timeout=10)
        assert reply.status_code == 401
        assert reply.headers["WWW-Authenticate"].startswith("Basic")
        assert errors_of(reply)[0]["error-tag"] == "access-denied"


def test_monitoring_lists_capabilities_and_streams(server: Server) -> None:
    state = server.get_json("data/ietf-restconf-monitoring:restconf-state")
    body = state["ietf-restconf-monitoring:restconf-state"]
    capabilities = body["capabilities"]["capability"]
    for name in ("depth", "fields", "filter", "replay", "with-defaults"):
        assert any(f"capability:{name}:1.0" in uri for uri in capabilities), name
    assert any("defaults:1.0?basic-mode=explicit" in uri for uri in capabilities)
    (stream,) = body["streams"]["stream"]
    assert stream["name"] == "NETCONF"
    assert stream["access"][0]["location"] == server.url("streams/json/NETCONF")
    assert stream["access"][1] == {"encoding": "xml", "location": server.url("streams/xml/NETCONF")}
    assert stream["replay-support"] is True
    assert "replay-log-creation-time" in stream


def test_yang_library_reports_the_enabled_features(server: Server) -> None:
    library = server.get_json("data/ietf-yang-library:yang-library")
    modules = library["ietf-yang-library:yang-library"]["module-set"][0]["module"]
    system = next(module for module in modules if module["name"] == "ietf-system")
    assert system["feature"] == ["authentication", "local-users"]


# ------------------------------------------------------------------------- reads


def test_get_and_head(server: Server) -> None:
    reply = server.request("GET", f"{TOP}/link=x,y", headers={"Accept": JSON})
    assert reply.status_code == 200
    assert reply.headers["Content-Type"] == JSON
    assert reply.json() == {"rc-test:link": [{"from": "x", "to": "y", "speed": 10}]}
    assert reply.headers["ETag"].startswith('"')
    assert reply.headers["Last-Modified"].endswith("GMT")
    head = server.request("HEAD", f"{TOP}/link=x,y", headers={"Accept": JSON})
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["ETag"] == reply.headers["ETag"]
    assert head.headers["Content-Length"] == reply.headers["Content-Length"]


def test_get_xml(server: Server) -> None:
    reply = server.request("GET", f"{TOP}/name", headers={"Accept": XML})
    assert reply.status_code == 200
    assert reply.headers["Content-Type"] == XML
    element = etree.fromstring(reply.content)
    assert element.tag == f"{{{RC_NS}}}name"
    whole = server.request("GET", "data", headers={"Accept": XML}, params={"content": "config"})
    assert etree.fromstring(whole.content).tag == f"{{{RESTCONF_NS}}}data"


def test_get_datastore_root_and_nmda(server: Server) -> None:
    data = server.get_json("data")["ietf-restconf:data"]
    assert data["rc-test:top"]["name"]
    running = server.get_json("ds/ietf-datastores:running/rc-test:top/name")
    assert running == {"rc-test:name": server.get_json(f"{TOP}/name")["rc-test:name"]}
    operational = server.get_json("ds/ietf-datastores:operational/rc-test:top/link=x,y/speed")
    assert operational == {"rc-test:speed": 10}
    reply = server.request(
        "PUT",
        "ds/ietf-datastores:operational/rc-test:top/name",
        json={"rc-test:name": "no"},
        headers={"Content-Type": JSON},
    )
    assert_error(reply, 405, "operation-not-supported")
    assert "GET" in reply.headers["Allow"]
    assert_error(server.request("GET", "ds/ietf-datastores:nowhere"), 404, "invalid-value")


def test_missing_instance_is_404(server: Server) -> None:
    assert_error(server.request("GET", f"{TOP}/hop=zzz"), 404, "invalid-value")


def test_query_parameters(server: Server) -> None:
    defaults = server.get_json(f"{TOP}", **{"with-defaults": "report-all"})["rc-test:top"]
    assert defaults["mtu"] == 1500
    trimmed = server.get_json(f"{TOP}")["rc-test:top"]
    assert "mtu" not in trimmed  # basic-mode explicit
    shallow = server.get_json(f"{TOP}", depth="2")["rc-test:top"]
    assert all(set(link) == {"from", "to"} for link in shallow["link"])  # keys, no speed
    assert server.get_json(f"{TOP}", depth="1") == {"rc-test:top": {}}  # the target itself
    xml = server.request("GET", TOP, params={"depth": "1"}, headers={"Accept": XML})
    assert xml.status_code == 200, xml.text
    assert etree.fromstring(xml.content).tag == f"{{{RC_NS}}}top"
    assert len(etree.fromstring(xml.content)) == 0
    entry = server.get_json(f"{TOP}/link=x,y", depth="1")
    assert entry == {"rc-test:link": [{"from": "x", "to": "y"}]}  # an entry and its keys
    assert server.get_json("data", depth="1") == {"ietf-restconf:data": {}}  # the datastore
    tops = server.get_json("data", depth="2")["ietf-restconf:data"]
    assert tops["rc-test:top"] == {}
    assert tops["ietf-system:system"] == {}
    fields = server.get_json(f"{TOP}", fields="name")["rc-test:top"]
    assert set(fields) == {"name"}
    config = server.get_json(f"{TOP}", content="config")["rc-test:top"]
    assert "counters" not in config
    for bad in (
        {"depth": "0"},
        {"content": "some"},
        {"with-defaults": "x"},
        {"insert": "first"},
        {"bogus": "1"},
    ):
        assert_error(server.request("GET", TOP, params=bad), 400, "invalid-value")


# ------------------------------------------------------------------------- media types


def test_media_type_negotiation(server: Server) -> None:
    reply = server.request("GET", TOP, headers={"Accept": "text/html"})
    assert reply.status_code == 406
    reply = server.request("PUT", f"{TOP}/name", data="x", headers={"Content-Type": "text/plain"})
    assert_error(reply, 415, "invalid-value")
    assert server.get_json(f"{TOP}/name")["rc-test:name"] != "x"


# ------------------------------------------------------------------------- edits


def test_put_creates_then_replaces(server: Server) -> None:
    body = {"rc-test:link": [{"from": "p", "to": "q", "speed": 1}]}
    created = server.request("PUT", f"{TOP}/link=p,q", json=body, headers={"Content-Type": JSON})
    assert created.status_code == 201, created.text
    assert created.headers["ETag"]
    body["rc-test:link"][0]["speed"] = 2
    replaced = server.request("PUT", f"{TOP}/link=p,q", json=body, headers={"Content-Type": JSON})
    assert replaced.status_code == 204
    assert server.get_json(f"{TOP}/link=p,q/speed") == {"rc-test:speed": 2}


def test_put_xml(server: Server) -> None:
    body = f'<name xmlns="{RC_NS}">from-xml</name>'
    reply = server.request("PUT", f"{TOP}/name", data=body, headers={"Content-Type": XML})
    assert reply.status_code == 204, reply.text
    assert server.get_json(f"{TOP}/name") == {"rc-test:name": "from-xml"}


def test_post_creates_a_child_with_location(server: Server) -> None:
    body = {"rc-test:link": [{"from": "post", "to": "a/b", "speed": 3}]}
    reply = server.request("POST", TOP, json=body, headers={"Content-Type": JSON})
    assert reply.status_code == 201, reply.text
    assert reply.headers["Location"] == "/restconf/data/rc-test:top/link=post,a%2Fb"
    assert server.get_json(reply.headers["Location"]) == body
    again = server.request("POST", TOP, json=body, headers={"Content-Type": JSON})
    assert_error(again, 409, "resource-denied")  # RFC 8040 4.4.1


def test_plain_patch_merges(server: Server) -> None:
    body = {"rc-test:top": {"name": "patched", "hop": [{"name": "c", "cost": 30}]}}
    reply = server.request("PATCH", TOP, json=body, headers={"Content-Type": JSON})
    assert reply.status_code == 204, reply.text
    top = server.get_json(TOP)["rc-test:top"]
    assert top["name"] == "patched"
    assert {"name": "c", "cost": 30} in top["hop"]
    missing = server.request(
        "PATCH",
        f"{TOP}/link=no,ne",
        headers={"Content-Type": JSON},
        json={"rc-test:link": [{"from": "no", "to": "ne", "speed": 1}]},
    )
    assert_error(missing, 404, "invalid-value")


def test_delete(server: Server) -> None:
    body = {"rc-test:link": [{"from": "del", "to": "me", "speed": 1}]}
    server.request("POST", TOP, json=body, headers={"Content-Type": JSON}).raise_for_status()
    assert server.request("DELETE", f"{TOP}/link=del,me").status_code == 204
    assert_error(server.request("DELETE", f"{TOP}/link=del,me"), 404, "data-missing")


def test_insert_and_point(server: Server) -> None:
    def post(name: str, **params: str) -> None:
        reply = server.request(
            "POST",
            TOP,
            params=params,
            headers={"Content-Type": JSON},
            json={"rc-test:hop": [{"name": name}]},
        )
        assert reply.status_code == 201, reply.text

    post("first", insert="first")
    post("after-a", insert="after", point="rc-test:top/hop=a")
    post("before-c", insert="before", point="rc-test:top/hop=c")
    order = hops(server)
    assert order[0] == "first"
    assert order.index("after-a") == order.index("a") + 1
    assert order.index("before-c") == order.index("c") - 1
    unordered = server.request(
        "POST",
        TOP,
        params={"insert": "first"},
        headers={"Content-Type": JSON},
        json={"rc-test:link": [{"from": "i", "to": "j", "speed": 1}]},
    )
    assert_error(unordered, 400, "invalid-value")


def test_options(server: Server) -> None:
    reply = server.request("OPTIONS", TOP)
    assert reply.status_code == 200
    assert set(reply.headers["Allow"].replace(" ", "").split(",")) == {
        "GET",
        "HEAD",
        "OPTIONS",
        "POST",
        "PUT",
        "PATCH",
        "DELETE",
    }
    assert "application/yang-patch+json" in reply.headers["Accept-Patch"]
    assert server.request("OPTIONS", "operations/rc-test:ping").headers["Allow"] == "OPTIONS, POST"


# ------------------------------------------------------------------------- YANG Patch


def _patch(edits: list[dict[str, object]], patch_id: str = "p") -> dict[str, object]:
    return {"ietf-yang-patch:yang-patch": {"patch-id": patch_id, "edit": edits}}


def test_yang_patch_json(server: Server) -> None:
    body = _patch(
        [
            {
                "edit-id": "1",
                "operation": "create",
                "target": "/link=yp,1",
                "value": {"rc-test:link": [{"from": "yp", "to": "1", "speed": 5}]},
            },
            {
                "edit-id": "2",
                "operation": "insert",
                "target": "/hop=yp",
                "where": "before",
                "point": "/hop=b",
                "value": {"rc-test:hop": [{"name": "yp"}]},
            },
        ]
    )
    reply = server.request(
        "PATCH", TOP, json=body, headers={"Content-Type": "application/yang-patch+json"}
    )
    assert reply.status_code == 200, reply.text
    status = reply.json()["ietf-yang-patch:yang-patch-status"]
    assert status == {"patch-id": "p", "ok": [None]}
    order = hops(server)
    assert order.index("yp") == order.index("b") - 1


def test_yang_patch_failure_changes_nothing(server: Server) -> None:
    before = server.get_json("data", content="config")
    body = _patch(
        [
            {
                "edit-id": "1",
                "operation": "create",
                "target": "/link=ok,1",
                "value": {"rc-test:link": [{"from": "ok", "to": "1", "speed": 5}]},
            },
            {
                "edit-id": "2",
                "operation": "create",
                "target": "/link=x,y",
                "value": {"rc-test:link": [{"from": "x", "to": "y", "speed": 5}]},
            },
        ]
    )
    reply = server.request(
        "PATCH", TOP, json=body, headers={"Content-Type": "application/yang-patch+json"}
    )
    assert reply.status_code == 409, reply.text
    status = reply.json()["ietf-yang-patch:yang-patch-status"]
    assert status["errors"]["error"][0]["error-tag"] == "data-exists"
    assert server.get_json("data", content="config") == before


def test_yang_patch_xml(server: Server) -> None:
    body = (
        '<yang-patch xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch">'
        "<patch-id>x</patch-id><edit><edit-id>1</edit-id><operation>merge</operation>"
        f'<target>/name</target><value><name xmlns="{RC_NS}">yp-xml</name></value>'
        "</edit></yang-patch>"
    )
    reply = server.request(
        "PATCH",
        TOP,
        data=body,
        headers={"Content-Type": "application/yang-patch+xml", "Accept": XML},
    )
    assert reply.status_code == 200, reply.text
    assert b"<ok/>" in reply.content
    assert server.get_json(f"{TOP}/name") == {"rc-test:name": "yp-xml"}


# ------------------------------------------------------------------------- operations


def test_rpc_and_action(server: Server) -> None:
    # The test module's operations are modelled but served by no handler: 501 once the input
    # is valid, 400 when it is not (the core validates before it looks for a handler).
    def post(path: str, body: dict[str, object]) -> requests.Response:
        return server.request("POST", path, headers={"Content-Type": JSON}, json=body)

    ping = post("operations/rc-test:ping", {"rc-test:input": {"message": "hi"}})
    assert_error(ping, 501, "operation-not-supported")
    reset = post(f"{TOP}/link=x,y/reset", {"rc-test:input": {"reason": "test"}})
    assert_error(reset, 501, "operation-not-supported")
    bad = post("operations/rc-test:ping", {"rc-test:input": {"nonsense": 1}})
    assert_error(bad, 400, "unknown-element")
    assert_error(server.request("GET", "operations/rc-test:ping"), 405, "operation-not-supported")
    assert_error(server.request("POST", "operations/rc-test:nope"), 400, "unknown-element")


# ------------------------------------------------------------------------- conditionals


def test_conditional_requests(server: Server) -> None:
    path = f"{TOP}/link=x,y"
    first = server.request("GET", path)
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert server.request("GET", path, headers={"If-None-Match": etag}).status_code == 304
    assert server.request("HEAD", path, headers={"If-None-Match": etag}).status_code == 304
    assert server.request("GET", path, headers={"If-Modified-Since": modified}).status_code == 304
    assert server.request("GET", path, headers={"If-None-Match": '"nope"'}).status_code == 200
    body = {"rc-test:link": [{"from": "x", "to": "y", "speed": 11}]}
    stale = server.request(
        "PUT", path, json=body, headers={"Content-Type": JSON, "If-Match": '"stale"'}
    )
    assert_error(stale, 412, "operation-failed")
    old = server.request(
        "PUT",
        path,
        json=body,
        headers={"Content-Type": JSON, "If-Unmodified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"},
    )
    assert old.status_code == 412
    assert server.get_json(f"{path}/speed") == {"rc-test:speed": 10}
    fresh = server.request("PUT", path, json=body, headers={"Content-Type": JSON, "If-Match": etag})
    assert fresh.status_code == 204, fresh.text
    assert fresh.headers["ETag"] != etag
    assert server.request("GET", path, headers={"If-None-Match": etag}).status_code == 200
    create_only = server.request(
        "PUT", path, json=body, headers={"Content-Type": JSON, "If-None-Match": "*"}
    )
    assert create_only.status_code == 412
    # An unrelated sibling keeps its entity-tag.
    sibling = server.request("GET", f"{TOP}/hop=a").headers["ETag"]
    server.request("PUT", path, json=body, headers={"Content-Type": JSON}).raise_for_status()
    assert server.request("GET", f"{TOP}/hop=a").headers["ETag"] == sibling


# ------------------------------------------------------------------------- bad input


BAD_BODIES: list[tuple[str, str, str, str, int, str]] = [
    # method, path, content-type, body, status, error-tag
    (
        "PUT",
        "link=x,y",
        JSON,
        '{"rc-test:link": [{"from": "x", "to": "y"',
        400,
        "malformed-message",
    ),
    ("PUT", "link=x,y", XML, f'<link xmlns="{RC_NS}"><from>x</from>', 400, "malformed-message"),
    (
        "PUT",
        "link=x,y",
        JSON,
        '{"rc-test:link": [{"from": "x", "to": "z", "speed": 1}]}',
        400,
        "invalid-value",
    ),
    (
        "PUT",
        "link=x,y",
        JSON,
        '{"rc-test:link": [{"from": "x", "to": "y", "speed": "fast"}]}',
        400,
        "invalid-value",
    ),
    (
        "PUT",
        "link=x,y",
        JSON,
        '{"rc-test:link": [{"from": "x", "to": "y", "speed": 1, "color": 2}]}',
        400,
        "unknown-element",
    ),
    ("PUT", "mtu", JSON, '{"rc-test:mtu": 10}', 400, "invalid-value"),
    ("POST", "", JSON, '{"rc-test:link": [{"from": "m", "to": "n"}]}', 400, "missing-element"),
    ("POST", "", JSON, '{"rc-test:nothing": {}}', 400, "unknown-element"),
    ("PATCH", "", JSON, '{"rc-test:top": {"mtu": "big"}}', 400, "invalid-value"),
    ("PATCH", "", XML, '<top xmlns="urn:unknown"/>', 400, "unknown-namespace"),
]


@pytest.mark.parametrize(("method", "path", "media", "body", "status", "tag"), BAD_BODIES)
def test_bad_input_changes_nothing(  # noqa: PLR0913, PLR0917 - one parameter per column
    server: Server, method: str, path: str, media: str, body: str, status: int, tag: str
) -> None:
    before = server.get_json("data", content="config")
    target = f"{TOP}/{path}" if path else TOP
    headers = {"Content-Type": media, "Accept": JSON}  # else errors come in the body's encoding
    reply = server.request(method, target, data=body.encode(), headers=headers)
    assert_error(reply, status, tag)
    assert server.get_json("data", content="config") == before


BENCH = "data/bench-list:bench"
GOOD_ENTRY = {"id": 7, "name": "seven", "addr": "a7", "target": "t1", "weight": 1}

# RFC 7950 15 constraints: tag, app-tag and RFC 8040 7 status of each violation.
CONSTRAINT_VIOLATIONS: list[tuple[str, dict[str, object], int, str, str | None]] = [
    ("dangling leafref", {**GOOD_ENTRY, "target": "nowhere"}, 409, "data-missing",
     "instance-required"),
    ("duplicate unique", {**GOOD_ENTRY, "addr": "dup"}, 412, "operation-failed",
     "data-not-unique"),
    ("missing mandatory", {k: v for k, v in GOOD_ENTRY.items() if k != "name"}, 400,
     "missing-element", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "entry", "status", "tag", "app_tag"),
    CONSTRAINT_VIOLATIONS,
    ids=[case[0] for case in CONSTRAINT_VIOLATIONS],
)
def test_constraint_violations_change_nothing(  # noqa: PLR0913, PLR0917 - one per column
    server: Server,
    case: str,
    entry: dict[str, object],
    status: int,
    tag: str,
    app_tag: str | None,
) -> None:
    holder = {"id": 8, "name": "eight", "addr": "dup", "target": "t1", "weight": 1}
    server.request(
        "PUT",
        f"{BENCH}/entry=8",
        json={"bench-list:entry": [holder]},
        headers={"Content-Type": JSON},
    ).raise_for_status()
    before = server.get_json("data", content="config")
    reply = server.request(
        "PUT",
        f"{BENCH}/entry=7",
        json={"bench-list:entry": [entry]},
        headers={"Content-Type": JSON},
    )
    error = assert_error(reply, status, tag)
    assert error.get("error-app-tag") == app_tag, case
    assert server.get_json("data", content="config") == before


def test_bad_paths(server: Server) -> None:
    assert_error(server.request("GET", "data/rc-test:nope"), 400, "unknown-element")
    assert_error(server.request("GET", f"{TOP}/link=x"), 400, "invalid-value")
    assert_error(server.request("GET", f"{TOP}/link"), 400, "invalid-value")
    assert_error(server.request("GET", "data/top"), 400, "invalid-value")
    assert_error(server.request("GET", "nothing-here"), 404, "invalid-value")
    error = assert_error(server.request("DELETE", f"{TOP}/hop=ghost"), 404, "data-missing")
    assert "hop" in (error.get("error-path") or error["error-message"])


def test_error_path_names_the_node(server: Server) -> None:
    body = {"bench-list:entry": [{"id": 9, "name": "n", "addr": "a9", "target": "missing"}]}
    reply = server.request(
        "PUT", "data/bench-list:bench/entry=9", json=body, headers={"Content-Type": JSON}
    )
    error = assert_error(reply, 409, "data-missing")
    assert error["error-app-tag"] == "instance-required"
    assert "entry" in error["error-path"]
    assert_error(server.request("GET", "data/bench-list:bench/entry=9"), 404, "invalid-value")


def test_oversize_body_is_413(tmp_path: Path) -> None:
    with seeded_server(tmp_path, admin_users(), "--max-body-size", "1000") as small:
        body = json.dumps({"rc-test:top": {"name": "x" * 2000}})
        reply = small.request("PUT", TOP, data=body, headers={"Content-Type": JSON})
        assert_error(reply, 413, "too-big")
        assert "name" not in small.get_json(TOP, content="config").get("rc-test:top", {})
