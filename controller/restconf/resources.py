"""The RESTCONF resource tree (RFC 8040 3, RFC 8527 3): one request in, one reply out.

``/.well-known/host-meta`` (3.1), ``{+restconf}`` (3.3), ``/data`` (3.3.1), ``/ds/<datastore>``
(RFC 8527), ``/operations`` (3.3.2), ``/yang-library-version`` (3.3.3) and ``/streams/...``
(6.3). Every error becomes ``ietf-restconf:errors`` with its RFC 8040 7 status, and an
unexpected exception is logged and answered with ``operation-failed``: the core's
transactions are all or nothing, so nothing has changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from urllib.parse import unquote

from lxml import etree

from controller.datastore.api import DatastoreName, Revision, ServerCore
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Encoding
from controller.model.paths import NodeKind, PathResolver, ResolvedPath
from controller.restconf.bodies import parse_json
from controller.restconf.conditional import Outcome, evaluate
from controller.restconf.data import READ_ONLY_METHODS, DataResources, Target
from controller.restconf.errors import (
    RESTCONF_NS,
    RestconfError,
    protocol_error,
    render_errors,
    status_for,
)
from controller.restconf.http import HttpReply, HttpRequest, data_reply, empty_reply
from controller.restconf.media import DATA_TYPE, MediaType, body_type, negotiate
from controller.restconf.query import NO_PARAMS, STREAM_PARAMS, parse_query
from controller.restconf.streams import STREAM_ENCODINGS, ToXml, event_source, renderer
from controller.types import DataPath

LOG = logging.getLogger(__name__)
NamespaceOf = Callable[[str], str | None]
ROOT = "/restconf"
HOST_META = (
    '<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">'
    f'<Link rel="restconf" href="{ROOT}"/></XRD>'
)
_EDITABLE = {
    DatastoreName.RUNNING: DatastoreName.RUNNING,
    DatastoreName.CANDIDATE: DatastoreName.CANDIDATE,
    DatastoreName.STARTUP: DatastoreName.STARTUP,
}


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the static resources report: the yang-library revision and the schema's id."""

    yang_library_version: str
    schema_id: str  # changes when the set of modules changes
    started: datetime


def schema_revision(info: ServerInfo) -> Revision:
    """The revision of resources that change only with the schema (root, operations)."""
    digest = hashlib.sha256(info.schema_id.encode()).hexdigest()[:16]
    return Revision(f"schema-{digest}", info.started.astimezone(UTC).replace(microsecond=0))


@dataclass(frozen=True, slots=True)
class Invocation:
    """An RPC's invocation as RESTCONF received it, checked (:meth:`Restconf.invocation`)."""

    data_path: DataPath
    document: str  # the input, ``{}`` for none
    encoding: Encoding  # the input's, and so the output's
    reply_encoding: Encoding  # what the client accepts


class Restconf:
    """The RESTCONF server's request handling, over a :class:`ServerCore`."""

    def __init__(
        self, core: ServerCore, resolver: PathResolver, info: ServerInfo, to_xml: ToXml
    ) -> None:
        """``to_xml`` converts a notification to XML, for streams in the XML encoding."""
        self._core = core
        self._resolver = resolver
        self._info = info
        self._to_xml = to_xml
        self._data = DataResources(core, resolver)

    def handle(self, request: HttpRequest) -> HttpReply:
        """Answer one request; never raises."""
        return self._guarded(request, lambda: self._route(request))

    def invocation(self, request: HttpRequest) -> Invocation | None:
        """The well-formed invocation of an RPC a request is (RFC 8040 3.6: a POST to
        ``/operations/X`` or ``/data/X``, without a query, whose input names no member twice
        and whose reply can come in its encoding); None for any other request, whose reply
        comes from :meth:`handle`. For a process that has the invocation run elsewhere
        (:mod:`controller.workers`), then answers it with :meth:`invoked`."""
        if request.method != "POST":
            return None
        rest = request.path.removeprefix(ROOT + "/")
        head, _, tail = rest.partition("/")
        if rest == request.path or head not in ("operations", "data") or not tail:
            return None
        try:
            resolved = self._resolver.resolve(tail)
            if resolved.node is None or resolved.node.kind is not NodeKind.RPC:
                return None
            return self._call(request, resolved)
        except CatsError:
            return None

    def invoked(
        self, request: HttpRequest, call: Invocation, invoke: Callable[[], str]
    ) -> HttpReply:
        """The reply to an invocation whose output document ``invoke`` gives (or whose
        error it raises); never raises."""
        return self._guarded(request, lambda: self._output_reply(call, self._served(invoke)))

    def _guarded(self, request: HttpRequest, answer: Callable[[], HttpReply]) -> HttpReply:
        """``answer()``, or the reply to its error."""
        try:
            return answer()
        except CatsError as exc:
            allow = exc.allow if isinstance(exc, RestconfError) else None
            return self.error_reply(request, status_for(exc), exc.items, allow)
        except Exception:
            LOG.exception("unexpected error on %s %s", request.method, request.path)
            item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "internal error")
            return self.error_reply(request, 500, (item,))

    def error_reply(
        self,
        request: HttpRequest,
        status: int,
        items: tuple[ErrorItem, ...],
        allow: str | None = None,
    ) -> HttpReply:
        """``ietf-restconf:errors`` in the encoding the client accepts; without an Accept
        header, in the request body's (RFC 8040 5.2), else JSON."""
        body_encoding = _body_encoding(request)
        try:
            encoding = negotiate(request.header("accept"), body_encoding)
        except CatsError:
            encoding = body_encoding
        body = (
            b""
            if request.method == "HEAD"
            else render_errors(items, encoding, self._resolver.namespace)
        )
        headers = [("Content-Type", DATA_TYPE[encoding].value)]
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            headers.append(("Allow", allow or _allowed(request.path)))
        return HttpReply(status, tuple(headers), body)

    def _route(self, request: HttpRequest) -> HttpReply:
        path = request.path
        if path == "/.well-known/host-meta":
            return self._host_meta(request)
        if path in (ROOT, ROOT + "/"):
            return self._root(request)
        rest = path.removeprefix(ROOT + "/")
        if rest == path:
            raise protocol_error(404, "invalid-value", f"no resource {path!r}")
        head, _, tail = rest.partition("/")
        routes: dict[str, Callable[[HttpRequest, str], HttpReply]] = {
            "data": self._data_resource,
            "ds": self._ds_resource,
            "operations": self._operations,
            "yang-library-version": self._yang_library_version,
            "streams": self._stream,
        }
        route = routes.get(head)
        if route is None:
            raise protocol_error(404, "invalid-value", f"no resource {path!r}")
        return route(request, tail)

    def _data_resource(self, request: HttpRequest, tail: str) -> HttpReply:
        return self._datastore(request, DatastoreName.OPERATIONAL, tail, f"{ROOT}/data")

    def _ds_resource(self, request: HttpRequest, tail: str) -> HttpReply:
        name, _, tail = tail.partition("/")
        return self._datastore(request, _datastore(name), tail, f"{ROOT}/ds/{name}")

    def _yang_library_version(self, request: HttpRequest, tail: str) -> HttpReply:
        """RFC 8040 3.3.3: the revision of ietf-yang-library the server implements."""
        if tail:
            raise protocol_error(404, "invalid-value", f"no resource {request.path!r}")
        version = self._info.yang_library_version
        return self._static(request, {"ietf-restconf:yang-library-version": version})

    # -- static resources -------------------------------------------------------------------

    def _host_meta(self, request: HttpRequest) -> HttpReply:
        """RFC 8040 3.1: where the RESTCONF root is."""
        _only(request, "GET", "HEAD", "OPTIONS")
        headers = (("Content-Type", MediaType.XRD_XML.value),)
        return HttpReply(200, headers, HOST_META.encode())

    def _root(self, request: HttpRequest) -> HttpReply:
        """RFC 8040 3.3: the API resource."""
        content = {
            "ietf-restconf:restconf": {
                "data": {},
                "operations": {},
                "yang-library-version": self._info.yang_library_version,
            }
        }
        return self._static(request, content)

    def _static(self, request: HttpRequest, content: Mapping[str, object]) -> HttpReply:
        if _only(request, "GET", "HEAD", "OPTIONS"):
            return HttpReply(200, (("Allow", READ_ONLY_METHODS),))
        parse_query(request.query, NO_PARAMS)
        encoding = negotiate(request.header("accept"))
        revision = schema_revision(self._info)
        if evaluate(request.preconditions, revision, safe=True) is Outcome.NOT_MODIFIED:
            return empty_reply(304, revision)
        body = _render_static(content, encoding, self._resolver.namespace)
        return data_reply(200, body, encoding, revision)

    # -- datastores and operations ----------------------------------------------------------

    def _datastore(
        self, request: HttpRequest, datastore: DatastoreName, tail: str, prefix: str
    ) -> HttpReply:
        resolved = self._resolver.resolve(tail)
        if resolved.node is not None and resolved.node.is_operation:
            return self._invoke(request, resolved)
        if prefix.endswith("/data"):
            target = Target(
                DatastoreName.OPERATIONAL, DatastoreName.RUNNING, tail, resolved, prefix
            )
        else:
            target = Target(datastore, _EDITABLE.get(datastore), tail, resolved, prefix)
        return self._data.handle(request, target)

    def _operations(self, request: HttpRequest, tail: str) -> HttpReply:
        """RFC 8040 3.3.2 (the list) and 4.4.2 (invoking an RPC)."""
        if not tail:
            names = self._resolver.operations()
            listed = {name: [None] for name in names}
            return self._static(request, {"ietf-restconf:operations": listed})
        resolved = self._resolver.resolve(tail)
        if resolved.node is None or resolved.node.kind is not NodeKind.RPC:
            raise protocol_error(404, "invalid-value", f"no operation {unquote(tail)!r}")
        return self._invoke(request, resolved)

    def _invoke(self, request: HttpRequest, resolved: ResolvedPath) -> HttpReply:
        """RFC 8040 3.6, 4.4.2: POST the input; 200 with the output, or 204 without one."""
        if request.method == "OPTIONS":
            return HttpReply(200, (("Allow", "OPTIONS, POST"),))
        if request.method != "POST":
            raise RestconfError(
                405,
                ErrorItem(ErrorType.PROTOCOL, "operation-not-supported", "an operation takes POST"),
                allow="OPTIONS, POST",
            )
        call = self._call(request, resolved)
        principal = request.principal
        return self._output_reply(
            call,
            self._served(
                lambda: self._core.invoke(call.data_path, call.document, call.encoding, principal)
            ),
        )

    def _call(self, request: HttpRequest, resolved: ResolvedPath) -> Invocation:
        """What an invocation POSTs (RFC 8040 3.6.1), checked before anything runs."""
        parse_query(request.query, NO_PARAMS)
        if request.body.strip():
            encoding = body_type(request.header("content-type")).encoding
            document = request.text
            if encoding is Encoding.JSON:
                parse_json(document)  # 400 for a name twice, before libyang takes the last
        else:
            encoding, document = Encoding.JSON, "{}"
        reply_encoding = negotiate(request.header("accept"), encoding)
        return Invocation(resolved.data_path, document, encoding, reply_encoding)

    @staticmethod
    def _served(invoke: Callable[[], str]) -> str:
        """The output of an invocation; 501 for one that is modelled but that nobody serves."""
        try:
            return invoke()
        except CatsError as exc:
            if exc.items[0].tag == "operation-not-supported":  # modelled, but nobody serves it
                raise RestconfError(HTTPStatus.NOT_IMPLEMENTED, *exc.items) from None
            raise

    @staticmethod
    def _output_reply(call: Invocation, output: str) -> HttpReply:
        """RFC 8040 4.4.2: 200 with the output, or 204 without one."""
        if call.reply_encoding is not call.encoding:
            raise protocol_error(
                406, "invalid-value", "the output is given in the input's encoding"
            )
        if _is_empty(output):
            return HttpReply(204)
        return data_reply(200, output.encode(), call.encoding, None)

    # -- event streams ----------------------------------------------------------------------

    def _stream(self, request: HttpRequest, tail: str) -> HttpReply:
        """RFC 8040 6.3, 6.4: a stream as server-sent events, in JSON or XML."""
        _only(request, "GET")
        encoding, _, raw_name = tail.partition("/")
        name = unquote(raw_name)
        served = {stream.name for stream in self._core.streams()}
        if encoding not in STREAM_ENCODINGS or name not in served:
            raise protocol_error(404, "invalid-value", f"no stream {tail!r}")
        params = parse_query(request.query, STREAM_PARAMS)
        accept = request.header("accept")
        if accept and not any(kind in accept for kind in ("text/event-stream", "*/*", "text/*")):
            raise protocol_error(406, "invalid-value", "a stream is served as text/event-stream")
        subscription = self._core.subscribe(
            name,
            start_time=params.start_time,
            stop_time=params.stop_time,
            xpath_filter=params.xpath_filter,
            principal=request.principal,
        )
        headers = (
            ("Content-Type", MediaType.EVENT_STREAM.value),
            ("Cache-Control", "no-cache"),
        )
        events = event_source(subscription, renderer(STREAM_ENCODINGS[encoding], self._to_xml))
        return HttpReply(200, headers, stream=events)


def _only(request: HttpRequest, *methods: str) -> bool:
    """405 for any other method; True when the request is OPTIONS."""
    if request.method not in methods:
        raise protocol_error(
            405, "operation-not-supported", f"{request.method} is not allowed here"
        )
    return request.method == "OPTIONS"


def _allowed(path: str) -> str:
    """The Allow header of a 405 reply."""
    if "/operations/" in path:
        return "OPTIONS, POST"
    if "/streams/" in path:
        return "GET"
    return READ_ONLY_METHODS


def _body_encoding(request: HttpRequest) -> Encoding:
    """The encoding of the request's body (XML or JSON by its Content-Type), JSON without."""
    kind = (request.header("content-type") or "").split(";")[0].strip().lower()
    return Encoding.XML if kind.endswith("xml") else Encoding.JSON


def _datastore(identity: str) -> DatastoreName:
    """The datastore an RFC 8527 ``ds`` identity names (``ietf-datastores:running``)."""
    module, _, name = unquote(identity).partition(":")
    try:
        if module == "ietf-datastores":
            return DatastoreName(name)
    except ValueError:
        pass
    raise protocol_error(404, "invalid-value", f"no datastore {identity!r}")


def _is_empty(output: str) -> bool:
    """Whether an operation's output has no nodes (the core answers ``""`` then)."""
    return not output.strip() or output.strip() == "{}"


def _render_static(
    content: Mapping[str, object], encoding: Encoding, namespace_of: NamespaceOf
) -> bytes:
    """A small static resource in JSON, or in XML: ietf-restconf, children in their modules."""
    if encoding is Encoding.JSON:
        return json.dumps(content, indent=2).encode()
    ((name, value),) = content.items()
    root = etree.Element(f"{{{RESTCONF_NS}}}{name.split(':')[1]}", nsmap={None: RESTCONF_NS})
    if isinstance(value, Mapping):
        for key, inner in value.items():
            module, _, local = key.rpartition(":")
            namespace = (namespace_of(module) if module else None) or RESTCONF_NS
            child = etree.SubElement(root, f"{{{namespace}}}{local}")
            if isinstance(inner, str):
                child.text = inner
    else:
        root.text = str(value)
    return bytes(etree.tostring(root, encoding="utf-8"))
