"""What a proxying agent passes on of a client's request (RFC 9110 7.6.1)."""

from __future__ import annotations

from agents.common.http import client_headers

ENV = {
    "REMOTE_ADDR": "192.0.2.1",
    "HTTP_COOKIE": "ARS_SESSION=abc; other=1",
    "HTTP_CONNECTION": "keep-alive",
    "HTTP_HOST": "188.3.67.4:69",
    "CONTENT_TYPE": "text/plain",
}


def test_hop_by_hop_request_headers_stay_behind() -> None:
    headers = client_headers(ENV)
    assert "Connection" not in headers
    assert "Host" not in headers
    assert headers["Content-Type"] == "text/plain"
    assert headers["X-Forwarded-For"] == "192.0.2.1"
