"""The request and reply the RESTCONF handlers work on: plain values, no WSGI, no sockets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from controller.datastore.api import Principal, Revision
from controller.model import Encoding
from controller.restconf.conditional import Preconditions, format_etag, http_date
from controller.restconf.media import DATA_TYPE

ANONYMOUS = Principal("anonymous")


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One request: ``path`` is the raw, still percent-encoded path; header names lower-case."""

    method: str
    path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    principal: Principal = ANONYMOUS

    def header(self, name: str) -> str | None:
        """A header by its lower-case name."""
        return self.headers.get(name)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as its fields (a worker process sends requests to the core): a dataclass
        with slots pickles through Python code, this at C speed."""
        fields = (self.method, self.path, self.query, dict(self.headers), self.body)
        if self.principal is ANONYMOUS:
            return HttpRequest, fields
        return HttpRequest, (*fields, self.principal)

    @property
    def preconditions(self) -> Preconditions:
        """The conditional headers (RFC 9110 13.1)."""
        return Preconditions(
            if_match=self.header("if-match"),
            if_none_match=self.header("if-none-match"),
            if_modified_since=self.header("if-modified-since"),
            if_unmodified_since=self.header("if-unmodified-since"),
        )

    @property
    def text(self) -> str:
        """The body as text (RFC 8040 5.2: UTF-8)."""
        return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class HttpReply:
    """One reply; ``stream`` is set for a server-sent event stream instead of ``body``."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    stream: Iterable[bytes] | None = None

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as its fields, as :class:`HttpRequest` (a stream does not pickle)."""
        if self.stream is not None:
            raise TypeError("a streaming reply cannot be pickled")
        return HttpReply, (self.status, self.headers, self.body)

    def header(self, name: str) -> str | None:
        """A header by name, case-insensitive."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def revision_headers(revision: Revision) -> tuple[tuple[str, str], ...]:
    """ETag and Last-Modified of a resource (RFC 8040 3.4.1.1, 3.4.1.2)."""
    return (
        ("ETag", format_etag(revision.etag)),
        ("Last-Modified", http_date(revision.last_modified)),
    )


def data_reply(
    status: int, body: bytes, encoding: Encoding, revision: Revision | None
) -> HttpReply:
    """A reply carrying YANG data in ``encoding``."""
    headers = [("Content-Type", DATA_TYPE[encoding].value)]
    if revision is not None:
        headers += revision_headers(revision)
    return HttpReply(status, tuple(headers), body)


def empty_reply(
    status: int, revision: Revision | None = None, *extra: tuple[str, str]
) -> HttpReply:
    """A reply without a body (201, 204, 304), with the resource's revision headers."""
    headers = list(revision_headers(revision)) if revision is not None else []
    return HttpReply(status, (*headers, *extra))
