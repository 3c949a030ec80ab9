"""A raw NETCONF client on paramiko, for framing and bad-input tests (ncclient hides both)."""

from __future__ import annotations

import socket
from typing import Any

import paramiko
from lxml import etree

from controller.netconf.framing import Deframer, frame
from controller.netconf.messages import BASE_10, BASE_11, BASE_NS, NC, to_bytes

Element = Any  # lxml.etree._Element


class RawSession:
    """One SSH connection with the netconf subsystem; ``with`` closes it."""

    def __init__(self, port: int, user: str, password: str, *, base11: bool = True) -> None:
        self.transport = paramiko.Transport(socket.create_connection(("127.0.0.1", port), 10))
        self.transport.connect(username=user, password=password)
        self.channel = self.transport.open_session()
        self.channel.settimeout(20)
        self.channel.invoke_subsystem("netconf")
        self.deframer = Deframer(1 << 30)
        self.server_hello = etree.fromstring(self.receive())
        hello = etree.Element(NC + "hello", nsmap={None: BASE_NS})
        caps = etree.SubElement(hello, NC + "capabilities")
        for uri in (BASE_10, BASE_11) if base11 else (BASE_10,):
            etree.SubElement(caps, NC + "capability").text = uri
        self.send_raw(frame(to_bytes(hello), chunked=False))
        self.chunked = base11
        if base11:
            self.deframer.use_chunked()

    @property
    def session_id(self) -> int:
        """The id the server's hello gave."""
        return int(self.server_hello.findtext(NC + "session-id") or 0)

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are, no framing added."""
        self.channel.sendall(data)

    def receive(self) -> bytes:
        """The next message; EOFError when the server closed the session."""
        while True:
            message = self.deframer.next_message()
            if message is not None:
                return message
            data = self.channel.recv(65536)
            if not data:
                raise EOFError
            self.deframer.feed(data)

    def send(self, message: bytes) -> Element:
        """Frame a message, send it, parse the reply."""
        self.send_raw(frame(message, chunked=self.chunked))
        return etree.fromstring(self.receive())

    def rpc(self, operation: Element, message_id: str = "1") -> Element:
        """An ``<rpc>`` around one operation."""
        rpc = etree.Element(NC + "rpc", nsmap={None: BASE_NS})
        rpc.set("message-id", message_id)
        rpc.append(operation)
        return self.send(to_bytes(rpc))

    def close(self) -> None:
        """Drop the connection."""
        self.transport.close()

    def __enter__(self) -> RawSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def error_tags(reply: Element) -> list[str]:
    """The error-tags of a reply."""
    return [tag.text or "" for tag in reply.iter(NC + "error-tag")]
