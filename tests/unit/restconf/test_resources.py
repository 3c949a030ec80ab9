"""The resource tree over a fake core (a ``ServerCore`` seam): operations and error mapping."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    Notification,
    Principal,
    ReadRequest,
    ReadResult,
    Revision,
    StreamInfo,
    Subscription,
)
from controller.datastore.errors import refuse
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Encoding
from controller.model.paths import PathResolver
from controller.restconf.http import HttpRequest
from controller.restconf.resources import Restconf, ServerInfo

REV = Revision("r1", datetime(2026, 11, 30, tzinfo=UTC))
JSON = {"content-type": "application/yang-data+json"}


class FakeCore:
    """Answers reads with one document, records edits, echoes RPC input, refuses on demand."""

    def __init__(self, output: str = "", refusal: str | None = None) -> None:
        self.output = output
        self.refusal = refusal
        self.edits: list[Edit] = []

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        del principal
        return ReadResult('{"rc-test:name": "n"}' if request.path else "{}", REV)

    def revision(self, datastore: DatastoreName, path: str | None) -> Revision:
        del datastore, path
        return REV

    def consistent(self, datastore: DatastoreName) -> None:
        del datastore  # no cluster

    def edit(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
        test_only: bool = False,
    ) -> Revision:
        del datastore, principal, session, test_only
        if self.refusal:
            raise refuse(self.refusal, "refused", "/rc-test:top")
        self.edits += edits
        return REV

    def invoke(
        self, path: str, input_document: str, encoding: Encoding, principal: Principal
    ) -> str:
        del path, input_document, encoding, principal
        return self.output

    def lock(self, datastore: DatastoreName, session: str) -> None: ...

    def unlock(self, datastore: DatastoreName, session: str) -> None: ...

    def release_session(self, session: str) -> None: ...

    def commit(self, principal: Principal, *, session: str | None = None) -> Revision:
        raise NotImplementedError

    def discard_changes(self, *, session: str | None = None) -> None: ...

    def validate(self, datastore: DatastoreName) -> None: ...

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        raise NotImplementedError

    def restore(self, datastore: DatastoreName, document: str, encoding: Encoding) -> Revision:
        raise NotImplementedError

    def lock_holders(self) -> dict[DatastoreName, str]:
        return {}

    def subscribe(
        self,
        stream: str,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
        principal: Principal = SYSTEM,
    ) -> Subscription:
        raise NotImplementedError

    def authorize(self, principal: Principal, module: str, name: str) -> None:
        """Everything is permitted here (NACM is the core's, tested there)."""

    def watch_accounts(self, watcher: Callable[[frozenset[str]], None]) -> None: ...

    def reveal(self, secret: str) -> str:
        return secret

    def publish(self, stream: str, document: str) -> Notification:
        raise NotImplementedError

    def keep(self, name: str, document: str | None) -> None: ...

    def kept(self, name: str) -> str | None:
        return None

    def streams(self) -> tuple[StreamInfo, ...]:
        return (StreamInfo("NETCONF", "default NETCONF event stream", replay_support=True),)


def _restconf(resolver: PathResolver, core: FakeCore) -> Restconf:
    info = ServerInfo("2019-01-04", "test", REV.last_modified)
    return Restconf(core, resolver, info, _no_xml)


def _no_xml(document: str) -> str:
    raise AssertionError(f"no XML conversion expected: {document}")


def test_rpc_output_and_no_output(resolver: PathResolver) -> None:
    output = '{"rc-test:output": {"echo": "hi"}}'
    request = HttpRequest("POST", "/restconf/operations/rc-test:ping", headers=JSON, body=b"{}")
    reply = _restconf(resolver, FakeCore(output)).handle(request)
    assert reply.status == 200
    assert json.loads(reply.body) == {"rc-test:output": {"echo": "hi"}}
    assert _restconf(resolver, FakeCore("")).handle(request).status == 204


def test_core_errors_map_to_status(resolver: PathResolver) -> None:
    body = b'{"rc-test:name": "x"}'
    for tag, status in (("lock-denied", 409), ("access-denied", 403), ("in-use", 409)):
        core = FakeCore(refusal=tag)
        request = HttpRequest("PUT", "/restconf/data/rc-test:top/name", headers=JSON, body=body)
        reply = _restconf(resolver, core).handle(request)
        assert reply.status == status
        error = json.loads(reply.body)["ietf-restconf:errors"]["error"][0]
        assert error["error-tag"] == tag
        assert error["error-path"] == "/rc-test:top"


def test_unexpected_exception_is_operation_failed(resolver: PathResolver) -> None:
    class Broken(FakeCore):
        def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
            raise RuntimeError("bug")

    reply = _restconf(resolver, Broken()).handle(HttpRequest("GET", "/restconf/data/rc-test:top"))
    assert reply.status == 500
    assert json.loads(reply.body)["ietf-restconf:errors"]["error"][0]["error-tag"] == (
        "operation-failed"
    )


def test_edit_reaches_the_core_with_the_data_path(resolver: PathResolver) -> None:
    core = FakeCore()
    body = b'{"rc-test:hop": [{"name": "h"}]}'
    request = HttpRequest(
        "POST", "/restconf/data/rc-test:top", "insert=first", headers=JSON, body=body
    )
    reply = _restconf(resolver, core).handle(request)
    assert reply.status == 201
    assert reply.header("Location") == "/restconf/data/rc-test:top/hop=h"
    (edit,) = core.edits
    assert edit.path == "/rc-test:top/hop[name='h']"
    assert edit.where is not None


def test_invocation_is_a_well_formed_post_of_an_rpc(resolver: PathResolver) -> None:
    """What a RESTCONF worker may have run elsewhere (Restconf.invocation); everything else
    is None, so that ``handle`` answers it, errors included."""
    restconf = _restconf(resolver, FakeCore())
    ping = "/restconf/operations/rc-test:ping"
    call = restconf.invocation(HttpRequest("POST", ping, headers=JSON, body=b"{}"))
    assert call is not None
    assert (call.data_path, call.document, call.encoding) == ("/rc-test:ping", "{}", Encoding.JSON)
    via_data = restconf.invocation(HttpRequest("POST", "/restconf/data/rc-test:ping"))
    assert via_data is not None
    assert via_data.document == "{}"
    for refused in (
        HttpRequest("GET", ping),
        HttpRequest("OPTIONS", ping),
        HttpRequest("POST", ping, "depth=1", headers=JSON, body=b"{}"),
        HttpRequest("POST", ping, headers=JSON, body=b'{"a": 1, "a": 2}'),  # a name twice
        HttpRequest("POST", "/restconf/operations/rc-test:nothing", headers=JSON, body=b"{}"),
        HttpRequest("POST", "/restconf/data/rc-test:top", headers=JSON, body=b"{}"),
        HttpRequest("POST", "/restconf/operations", headers=JSON, body=b"{}"),
        HttpRequest("POST", "/elsewhere/operations/rc-test:ping", headers=JSON, body=b"{}"),
    ):
        assert restconf.invocation(refused) is None, refused


def test_invoked_answers_as_handle_does(resolver: PathResolver) -> None:
    """An invocation run elsewhere gets the reply ``handle`` would give: its output, 204
    without one, the status of its error (501 for a modelled RPC nobody serves)."""
    restconf = _restconf(resolver, FakeCore())
    request = HttpRequest("POST", "/restconf/operations/rc-test:ping", headers=JSON, body=b"{}")
    call = restconf.invocation(request)
    assert call is not None
    output = '{"rc-test:output": {"echo": "hi"}}'
    reply = restconf.invoked(request, call, lambda: output)
    assert (reply.status, json.loads(reply.body)) == (200, json.loads(output))
    assert restconf.invoked(request, call, lambda: "").status == 204

    def refused(tag: str) -> Callable[[], str]:
        def invoke() -> str:
            raise CatsError(ErrorItem(ErrorType.PROTOCOL, tag, tag))

        return invoke

    assert restconf.invoked(request, call, refused("access-denied")).status == 403
    assert restconf.invoked(request, call, refused("operation-not-supported")).status == 501
