"""The SDK over RESTCONF (RFC 8040): RFC 7951 JSON on one keep-alive ``requests`` session.

Reads are GET of a top-level container (``content=config`` for configuration only, RFC 8040
4.8.1), merges a PATCH of the datastore with the container (4.6.1: a plain PATCH merges and
creates what is missing), replaces a PUT (4.5), operations a POST (3.6, 4.4.2). HTTP basic
authentication, or a TLS client certificate (``cert``). Every refusal raises
:class:`~controller.sdk.errors.SdkError` with the reply's ``ietf-restconf:errors``.
"""

from __future__ import annotations

import json
from typing import Any

import requests

from controller.sdk import objects, paths
from controller.sdk.errors import SdkError, restconf_items, unreachable
from controller.sdk.objects import Binding
from controller.types import Json

YANG_JSON = "application/yang-data+json"
OK_MAX = 299
NOT_FOUND = 404


class RestconfTransport:
    """Requests to ``url`` (the RESTCONF root, ``http://127.0.0.1:8080/restconf``)."""

    def __init__(
        self,
        url: str,
        auth: tuple[str, str] | None,
        *,
        cert: str | tuple[str, str] | None = None,
        verify: bool | str = True,
        timeout: float = 30.0,
    ) -> None:
        self._url = url.rstrip("/")
        self._timeout = timeout
        self._session = requests.Session()
        self._session.auth = auth
        self._session.cert = cert
        self._verify = verify  # per request: a session's verify loses to REQUESTS_CA_BUNDLE
        self._session.headers.update({"Accept": YANG_JSON, "Content-Type": YANG_JSON})

    def _send(self, method: str, path: str, body: Json | None = None, **params: str) -> Any:
        url = f"{self._url}/{path}"
        data = json.dumps(body) if body is not None else None
        try:
            reply = self._session.request(
                method,
                url,
                data=data,
                params=params or None,
                timeout=self._timeout,
                verify=self._verify,
            )
        except requests.RequestException as exc:
            raise unreachable(url, exc) from exc
        if reply.status_code > OK_MAX:
            raise SdkError(
                *restconf_items(reply.status_code, reply.content), status=reply.status_code
            )
        return reply.json() if reply.content.strip() else {}

    def read_members(self, module: str, name: str, *, config_only: bool) -> Json:
        """GET a top-level container: its RFC 7951 members (``{}`` when there is none)."""
        try:
            body = self._send(
                "GET", f"data/{module}:{name}", content="config" if config_only else "all"
            )
        except SdkError as exc:
            if exc.status == NOT_FOUND:
                return {}
            raise
        members: Json = body.get(f"{module}:{name}", {})
        return members

    def read(self, obj: Binding, *, config_only: bool) -> Binding:
        """Fill ``obj`` (an empty top-level container) with the server's data; empty if none."""
        members = self.read_members(obj._defining_module, obj._yang_name, config_only=config_only)
        return objects.load_members(obj, members)

    def edit(self, obj: Binding, *, replace: bool, candidate: bool) -> None:
        """Merge a node into running (PATCH of the datastore with the node and its ancestors,
        which creates what is missing, RFC 8040 4.6.1), or replace it (PUT of its resource)."""
        if candidate:
            raise SdkError(*_no_candidate())
        path = paths.steps(obj)
        members = objects.to_members(obj)
        if replace:
            name = f"{path[-1].module}:{path[-1].name}"
            body = {name: [members] if path[-1].keys else members}
            self._send("PUT", f"data/{paths.resource(path)}", body)
        else:
            self._send("PATCH", "data", {"ietf-restconf:data": paths.nested(path, members)})

    def delete(self, obj: Binding, *, candidate: bool) -> None:
        """DELETE a node of running (a container, or a list entry by its keys)."""
        if candidate:
            raise SdkError(*_no_candidate())
        self._send("DELETE", f"data/{paths.resource(paths.steps(obj))}")

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        """POST an RPC input given as RFC 7951 members; the output members (``{}`` for none)."""
        body = self._send("POST", f"operations/{module}:{operation}", {f"{module}:input": members})
        output: Json = body.get(f"{module}:output", {})
        return output

    def invoke(self, module: str, operation: str, request: Binding, output: Binding | None) -> None:
        """POST the input object, fill ``output`` with the reply (if the RPC has one)."""
        members = self.invoke_members(module, operation, objects.to_members(request))
        if output is not None:
            objects.load_members(output, members)

    def commit(self, *, confirm_timeout: int | None = None) -> None:
        """RESTCONF edits running directly: there is no candidate to commit."""
        raise SdkError(*_no_candidate())

    def discard_changes(self) -> None:
        """RESTCONF has no candidate to discard."""
        raise SdkError(*_no_candidate())

    def close(self) -> None:
        """Close the HTTP session."""
        self._session.close()


def _no_candidate() -> tuple[Any, ...]:
    from controller.errors import ErrorItem, ErrorType  # noqa: PLC0415 - rare path

    message = "RESTCONF edits running directly; use Controller.netconf for the candidate"
    return (ErrorItem(ErrorType.PROTOCOL, "operation-not-supported", message),)
