"""RPCs of the server core (RFC 7950 7.14, RFC 6241 4.2, RFC 8040 3.6): input validated, the
registered handler run, its output validated.

Parsing and printing read only the schema and the operation's own trees, so they run outside
the core's read lock, in a twin context when the operation's validation reads no running
(:mod:`.contexts`): concurrent invocations parse and validate in parallel.
"""

from __future__ import annotations

import logging
from typing import Any

from controller.datastore import rpc
from controller.datastore.api import Principal
from controller.datastore.errors import operation_failed, refuse
from controller.datastore.parts import CoreParts
from controller.errors import CatsError
from controller.model import nodes
from controller.model.schema import Encoding
from controller.types import DataPath

LOG = logging.getLogger(__name__)


class Invoking(CoreParts):
    """The RPCs of the core."""

    def invoke(
        self, path: DataPath, input_document: str, encoding: Encoding, principal: Principal
    ) -> str:
        """Validate the input, run the registered handler, validate and return its output.

        Parsing and printing read only the schema and the operation's own trees, so they run
        outside the core lock (libyang leaves the GIL meanwhile); a validation against running
        holds it. Input or output that cannot read running (decided once per operation,
        :func:`rpc.reads_running`) is validated without it, so concurrent invocations
        validate in parallel.
        """
        nodes.clean_errors(self.ctx)
        operation = self._operation(path)
        self.authorization.operation(principal, operation)  # RFC 8341 3.4.4, before the input
        if operation.input_reads_running:
            members = self._input(self.ctx, operation, input_document, encoding)
        else:
            with self._contexts.borrow() as ctx:
                members = self._input(ctx, operation, input_document, encoding)
        # Input is validated first, so a client learns of bad input even before a handler exists.
        handler = self.registrations.rpcs.get(operation.schema_path)
        if handler is None:
            raise refuse("operation-not-supported", f"no handler serves {path}", path)
        try:
            output = handler(principal, members)
        except CatsError:
            raise
        except Exception as exc:
            LOG.exception("the handler of %s failed", path)
            raise operation_failed(f"the handler of {path} failed", path) from exc
        try:
            return self._output(operation, output, encoding)
        except CatsError as exc:  # the server's fault, not the client's (RFC 7950 7.14.3)
            LOG.error("the handler of %s returned invalid output: %s", path, exc)
            raise operation_failed(f"the handler of {path} returned invalid output", path) from exc

    def _input(
        self, ctx: Any, operation: rpc.Operation, document: str, encoding: Encoding
    ) -> dict[str, object]:
        """The validated input members, parsed in ``ctx`` (the core's own context when the
        validation reads running, whose tree lives there; a twin otherwise)."""
        tree, op = rpc.parse_input(ctx, operation, document, encoding)
        try:
            if operation.input_reads_running:
                with self._lock:
                    rpc.validate_input(ctx, tree, self.running.first[0])
            else:
                rpc.validate_input(ctx, tree, None)
            return rpc.members_of(op, operation)
        finally:
            nodes.free_all(tree)

    def _output(
        self, operation: rpc.Operation, output: dict[str, object], encoding: Encoding
    ) -> str:
        if operation.output_reads_running:
            return self._reply(self.ctx, operation, output, encoding)
        with self._contexts.borrow() as ctx:
            return self._reply(ctx, operation, output, encoding)

    def _reply(
        self, ctx: Any, operation: rpc.Operation, output: dict[str, object], encoding: Encoding
    ) -> str:
        tree, op = rpc.parse_output(ctx, operation, output)
        try:
            if operation.output_reads_running:
                with self._lock:
                    rpc.validate_output(ctx, tree, self.running.first[0])
            else:
                rpc.validate_output(ctx, tree, None)
            return rpc.print_output(op, operation, encoding)
        finally:
            nodes.free_all(tree)

    def _operation(self, path: DataPath) -> rpc.Operation:
        """The operation at a path; RPCs are resolved once (their paths are a fixed set)."""
        found = self._operations.get(path)
        if found is None:
            found = rpc.resolve(self.ctx, path)
            if found.is_rpc:
                self._operations[path] = found
        return found


__all__ = ["Invoking"]
