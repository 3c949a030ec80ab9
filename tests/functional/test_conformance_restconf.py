"""Issue 15 over RESTCONF: default-only nodes, candidate defaults, error details, features.

Against a real ``catsctl serve`` with ``tests/yang/conform-test`` and ``conform-test:fancy``.
"""

from __future__ import annotations

import pytest

from tests.functional.restconf_server import JSON, XML, Server, admin_users

pytestmark = pytest.mark.functional
SERVE_ARGS = (
    *("--plugin", "tests.functional.plugins.rc_test_plugin"),
    *("--feature", "conform-test:fancy"),
)
BOX = "data/conform-test:box"
CANDIDATE = "ds/ietf-datastores:candidate/conform-test:box"
PATCH = "application/yang-patch+json"


def seed() -> dict[str, object]:
    """The admin, a box with a host and an entry, and rc-test's hop h0."""
    document = admin_users()
    document["conform-test:box"] = {
        "label": "seeded",
        "host": [{"name": "a", "addr": "1"}],
        "entry": [{"id": 1, "speed": 3}],
    }
    document["rc-test:top"] = {"hop": [{"name": "h0"}]}
    return document


def post(server: Server, path: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    """POST JSON; the status and the first error (empty when none)."""
    reply = server.request("POST", path, json=body, headers={"Content-Type": JSON})
    errors = reply.json()["ietf-restconf:errors"]["error"] if reply.content else [{}]
    return reply.status_code, errors[0]


def test_post_of_a_default_only_container_creates_it(server: Server) -> None:
    assert post(server, BOX, {"conform-test:inner": {"note": "n"}})[0] == 201
    assert post(server, BOX, {"conform-test:sized": {"extra": "e"}})[0] == 201
    box = server.get_json(BOX)["conform-test:box"]
    assert box["inner"] == {"note": "n"}
    assert box["sized"] == {"extra": "e"}
    status, error = post(server, BOX, {"conform-test:inner": {"note": "again"}})
    assert (status, error["error-tag"]) == (409, "resource-denied")  # RFC 8040 4.4.1


def test_candidate_shows_the_defaults_validation_would(server: Server) -> None:
    entry = {"conform-test:entry": [{"id": 1, "manual-level": 7}]}
    reply = server.request(
        "PATCH", f"{CANDIDATE}/entry=1", json=entry, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 204, reply.text
    assert post(server, CANDIDATE, {"conform-test:marker": {}})[0] == 201
    box = server.get_json(CANDIDATE, **{"with-defaults": "report-all"})["conform-test:box"]
    assert box["entry"] == [{"id": 1, "speed": 3, "manual-level": 7}]  # no auto-level
    assert box["marker"] == {"weight": 1}
    running = server.get_json(BOX, **{"with-defaults": "report-all"})["conform-test:box"]
    assert running["entry"] == [{"id": 1, "speed": 3, "auto-level": 5}]


def test_non_unique_and_missing_choice_error_info(server: Server) -> None:
    status, error = post(server, BOX, {"conform-test:host": [{"name": "b", "addr": "1"}]})
    assert status == 412
    assert error["error-info"] == {"yang:non-unique": "/conform-test:box/host[name='b']/addr"}
    status, error = post(server, BOX, {"conform-test:shape": [{"name": "s"}]})
    assert status == 409
    assert error["error-path"] == "/conform-test:box/shape[name='s']"
    assert error["error-info"] == {"yang:missing-choice": "kind"}


def test_a_missing_insert_point_is_missing_instance(server: Server) -> None:
    reply = server.request(
        "POST",
        "data/rc-test:top?insert=after&point=rc-test:top/hop=nope",
        json={"rc-test:hop": [{"name": "h1"}]},
        headers={"Content-Type": JSON},
    )
    assert reply.status_code == 400
    error = reply.json()["ietf-restconf:errors"]["error"][0]
    assert (error["error-tag"], error["error-app-tag"]) == ("bad-attribute", "missing-instance")


def test_errors_of_an_xml_request_come_back_in_xml(server: Server) -> None:
    body = '<host xmlns="urn:example:conform-test"><name>a</name></host>'
    reply = server.request("POST", BOX, data=body, headers={"Content-Type": XML})
    assert reply.status_code == 409
    assert reply.headers["Content-Type"] == XML
    assert "<error-tag>resource-denied</error-tag>" in reply.text


def test_unknown_fields_are_refused(server: Server) -> None:
    reply = server.request("GET", BOX, params={"fields": "label;nonode"})
    assert reply.status_code == 400
    assert reply.json()["ietf-restconf:errors"]["error"][0]["error-tag"] == "invalid-value"
    assert server.get_json(BOX, fields="label") == {"conform-test:box": {"label": "seeded"}}


def test_an_empty_yang_patch_is_accepted(server: Server) -> None:
    patch = {"ietf-yang-patch:yang-patch": {"patch-id": "empty", "edit": []}}
    reply = server.request("PATCH", BOX, json=patch, headers={"Content-Type": PATCH})
    assert reply.status_code == 200, reply.text
    assert reply.json()["ietf-yang-patch:yang-patch-status"] == {"patch-id": "empty", "ok": [None]}


def test_decimal64_keys_are_compared_as_numbers(server: Server) -> None:
    assert post(server, BOX, {"conform-test:rate": [{"value": "1.50"}]})[0] == 201
    body = {"conform-test:rate": [{"value": "1.5", "note": "same key"}]}
    reply = server.request("PUT", f"{BOX}/rate=1.50", json=body, headers={"Content-Type": JSON})
    assert reply.status_code == 204, reply.text
    assert server.get_json(f"{BOX}/rate=1.5")["conform-test:rate"][0]["note"] == "same key"


def test_the_allow_header_of_an_action_lists_post_only(server: Server) -> None:
    reply = server.request("GET", f"{BOX}/entry=1/ping")
    assert reply.status_code == 405
    assert reply.headers["Allow"] == "OPTIONS, POST"


def test_a_feature_enabled_on_the_command_line_is_usable(server: Server) -> None:
    assert post(server, BOX, {"conform-test:fancy": {"level": 2}})[0] == 201
    library = server.get_json("data/ietf-yang-library:yang-library")
    modules = library["ietf-yang-library:yang-library"]["module-set"][0]["module"]
    assert [m.get("feature") for m in modules if m["name"] == "conform-test"] == [["fancy"]]
    legacy = server.get_json("data/ietf-yang-library:modules-state")
    state = legacy["ietf-yang-library:modules-state"]
    assert [m["feature"] for m in state["module"] if m["name"] == "conform-test"] == [["fancy"]]
