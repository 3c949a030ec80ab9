"""agents.forwarder.proxy: how a client request names its service and step (no socket)."""

from __future__ import annotations

import pytest

from agents.forwarder.proxy import BadRequestError, classify


def test_the_service_header_and_the_step_attribution() -> None:
    found = classify(
        {
            "PATH_INFO": "/infer",
            "HTTP_CATS_SERVICE_ID": "ARS",
            "HTTP_CATS_SESSION_ID": "agent-1",
            "HTTP_CATS_TURN_ID": "2",
            "HTTP_CATS_STEP_ID": "30",
            "REMOTE_ADDR": "10.0.0.7",
            "REMOTE_PORT": "50000",
        }
    )
    request = found.request
    assert (request.cs_id, request.session_id, request.turn_id, request.step_id) == (
        "ARS",
        "agent-1",
        2,
        30,
    )
    assert (found.path, request.source, request.source_port) == ("/infer", "10.0.0.7", 50000)


def test_the_path_prefix_names_the_service_and_is_stripped() -> None:
    found = classify({"PATH_INFO": "/cats/42/v1/infer"})
    assert (found.request.cs_id, found.path) == ("42", "/v1/infer")
    assert classify({"PATH_INFO": "/cats/ARS"}).path == "/"


def test_requests_without_a_service_or_with_bad_numbers_are_refused() -> None:
    with pytest.raises(BadRequestError, match="CATS-Service-Id"):
        classify({"PATH_INFO": "/infer"})
    with pytest.raises(BadRequestError, match="CATS-Step-Id"):
        classify({"PATH_INFO": "/cats/ARS/x", "HTTP_CATS_STEP_ID": "three"})
