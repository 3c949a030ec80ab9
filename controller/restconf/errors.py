"""RESTCONF errors: the error-tag to status mapping (RFC 8040 7) and ``ietf-restconf:errors``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from lxml import etree

from controller.datastore.api import CLUSTER_READ_TIMEOUT, CLUSTER_UNAVAILABLE
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Encoding

RESTCONF_NS = "urn:ietf:params:xml:ns:yang:ietf-restconf"
YANG_NS = "urn:ietf:params:xml:ns:yang:1"  # RFC 7950 15 error-info (module ``yang``)

#: RFC 8040 7, the status of each error-tag where the table gives one answer.
STATUS_OF_TAG: dict[str, int] = {
    "in-use": 409,
    "invalid-value": 400,
    "too-big": 413,
    "missing-attribute": 400,
    "bad-attribute": 400,
    "unknown-attribute": 400,
    "missing-element": 400,
    "bad-element": 400,
    "unknown-element": 400,
    "unknown-namespace": 400,
    "access-denied": 403,
    "lock-denied": 409,
    "resource-denied": 409,
    "rollback-failed": 500,
    "data-exists": 409,
    "data-missing": 409,
    "operation-not-supported": 405,
    "operation-failed": 500,
    "partial-operation": 500,
    "malformed-message": 400,
}


class RestconfError(CatsError):
    """An error the RESTCONF layer answers itself, with the status it chose (404, 406, 412...)."""

    def __init__(self, status: int, *items: ErrorItem, allow: str | None = None) -> None:
        super().__init__(*items)
        self.status = status
        self.allow = allow  # the Allow header of a 405 (RFC 9110 15.5.6), when it is known


def protocol_error(status: int, tag: str, message: str, path: str | None = None) -> RestconfError:
    """A one-item protocol error with an explicit status."""
    return RestconfError(status, ErrorItem(ErrorType.PROTOCOL, tag, message, path=path))


def status_of(items: Sequence[ErrorItem]) -> int:
    """The status of a core error (RFC 8040 7): the first item decides.

    The table gives ``operation-failed`` 412 or 500. A schema constraint the request does not
    meet (RFC 7950 15: ``data-not-unique``, ``must-violation``, ``too-many-elements``... which
    libyang reports with that app-tag) is a failed precondition of the edit, so 412; 500 stays
    for failures of the server itself. Bad input never gets a 500. A write refused because the
    cluster's store has no quorum (``resource-denied``, app-tag ``cluster-unavailable``) is
    503 Service Unavailable: the server cannot take writes for now, reads go on; so is a read
    refused because the replica could not catch up with the cluster in time
    (``cluster-read-timeout``).
    """
    first = items[0]
    if first.tag == "operation-failed" and first.app_tag is not None:
        return 412
    if first.tag == "resource-denied" and first.app_tag in (
        CLUSTER_UNAVAILABLE,
        CLUSTER_READ_TIMEOUT,
    ):
        return 503  # the cluster's store has no quorum: a temporary condition of the server
    return STATUS_OF_TAG.get(first.tag, 500)


def status_for(exc: CatsError) -> int:
    """The status of any project error."""
    return exc.status if isinstance(exc, RestconfError) else status_of(exc.items)


def _item_json(item: ErrorItem) -> dict[str, object]:
    out: dict[str, object] = {"error-type": item.type.value, "error-tag": item.tag}
    if item.app_tag:
        out["error-app-tag"] = item.app_tag
    if item.path:
        out["error-path"] = item.path
    out["error-message"] = item.message
    if item.info:
        info: dict[str, object] = {}
        for name, value in item.info:  # a repeated name (non-unique) becomes a list
            known = info.get(name)
            if known is None:
                info[name] = value
            elif isinstance(known, list):
                known.append(value)
            else:
                info[name] = [known, value]
        out["error-info"] = info
    return out


def errors_json(items: Sequence[ErrorItem]) -> dict[str, object]:
    """The ``ietf-restconf:errors`` container as RFC 7951 JSON."""
    return {"ietf-restconf:errors": {"error": [_item_json(item) for item in items]}}


def _path_namespaces(path: str, namespace_of: Callable[[str], str | None]) -> dict[str, str]:
    """``xmlns`` declarations for the module names an error-path uses as prefixes."""
    found: dict[str, str] = {}
    for step in path.split("/"):
        module, colon, _ = step.partition("[")[0].partition(":")
        if colon and module not in found:
            namespace = namespace_of(module)
            if namespace is not None:
                found[module] = namespace
    return found


def errors_xml(
    items: Sequence[ErrorItem],
    namespace_of: Callable[[str], str | None] = lambda _: None,
    namespace: str = RESTCONF_NS,
) -> bytes:
    """The ``errors`` container as XML (RFC 8040 7.1); error-path prefixes are module names.

    ``namespace`` is the module that uses the ``errors`` grouping (ietf-yang-patch uses it too).
    """
    ns = namespace
    root = etree.Element(f"{{{ns}}}errors", nsmap={None: ns})
    for item in items:
        error = etree.SubElement(root, f"{{{ns}}}error")
        fields = _item_json(item)
        for name in ("error-type", "error-tag", "error-app-tag"):
            if name in fields:
                etree.SubElement(error, f"{{{ns}}}{name}").text = str(fields[name])
        if item.path:
            nsmap = _path_namespaces(item.path, namespace_of)
            node = etree.SubElement(error, f"{{{ns}}}error-path", nsmap=nsmap)
            node.text = item.path
        etree.SubElement(error, f"{{{ns}}}error-message").text = item.message
        if item.info:
            info = etree.SubElement(error, f"{{{ns}}}error-info")
            for key, value in item.info:
                module, colon, local = key.partition(":")
                if not colon:
                    etree.SubElement(info, key).text = value
                    continue
                namespace = YANG_NS if module == "yang" else namespace_of(module) or module
                nsmap = {module: namespace}
                if value.startswith("/"):
                    nsmap.update(_path_namespaces(value, namespace_of))
                etree.SubElement(info, f"{{{namespace}}}{local}", nsmap=nsmap).text = value
    return bytes(etree.tostring(root, xml_declaration=False, encoding="utf-8"))


def render_errors(
    items: Sequence[ErrorItem],
    encoding: Encoding,
    namespace_of: Callable[[str], str | None] = lambda _: None,
) -> bytes:
    """The error document in the negotiated encoding."""
    if encoding is Encoding.XML:
        return errors_xml(items, namespace_of)
    return json.dumps(errors_json(items), indent=2).encode()
