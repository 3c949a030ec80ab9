"""Dispatcher helpers: flow and session keys, header hygiene, permitted sources (6.2, 8.1, 9)."""

from __future__ import annotations

import json
from dataclasses import replace

from agents.sci.config import AffinitySettings, parse_config
from agents.sci.dispatcher import (
    client_headers,
    flow_key,
    permitted,
    response_headers,
    session_value,
)
from tests.conftest import EXAMPLES_DIR

CONFIG = parse_config(json.loads((EXAMPLES_DIR / "sci-config.data.json").read_text()))
ENV = {
    "REMOTE_ADDR": "192.0.2.1", "REMOTE_PORT": "40000", "SERVER_NAME": "188.3.67.4",
    "SERVER_PORT": "69", "HTTP_COOKIE": "ARS_SESSION=abc; other=1", "HTTP_X_SESSION": "s-1",
    "HTTP_CONNECTION": "keep-alive", "HTTP_HOST": "188.3.67.4:69", "CONTENT_TYPE": "text/plain",
}  # fmt: skip


def test_flow_key_is_the_configured_five_tuple() -> None:
    assert flow_key(ENV, CONFIG.affinity.flow_key) == "flow:192.0.2.1|188.3.67.4|40000|69|tcp"
    assert flow_key(ENV, ("source-address",)) == "flow:192.0.2.1"


def test_session_from_cookie_or_header() -> None:
    assert session_value(ENV, CONFIG) == "abc"
    by_header = replace(CONFIG, affinity=AffinitySettings(session_header="X-Session"))
    assert session_value(ENV, by_header) == "s-1"
    assert session_value({}, by_header) is None
    assert session_value({}, CONFIG) is None


def test_nothing_identifies_the_instance_to_the_client() -> None:
    base = "http://10.3.0.11:8080"
    kept = response_headers(
        [
            ("X-Instance-Id", "ars-1"), ("Server", "si/ars-1"), ("Via", "1.1 ars-1"),
            ("Location", f"{base}/next"), ("Connection", "close"), ("X-Result", "ok"),
        ],
        base,
    )  # fmt: skip
    assert kept == [("Location", "/next"), ("X-Result", "ok")]


def test_hop_by_hop_request_headers_stay_behind() -> None:
    headers = client_headers(ENV)
    assert "Connection" not in headers
    assert "Host" not in headers
    assert headers["Content-Type"] == "text/plain"
    assert headers["X-Forwarded-For"] == "192.0.2.1"


def test_permitted_sources() -> None:
    assert permitted("192.0.2.1", ())
    assert permitted("192.0.2.1", ("192.0.2.0/24",))
    assert not permitted("198.51.100.1", ("192.0.2.0/24",))
    assert not permitted("not-an-address", ("192.0.2.0/24",))
