"""What a NETCONF operation is called with and what it answers (RFC 6241 4.1, 4.2).

Shared by the base operations (:mod:`controller.netconf.operations`) and the NMDA ones
(:mod:`controller.netconf.nmda`), with the parameter readers both use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from controller.datastore.api import Principal, WithDefaults
from controller.netconf.confirmed import Actor
from controller.netconf.errors import bad_element
from controller.netconf.messages import BASE_NS
from controller.netconf.notifications import SubscriptionRequest
from controller.netconf.reads import WD_NS
from controller.types import Element


@dataclass(frozen=True, slots=True)
class Caller:
    """The session an operation runs for."""

    session_id: int
    user: str
    principal: Principal
    subscribe: Callable[[SubscriptionRequest], None]

    @property
    def session(self) -> str:
        """The session as the core names it."""
        return str(self.session_id)

    @property
    def actor(self) -> Actor:
        """The session as confirmed-commit events name it."""
        return Actor(self.session_id, self.user)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an operation answers: reply children (``<ok/>`` when none); whether to close;
    ``raw``: printed XML that replaces :data:`RAW_MARK` in the serialized reply (a read's
    data as the core printed it, never parsed)."""

    children: tuple[Element, ...] = ()
    close: bool = False
    raw: str | None = None

    def serialize(self, reply: bytes) -> bytes:
        """The serialized reply with ``raw`` in place of its mark."""
        if self.raw is None:
            return reply
        return reply.replace(RAW_MARK, self.raw.encode(), 1)


#: Where raw data goes in a reply: a processing instruction (as lxml prints it), which no
#: attribute value or text can hold as such (lxml escapes ``<`` there).
RAW_PI = "cats-raw-data"
RAW_MARK = bytes(etree.tostring(etree.ProcessingInstruction(RAW_PI)))


def raw_data(document: str) -> Outcome:
    """A reply whose ``<data>`` is ``document`` as printed (RFC 6241 7.1)."""
    data = etree.Element(f"{{{BASE_NS}}}data", nsmap={None: BASE_NS})
    data.append(etree.ProcessingInstruction(RAW_PI))
    return Outcome((data,), raw=document)


def child_text(parent: Element, name: str, namespace: str = BASE_NS) -> str | None:
    """The stripped text of a child element, or None when it is absent."""
    found = parent.find(f"{{{namespace}}}{name}")
    return None if found is None else (found.text or "").strip()


def with_defaults_of(operation: Element) -> WithDefaults | None:
    """The RFC 6243 ``with-defaults`` parameter."""
    raw = child_text(operation, "with-defaults", WD_NS)
    if raw is None:
        return None
    try:
        return WithDefaults(raw)
    except ValueError as exc:
        raise bad_element("invalid-value", "with-defaults", f"bad with-defaults {raw!r}") from exc
