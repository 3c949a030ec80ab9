"""A raw NETCONF client on paramiko, for framing and bad-input tests (ncclient hides both)."""

from __future__ import annotations

import socket
from typing import Any

import paramiko
from lxml import etree

from controller.netconf.framing import Deframer, frame
from controller.netconf.messages import BASE_10, BASE_11, BASE_NS, NC, to_bytes
from controller.types import Element
from tests.functional.restconf_server import ADMIN, Server


class RawSession:
    """One SSH connection with the netconf subsystem; ``with`` closes it."""

    def __init__(
        self,
        port: int,
        user: str,
        password: str | None = None,
        *,
        base11: bool = True,
        pkey: paramiko.PKey | None = None,
    ) -> None:
        self.transport = paramiko.Transport(socket.create_connection(("127.0.0.1", port), 10))
        try:
            self.transport.connect(username=user, password=password, pkey=pkey)
        except BaseException:
            self.transport.close()
            raise
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


def connect_nc(port: int, user: str, password: str | None = None, **extra: Any) -> Any:
    """An ncclient session (``manager.connect``) without agent, key files or host-key checks."""
    from ncclient import manager  # noqa: PLC0415 - only the ncclient tests need it

    return manager.connect(
        host="127.0.0.1",
        port=port,
        username=user,
        password=password,
        hostkey_verify=False,
        allow_agent=False,
        look_for_keys=extra.pop("look_for_keys", False),
        timeout=30,
        **extra,
    )


def admin_session(server: Server, *, base11: bool = True) -> RawSession:
    """A raw session to the server as the admin (base:1.1 unless ``base11`` is False)."""
    return RawSession(server.netconf_port, *ADMIN, base11=base11)


def admin_nc(server: Server) -> Any:
    """An ncclient session to the server as the admin."""
    return connect_nc(server.netconf_port, *ADMIN)


def ok(reply: Element) -> Element:
    """Assert a reply has no rpc-error; return it."""
    assert error_items(reply) == [], etree.tostring(reply).decode()
    return reply


def error_items(reply: Element) -> list[dict[str, str]]:
    """Each rpc-error of a reply as a dict: type, tag, message and ``info/NAME`` entries."""
    found: list[dict[str, str]] = []
    for error in reply.iter(NC + "rpc-error"):
        item = {
            "type": error.findtext(NC + "error-type") or "",
            "tag": error.findtext(NC + "error-tag") or "",
            "message": error.findtext(NC + "error-message") or "",
        }
        info = error.find(NC + "error-info")
        for child in info if info is not None else ():
            item[f"info/{etree.QName(child).localname}"] = child.text or ""
        found.append(item)
    return found


def operation(tag: str, namespace: str = BASE_NS, **children: str) -> Element:
    """An operation element with text children (``_`` in a name stands for ``-``)."""
    element = etree.Element(f"{{{namespace}}}{tag}", nsmap={None: namespace})
    for name, text in children.items():
        etree.SubElement(element, f"{{{namespace}}}{name.replace('_', '-')}").text = text
    return element


def on_datastore(element: Element, holder: str, datastore: str) -> Element:
    """Add ``<source>``/``<target>`` naming a datastore; returns the element."""
    etree.SubElement(etree.SubElement(element, NC + holder), NC + datastore)
    return element


def only_error(reply: Element) -> dict[str, str]:
    """The single rpc-error of a reply."""
    items = error_items(reply)
    assert len(items) == 1, etree.tostring(reply).decode()
    return items[0]


BENCH_NS = "urn:example:bench-list"


def bench_edit(body: str, target: str = "running", **params: str) -> Element:
    """An edit-config whose ``<config>`` holds ``body`` in bench-list (prefix ``nc`` declared)."""
    element = on_datastore(operation("edit-config", **params), "target", target)
    config = etree.fromstring(
        f'<config xmlns="{BASE_NS}" xmlns:nc="{BASE_NS}">'
        f'<bench xmlns="{BENCH_NS}">{body}</bench></config>'
    )
    element.append(config)
    return element
