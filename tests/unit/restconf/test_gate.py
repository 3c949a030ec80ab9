"""controller.restconf.gate: when a request is whole enough for a worker."""

from __future__ import annotations

from controller.restconf.gate import BUFFER_SIZE, body_awaited, head_complete

HEAD = b"PUT /restconf/data/x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n"


def test_a_head_is_whole_at_its_empty_line_not_before() -> None:
    assert not head_complete(b"GET / HTTP/1.1\r\nHost: h\r\n")
    assert not head_complete(b"\r\n\r\n")  # empty lines before a request line are skipped
    assert head_complete(b"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")


def test_a_small_body_is_awaited_in_the_gate_a_large_or_chunked_one_is_not() -> None:
    assert body_awaited(HEAD + b"12345")
    assert not body_awaited(HEAD + b"1234567890")
    large = HEAD.replace(b"10", str(BUFFER_SIZE).encode())
    assert not body_awaited(large + b"x")  # read by the worker within the body deadline
    chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"
    assert not body_awaited(chunked)
    expecting = HEAD.replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
    assert not body_awaited(expecting)  # the worker answers 100 Continue
