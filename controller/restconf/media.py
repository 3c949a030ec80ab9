"""Media types and their negotiation (RFC 8040 5.2, RFC 8072 2.1): 406 and 415 when they fail."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from controller.model import Encoding
from controller.restconf.errors import protocol_error


class MediaType(StrEnum):
    """The media types RESTCONF serves and accepts."""

    YANG_DATA_JSON = "application/yang-data+json"
    YANG_DATA_XML = "application/yang-data+xml"
    YANG_PATCH_JSON = "application/yang-patch+json"
    YANG_PATCH_XML = "application/yang-patch+xml"
    EVENT_STREAM = "text/event-stream"
    XRD_XML = "application/xrd+xml"


#: The media type of a response body in each encoding.
DATA_TYPE = {Encoding.JSON: MediaType.YANG_DATA_JSON, Encoding.XML: MediaType.YANG_DATA_XML}

# What an Accept range means, in the order of preference when it is a wildcard.
_ACCEPTS: dict[str, tuple[Encoding, ...]] = {
    MediaType.YANG_DATA_JSON: (Encoding.JSON,),
    MediaType.YANG_DATA_XML: (Encoding.XML,),
    "application/json": (Encoding.JSON,),
    "application/xml": (Encoding.XML,),
    "text/xml": (Encoding.XML,),
    "application/*": (Encoding.JSON, Encoding.XML),
    "*/*": (Encoding.JSON, Encoding.XML),
}

_BODY_TYPES: dict[str, tuple[Encoding, bool]] = {
    MediaType.YANG_DATA_JSON: (Encoding.JSON, False),
    MediaType.YANG_DATA_XML: (Encoding.XML, False),
    "application/json": (Encoding.JSON, False),
    "application/xml": (Encoding.XML, False),
    MediaType.YANG_PATCH_JSON: (Encoding.JSON, True),
    MediaType.YANG_PATCH_XML: (Encoding.XML, True),
}


@dataclass(frozen=True, slots=True)
class BodyType:
    """What a request body is: its encoding, and whether it is a YANG Patch (RFC 8072)."""

    encoding: Encoding
    yang_patch: bool


def _ranges(header: str) -> list[tuple[float, int, str]]:
    """Accept ranges as (-q, position, type), best first (RFC 9110 12.5.1)."""
    ranges: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        kind, *params = (piece.strip() for piece in part.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if kind and quality > 0:
            ranges.append((-quality, position, kind.lower()))
    return sorted(ranges)


def negotiate(accept: str | None, default: Encoding = Encoding.JSON) -> Encoding:
    """The response encoding for an Accept header (RFC 8040 5.2); 406 when none fits.

    Without an Accept header (or with a wildcard) the response uses ``default``: the
    encoding of the request body when there is one, else JSON.
    """
    if accept is None or not accept.strip():
        return default
    for _, _, kind in _ranges(accept):
        choices = _ACCEPTS.get(kind)
        if choices is not None:
            return default if default in choices else choices[0]
    raise protocol_error(
        406, "invalid-value", f"none of the accepted media types is served: {accept}"
    )


def body_type(content_type: str | None, *, allow_patch: bool = False) -> BodyType:
    """The type of a request body from its Content-Type; 415 when it is not one RESTCONF takes."""
    kind = (content_type or "").split(";")[0].strip().lower()
    found = _BODY_TYPES.get(kind)
    if found is None or (found[1] and not allow_patch):
        raise protocol_error(
            415, "invalid-value", f"unsupported media type {kind or '(none)'!r} for this request"
        )
    return BodyType(*found)
