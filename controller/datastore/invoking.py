"""RPCs of the server core (RFC 7950 7.14, RFC 6241 4.2, RFC 8040 3.6): input validated, the
registered handler run, its output validated.

Parsing and printing read only the schema and the operation's own trees, so they run outside
the core's read lock, in a twin context when the operation's validation reads no running
(:mod:`.contexts`): concurrent invocations parse and validate in parallel.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from controller.datastore import rpc
from controller.datastore.api import Principal
from controller.datastore.errors import operation_failed, refuse
from controller.datastore.parts import CoreParts
from controller.errors import CatsError
from controller.model import nodes
from controller.model.nodes import Node
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
        if operation.input_reads_running:  # parsed in the core's context, whose tree it reads
            members = rpc.input_members(
                self.ctx, operation, input_document, encoding, self._running_tree
            )
        else:
            with self._contexts.borrow() as ctx:
                members = rpc.input_members(ctx, operation, input_document, encoding, None)
        output = self._handled(operation, principal, members)
        return self._output(operation, output, encoding)

    def run_validated(
        self, path: DataPath, members: dict[str, object], principal: Principal
    ) -> dict[str, object]:
        """The handler's output for input already validated elsewhere: by a RESTCONF worker
        process (:mod:`controller.restconf.workers`), in its own context, for an RPC whose
        input and output validation read no running (:attr:`rpc.Operation.parallel`). Access
        control is checked here, as for :meth:`invoke`; the caller validates the output."""
        nodes.clean_errors(self.ctx)
        operation = self._operation(path)
        if not operation.parallel:
            raise refuse("operation-not-supported", f"{path} is validated by the core", path)
        self.authorization.operation(principal, operation)
        return self._handled(operation, principal, members)

    def _handled(
        self, operation: rpc.Operation, principal: Principal, members: dict[str, object]
    ) -> dict[str, object]:
        """Run the operation's registered handler on its validated input."""
        path = operation.path
        # Input is validated first, so a client learns of bad input even before a handler exists.
        handler = self.registrations.rpcs.get(operation.schema_path)
        if handler is None:
            raise refuse("operation-not-supported", f"no handler serves {path}", path)
        try:
            return handler(principal, members)
        except CatsError:
            raise
        except Exception as exc:
            LOG.exception("the handler of %s failed", path)
            raise operation_failed(f"the handler of {path} failed", path) from exc

    def _output(
        self, operation: rpc.Operation, output: dict[str, object], encoding: Encoding
    ) -> str:
        if operation.output_reads_running:
            return rpc.output_document(self.ctx, operation, output, encoding, self._running_tree)
        with self._contexts.borrow() as ctx:
            return rpc.output_document(ctx, operation, output, encoding, None)

    @contextmanager
    def _running_tree(self) -> Iterator[Node]:
        """Running's tree, under the core's lock."""
        with self._lock:
            yield self.running.first[0]

    def _operation(self, path: DataPath) -> rpc.Operation:
        """The operation at a path; RPCs are resolved once (their paths are a fixed set)."""
        found = self._operations.get(path)
        if found is None:
            found = rpc.resolve(self.ctx, path)
            if found.is_rpc:
                self._operations[path] = found
        return found


__all__ = ["Invoking"]
