"""Datastore resources: ``{+restconf}/data`` (RFC 8040 3.3.1, 4) and ``/ds/<datastore>`` (RFC 8527).

Each method resolves the target, checks the preconditions against its current revision before
anything changes (RFC 9110 13.2.2), and hands the core one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    InsertWhere,
    ReadRequest,
    Revision,
    ServerCore,
)
from controller.errors import CatsError, ErrorItem
from controller.model import Encoding
from controller.model.fields import check_fields
from controller.model.paths import ROOT, NodeKind, PathResolver, ResolvedPath
from controller.restconf.bodies import child_body, target_body
from controller.restconf.conditional import Outcome, evaluate
from controller.restconf.errors import (
    RESTCONF_NS,
    RestconfError,
    errors_xml,
    protocol_error,
    status_for,
)
from controller.restconf.http import HttpReply, HttpRequest, data_reply, empty_reply
from controller.restconf.media import body_type, negotiate
from controller.restconf.query import READ_PARAMS, WRITE_PARAMS, QueryParams, parse_query
from controller.restconf.yang_patch import YANG_PATCH_NS, parse_patch, status_document, to_edits
from controller.types import DataPath

DATA_METHODS = "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE"
READ_ONLY_METHODS = "GET, HEAD, OPTIONS"
ACCEPT_PATCH = (
    "application/yang-data+json, application/yang-data+xml, "
    "application/yang-patch+json, application/yang-patch+xml"
)


@dataclass(frozen=True, slots=True)
class Target:
    """A datastore resource: where reads go, where edits go, and the resolved path."""

    read_from: DatastoreName
    edit_in: DatastoreName | None  # None: read-only (operational)
    raw_path: str  # the api-path, still percent-encoded
    path: ResolvedPath
    prefix: str  # ``/restconf/data`` or ``/restconf/ds/ietf-datastores:running``

    @property
    def data_path(self) -> DataPath | None:
        """The core's path of the target (None for the datastore root)."""
        return None if self.path.node is None else self.path.data_path


class DataResources:
    """GET, HEAD, PUT, POST, PATCH, DELETE and OPTIONS on datastore resources."""

    def __init__(self, core: ServerCore, resolver: PathResolver) -> None:
        self._core = core
        self._resolver = resolver

    def handle(self, request: HttpRequest, target: Target) -> HttpReply:
        """Dispatch one request on a datastore resource."""
        method = request.method
        if method == "OPTIONS":
            allowed = DATA_METHODS if target.edit_in is not None else READ_ONLY_METHODS
            return HttpReply(200, (("Allow", allowed), ("Accept-Patch", ACCEPT_PATCH)))
        if method in ("GET", "HEAD"):
            return self._get(request, target)
        if target.edit_in is None:
            raise protocol_error(405, "operation-not-supported", "this datastore is read-only")
        # a cluster: the write starts from every commit acknowledged before it (cluster.md), so
        # its preconditions, its existence checks and its commit see them
        self._core.consistent(target.edit_in)
        if method == "PUT":
            return self._put(request, target, target.edit_in)
        if method == "POST":
            return self._post(request, target, target.edit_in)
        if method == "PATCH":
            return self._patch(request, target, target.edit_in)
        if method == "DELETE":
            return self._delete(request, target, target.edit_in)
        raise protocol_error(405, "operation-not-supported", f"{method} is not supported")

    # -- reads ------------------------------------------------------------------------------

    def _get(self, request: HttpRequest, target: Target) -> HttpReply:
        """RFC 8040 4.3: a read; 404 when the target has no instance."""
        params = parse_query(request.query, READ_PARAMS)
        encoding = negotiate(request.header("accept"))
        _check_entry(target)
        if params.fields is not None:
            check_fields(params.fields, target.path.node, self._resolver)
        datastore = target.read_from
        if datastore is DatastoreName.OPERATIONAL and params.content is Content.CONFIG:
            datastore = DatastoreName.RUNNING  # exactly the configuration, without state
        self._core.consistent(datastore)  # a cluster: this replica has every commit (cluster.md)
        result = self._core.read(
            _read_request(datastore, target, params, encoding), request.principal
        )
        outcome = evaluate(
            request.preconditions,
            result.revision if result.document is not None else None,
            safe=True,
        )
        if outcome is Outcome.NOT_MODIFIED:
            return empty_reply(304, result.revision)
        if outcome is Outcome.FAILED:
            raise _precondition_failed()
        if result.document is None:
            raise protocol_error(404, "invalid-value", "no such data resource", target.data_path)
        body = (
            result.document
            if target.path.node is not None
            else _wrap_root(result.document, encoding)
        )
        return data_reply(200, body.encode(), encoding, result.revision)

    def current(self, datastore: DatastoreName, target: Target) -> Revision | None:
        """The target's revision, or None when it has no instance (one shallow read)."""
        if target.data_path is None:
            return self._core.revision(datastore, None)
        request = ReadRequest(datastore, target.data_path, content=Content.CONFIG, depth=1)
        result = self._core.read(request, SYSTEM)
        return result.revision if result.document is not None else None

    def _check(self, request: HttpRequest, current: Revision | None) -> None:
        if evaluate(request.preconditions, current, safe=False) is not Outcome.PROCEED:
            raise _precondition_failed()

    # -- edits ------------------------------------------------------------------------------

    def _put(self, request: HttpRequest, target: Target, datastore: DatastoreName) -> HttpReply:
        """RFC 8040 4.5: create or replace; 201 when created, 204 when replaced."""
        params = parse_query(request.query, WRITE_PARAMS)
        kind = body_type(request.header("content-type"))
        _check_entry(target)
        body = target_body(request.text, kind.encoding, target.path, self._resolver)
        where, point = self._position(params, target, target.path)
        existing = self.current(datastore, target)
        self._check(request, existing)
        operation = EditOperation.REPLACE
        edit = Edit(operation, target.data_path or ROOT, body, kind.encoding, where, point)
        revision = self._core.edit(datastore, [edit], request.principal)
        return empty_reply(
            204 if existing is not None or target.data_path is None else 201, revision
        )

    def _post(self, request: HttpRequest, target: Target, datastore: DatastoreName) -> HttpReply:
        """RFC 8040 4.4.1: create the one child the body names; 201 with its Location."""
        params = parse_query(request.query, WRITE_PARAMS)
        kind = body_type(request.header("content-type"))
        child, body = child_body(request.text, kind.encoding, target.path, self._resolver)
        where, point = self._position(params, target, child)
        if request.preconditions.any:
            self._check(request, self.current(datastore, target))
        edit = Edit(EditOperation.CREATE, child.data_path, body, kind.encoding, where, point)
        try:
            revision = self._core.edit(datastore, [edit], request.principal)
        except RestconfError:
            raise
        except CatsError as exc:  # RFC 8040 4.4.1: an existing resource is resource-denied
            if exc.items[0].tag == "data-exists":
                raise RestconfError(409, replace(exc.items[0], tag="resource-denied")) from None
            raise
        location = f"{target.prefix}/{child.api_path}"
        return empty_reply(201, revision, ("Location", location))

    def _patch(self, request: HttpRequest, target: Target, datastore: DatastoreName) -> HttpReply:
        """RFC 8040 4.6.1 plain merge (204), or an RFC 8072 YANG Patch (yang-patch-status)."""
        parse_query(request.query, frozenset())
        kind = body_type(request.header("content-type"), allow_patch=True)
        if kind.yang_patch:
            return self._yang_patch(request, target, datastore, kind.encoding)
        _check_entry(target)
        body = target_body(request.text, kind.encoding, target.path, self._resolver)
        existing = self.current(datastore, target)
        if existing is None:
            raise protocol_error(404, "invalid-value", "no such data resource", target.data_path)
        self._check(request, existing)
        edit = Edit(EditOperation.MERGE, target.data_path or ROOT, body, kind.encoding)
        return empty_reply(204, self._core.edit(datastore, [edit], request.principal))

    def _yang_patch(
        self, request: HttpRequest, target: Target, datastore: DatastoreName, encoding: Encoding
    ) -> HttpReply:
        patch = parse_patch(request.text, encoding)
        edits = to_edits(patch, target.raw_path, encoding, self._resolver)
        reply_encoding = negotiate(request.header("accept"), encoding)
        if request.preconditions.any:
            self._check(request, self.current(datastore, target))
        if not edits:  # RFC 8072 2.2: the edit list may be empty; nothing changes
            body = status_document(patch.patch_id, None, reply_encoding, self._errors_xml)
            return data_reply(200, body, reply_encoding, self._core.revision(datastore, None))
        try:
            revision = self._core.edit(datastore, edits, request.principal)
        except RestconfError:
            raise
        except CatsError as exc:
            body = status_document(patch.patch_id, exc.items, reply_encoding, self._errors_xml)
            return data_reply(status_for(exc), body, reply_encoding, None)
        body = status_document(patch.patch_id, None, reply_encoding, self._errors_xml)
        return data_reply(200, body, reply_encoding, revision)

    def _errors_xml(self, items: Sequence[ErrorItem]) -> bytes:
        return errors_xml(items, self._resolver.namespace, YANG_PATCH_NS)

    def _delete(self, request: HttpRequest, target: Target, datastore: DatastoreName) -> HttpReply:
        """RFC 8040 4.7: delete the target; 404 when it does not exist."""
        parse_query(request.query, frozenset())
        _check_entry(target)
        if request.preconditions.any:
            self._check(request, self.current(datastore, target))
        if target.data_path is None:
            edit = Edit(EditOperation.REPLACE, ROOT, "{}", Encoding.JSON)
        else:
            edit = Edit(EditOperation.DELETE, target.data_path)
        try:
            revision = self._core.edit(datastore, [edit], request.principal)
        except RestconfError:
            raise
        except CatsError as exc:
            if exc.items[0].tag == "data-missing":
                raise RestconfError(404, *exc.items) from None
            raise
        return empty_reply(204, revision)

    def _position(
        self, params: QueryParams, target: Target, created: ResolvedPath
    ) -> tuple[InsertWhere | None, DataPath | None]:
        """``insert`` and ``point`` (RFC 8040 4.8.5, 4.8.6): ordered-by user lists only."""
        if params.insert is None:
            return None, None
        node = created.node
        if node is None or not node.ordered_by_user:
            raise protocol_error(400, "invalid-value", "insert applies to ordered-by user lists")
        point = None
        if params.point is not None:
            point = self._resolver.resolve(params.point).data_path
        return params.insert, point


def _read_request(
    datastore: DatastoreName, target: Target, params: QueryParams, encoding: Encoding
) -> ReadRequest:
    return ReadRequest(
        datastore=datastore,
        path=target.data_path,
        encoding=encoding,
        content=params.content,
        depth=params.depth,
        with_defaults=params.with_defaults,
        fields=params.fields,
    )


def _check_entry(target: Target) -> None:
    node = target.path.node
    if node is not None and node.kind is NodeKind.LIST and target.path.values is None:
        raise protocol_error(400, "invalid-value", f"name one {node.name!r} entry by its keys")


def _precondition_failed() -> RestconfError:
    return protocol_error(412, "operation-failed", "a precondition of the request failed")


def _wrap_root(document: str, encoding: Encoding) -> str:
    """The datastore root as RFC 8040 3.3.1 returns it: inside ``ietf-restconf:data``."""
    if encoding is Encoding.JSON:
        inner = document.strip() or "{}"
        return '{"ietf-restconf:data": ' + inner + "}"
    return f'<data xmlns="{RESTCONF_NS}">{document}</data>'
