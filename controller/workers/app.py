"""The WSGI application of a RESTCONF worker process: the one-process application
(:class:`~controller.restconf.wsgi.RestconfApp`) with the core at the other end of a link.

A worker reads the request (HTTP, TLS, the gate's deadlines, the body's bounds and shape) and
hands it to the core, which answers it as it would in one process (authentication, access
control, audit, the resources). One kind it takes further: the invocation of an RPC whose
input and output validate without running (``select-service``, the CST and NST reports), on a
connection whose credentials the core has already accepted. The worker parses and validates its
input in its own libyang context and sends the members; the core checks the credentials and
access and runs the handler; the worker validates and prints the output. An input the worker
finds invalid goes to the core whole, so the client gets the error one process would give
(access control is checked before the input, RFC 8341 3.4.4).
"""

from __future__ import annotations

import logging
from typing import Any
from wsgiref.types import WSGIEnvironment

from controller.datastore import rpc
from controller.datastore.contexts import Contexts
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.restconf.auth import ConnectionMemo
from controller.restconf.http import HttpReply, HttpRequest
from controller.restconf.resources import Invocation, Restconf
from controller.restconf.wsgi import CONNECTION_MEMO, RestconfApp, is_public
from controller.types import DataPath
from controller.workers.gateway import without_body
from controller.workers.link import (
    Answer,
    CoreGoneError,
    CoreLink,
    Failed,
    Forwarded,
    Output,
    StreamHead,
    Validated,
)

LOG = logging.getLogger(__name__)


class WorkerApp(RestconfApp):
    """Reads requests and has the core answer them over ``link``."""

    def __init__(
        self,
        restconf: Restconf,
        link: CoreLink,
        contexts: Contexts,
        *,
        max_body_size: int,
        limits: Any,
    ) -> None:
        super().__init__(
            restconf, _core_only, _core_only, max_body_size=max_body_size, limits=limits
        )
        self._link = link
        self._contexts = contexts
        self._operations: dict[DataPath, rpc.Operation | None] = {}

    def count(self, bare: HttpRequest, status: int, started: float) -> None:
        """Nothing: the core counts every request it answers (its ``/metrics``)."""

    def _answer(self, bare: HttpRequest, environ: WSGIEnvironment) -> HttpReply:
        source = str(environ.get("REMOTE_ADDR", ""))
        memo = environ.get(CONNECTION_MEMO)
        memo = memo if isinstance(memo, ConnectionMemo) else ConnectionMemo()
        try:
            if not is_public(bare) and memo.credential is None:
                refused = self._first_credentials(bare, source, memo)
                if refused is not None:
                    return refused
            body = self.body(bare, environ, source)
            if isinstance(body, HttpReply):
                return body
            request = HttpRequest(bare.method, bare.path, bare.query, bare.headers, body)
            call = None if is_public(bare) else self._restconf.invocation(request)
            operation = None if call is None else self._parallel(call.data_path)
            if call is not None and operation is not None:
                return self._invoke(request, call, operation, source, memo)
            return self._forward(Forwarded(request, source, memo.credential), memo)
        except CoreGoneError as exc:
            LOG.warning("the core did not answer %s %s: %s", bare.method, bare.path, exc)
            message = "the server is stopping; retry later"
            item = ErrorItem(ErrorType.TRANSPORT, "resource-denied", message)
            return self._restconf.error_reply(bare, 503, (item,))

    def _first_credentials(
        self, bare: HttpRequest, source: str, memo: ConnectionMemo
    ) -> HttpReply | None:
        """The core's check of a connection's first credentials, before its body is read (401
        comes before 413, as in one process): None when good, else the core's refusal."""
        request = HttpRequest(bare.method, bare.path, bare.query, bare.headers)
        answer = self._link.ask(Forwarded(request, source, None, authenticate_only=True))
        assert isinstance(answer, Answer)
        memo.credential = answer.credential
        return answer.reply

    def _forward(self, message: Forwarded, memo: ConnectionMemo) -> HttpReply:
        reply, chunks = self._link.ask_streaming(message)
        memo.credential = reply.credential
        if isinstance(reply, StreamHead):
            return HttpReply(reply.status, reply.headers, stream=chunks)
        assert isinstance(reply, Answer)
        assert reply.reply is not None
        return reply.reply

    def _invoke(
        self,
        request: HttpRequest,
        call: Invocation,
        operation: rpc.Operation,
        source: str,
        memo: ConnectionMemo,
    ) -> HttpReply:
        """Validate the input here, have the core run it, validate and print the output."""
        try:
            with self._contexts.borrow() as ctx:
                members = rpc.input_members(ctx, operation, call.document, call.encoding, None)
        except CatsError:  # the core answers it whole: access control comes first
            return self._forward(Forwarded(request, source, memo.credential), memo)
        message = Validated(without_body(request), source, memo.credential, call.data_path, members)
        reply = self._link.ask(message)
        memo.credential = reply.credential
        if isinstance(reply, Answer) and reply.reply is not None:
            return reply.reply  # credentials refused, a comment header refused

        def output() -> str:
            if isinstance(reply, Failed):
                raise CatsError(*reply.items)
            assert isinstance(reply, Output)
            with self._contexts.borrow() as ctx:
                return rpc.output_document(ctx, operation, reply.output, call.encoding, None)

        return self._restconf.invoked(request, call, output)

    def _parallel(self, path: DataPath) -> rpc.Operation | None:
        """The RPC at ``path`` when a worker may validate it (its input and output read no
        running), else None; decided once per path, on the schema."""
        if path in self._operations:
            return self._operations[path]
        try:
            with self._contexts.borrow() as ctx:
                operation: rpc.Operation | None = rpc.resolve(ctx, path)
        except CatsError:
            operation = None
        if operation is not None and not operation.parallel:
            operation = None
        if len(self._operations) < MAX_OPERATIONS:  # paths with keys are not a fixed set
            self._operations[path] = operation
        return operation


#: Operation paths remembered (RPC paths are a fixed set; this bounds what clients can add).
MAX_OPERATIONS = 1024


def _core_only(*_: object) -> Any:
    """What only the core does (authentication, principals), never called in a worker."""
    raise AssertionError("the core authenticates; a worker process does not")
