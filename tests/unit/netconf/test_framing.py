"""RFC 6242 framing on bytes, without sockets."""

from __future__ import annotations

import pytest

from controller.netconf.errors import FramingError
from controller.netconf.framing import Deframer, frame


def test_end_of_message_round_trip_split_anywhere() -> None:
    wire = frame(b"<a/>", chunked=False) + frame(b"<b/>", chunked=False)
    deframer = Deframer(1000)
    found: list[bytes] = []
    for byte in wire:
        deframer.feed(bytes([byte]))
        while (message := deframer.next_message()) is not None:
            found.append(message)
    assert found == [b"<a/>", b"<b/>"]


def test_chunked_round_trip_and_multiple_chunks() -> None:
    deframer = Deframer(1000)
    deframer.use_chunked()
    deframer.feed(b"\n#4\n<rpc\n#3\n/>x\n##\n" + frame(b"<c/>", chunked=True))
    assert deframer.next_message() == b"<rpc/>x"
    assert deframer.next_message() == b"<c/>"
    assert deframer.next_message() is None


@pytest.mark.parametrize("wire", [b"\n#zz\n", b"\n#0\n", b"<rpc/>", b"\n#12345678901\n", b"\n##\n"])
def test_broken_chunk_framing_is_refused(wire: bytes) -> None:
    deframer = Deframer(1000)
    deframer.use_chunked()
    deframer.feed(wire)
    with pytest.raises(FramingError) as raised:
        deframer.next_message()
    assert raised.value.items[0].tag == "malformed-message"


@pytest.mark.parametrize("chunked", [False, True])
def test_oversize_messages_are_refused(*, chunked: bool) -> None:
    deframer = Deframer(10)
    if chunked:
        deframer.use_chunked()
    deframer.feed(frame(b"x" * 50, chunked=chunked))
    with pytest.raises(FramingError) as raised:
        deframer.next_message()
    assert raised.value.items[0].tag == "too-big"
