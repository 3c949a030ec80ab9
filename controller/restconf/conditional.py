"""Entity-tags, Last-Modified and conditional requests (RFC 8040 3.4.1.1-3.4.1.3, RFC 9110 13).

:func:`evaluate` applies the preconditions in the order of RFC 9110 13.2.2 against the current
revision of the target, before anything is read or changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from enum import StrEnum

from controller.datastore.api import Revision


class Outcome(StrEnum):
    """What the preconditions decide."""

    PROCEED = "proceed"
    NOT_MODIFIED = "not-modified"  # 304, for GET and HEAD
    FAILED = "precondition-failed"  # 412


@dataclass(frozen=True, slots=True)
class Preconditions:
    """The four conditional headers of a request, as sent."""

    if_match: str | None = None
    if_none_match: str | None = None
    if_modified_since: str | None = None
    if_unmodified_since: str | None = None

    @property
    def any(self) -> bool:
        """Whether the request is conditional at all."""
        return any(
            value is not None
            for value in (
                self.if_match,
                self.if_none_match,
                self.if_modified_since,
                self.if_unmodified_since,
            )
        )


def format_etag(etag: str) -> str:
    """An entity-tag as it goes in the ETag header: quoted (RFC 9110 8.8.3)."""
    if etag.startswith(('"', 'W/"')):
        return etag
    return f'"{etag}"'


def http_date(moment: datetime) -> str:
    """An IMF-fixdate for Last-Modified (RFC 9110 5.6.7)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_datetime(moment.astimezone(UTC), usegmt=True)


def _parse_date(value: str) -> datetime | None:
    """An HTTP date, or None when it is not one (the header is then ignored, RFC 9110 13.1.3)."""
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _seconds(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.replace(microsecond=0)


def _tags(header: str) -> list[str]:
    return [tag.strip() for tag in header.split(",") if tag.strip()]


def _opaque(tag: str) -> str:
    return tag.removeprefix("W/")


def _matches(header: str, current: Revision | None, *, weak: bool) -> bool:
    """Whether an If-Match or If-None-Match list matches the current entity-tag."""
    tags = _tags(header)
    if "*" in tags:
        return current is not None
    if current is None:
        return False
    etag = format_etag(current.etag)
    if weak:
        return any(_opaque(tag) == _opaque(etag) for tag in tags)
    return not etag.startswith("W/") and any(tag == etag for tag in tags)


def evaluate(pre: Preconditions, current: Revision | None, *, safe: bool) -> Outcome:
    """Evaluate the preconditions in RFC 9110 13.2.2 order.

    Args:
        pre: the request's conditional headers.
        current: the target's revision, or None when the target does not exist.
        safe: whether the method is GET or HEAD (a failed If-None-Match is then 304).
    """
    if pre.if_match is not None:
        if not _matches(pre.if_match, current, weak=False):
            return Outcome.FAILED
    elif pre.if_unmodified_since is not None and current is not None:
        limit = _parse_date(pre.if_unmodified_since)
        if limit is not None and _seconds(current.last_modified) > limit:
            return Outcome.FAILED
    if pre.if_none_match is not None:
        if _matches(pre.if_none_match, current, weak=True):
            return Outcome.NOT_MODIFIED if safe else Outcome.FAILED
    elif safe and pre.if_modified_since is not None and current is not None:
        since = _parse_date(pre.if_modified_since)
        if since is not None and _seconds(current.last_modified) <= since:
            return Outcome.NOT_MODIFIED
    return Outcome.PROCEED
