"""``Controller``: the C-PS through RESTCONF or NETCONF, with pyangbind objects.

As small as ncclient's ``manager``: connect (:meth:`Controller.restconf`,
:meth:`Controller.netconf`), a few verbs (:meth:`~Controller.get`, :meth:`~Controller.edit`,
:meth:`~Controller.rpc`, :meth:`~Controller.commit`), one exception type
(:class:`~controller.sdk.errors.SdkError`). The named methods are the operations people
script: the tables and decisions of service-metrics-op 6.2, its selection policy, the reports
(8) and select-service, and the agent-session exchanges of the agent draft (9.1, MSG-1..MSG-16).

Bulk: pyangbind builds each list entry in tens of milliseconds (it creates a class per leaf and
compiles its patterns), so a 1,000-entry report built as objects takes about a minute against a
few milliseconds as dicts, some 10,000 times slower (``python -m tools.bench.sdk``). The fast
path for bulk reports is :meth:`Controller.report_service_metrics_bulk` and
:meth:`Controller.report_network_metrics_bulk`, which take RFC 7951 members as they are (build
them with :mod:`controller.sdk.bulk`, as fast as dicts), and :meth:`Controller.get_members` for
large reads; the server validates them all the same.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

from controller.sdk import objects
from controller.sdk.errors import SdkError, not_of_schema
from controller.sdk.netconf import NetconfTransport
from controller.sdk.objects import AS, SM, Binding
from controller.sdk.restconf import RestconfTransport
from controller.types import Json


class Transport(Protocol):
    """What the client needs of a protocol: objects in, objects out, SdkError on refusal."""

    def read(self, obj: Binding, *, config_only: bool) -> Binding:
        """Fill an empty top-level container from the server."""
        ...

    def read_members(self, module: str, name: str, *, config_only: bool) -> Json:
        """A top-level container as RFC 7951 members."""
        ...

    def edit(self, obj: Binding, *, replace: bool, candidate: bool) -> None:
        """Merge or replace a node where it sits."""
        ...

    def delete(self, obj: Binding, *, candidate: bool) -> None:
        """Delete a node where it sits."""
        ...

    def invoke(self, module: str, operation: str, request: Binding, output: Binding | None) -> None:
        """Call an RPC with an input object, fill the output object (if it has one)."""
        ...

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        """Call an RPC with RFC 7951 input members, return the output members."""
        ...

    def commit(self, *, confirm_timeout: int | None = None) -> None:
        """Commit the candidate (NETCONF)."""
        ...

    def discard_changes(self) -> None:
        """Discard the candidate (NETCONF)."""
        ...

    def close(self) -> None:
        """End the session."""
        ...


class Controller:
    """A session with a C-PS (``catsctl serve``); ``with`` closes it."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    @classmethod
    def restconf(  # noqa: PLR0913 - the login's parts, keyword-only
        cls,
        url: str,
        user: str | None = None,
        password: str | None = None,
        *,
        cert: str | tuple[str, str] | None = None,
        verify: bool | str = True,
        timeout: float = 30.0,
    ) -> Controller:
        """RESTCONF at ``url`` (``http://127.0.0.1:8080/restconf``): HTTP basic auth with
        ``user`` and ``password``, or a TLS client certificate ``cert`` (file, or cert and key);
        ``verify`` is requests' (a CA bundle path, or False for a test server)."""
        auth = (user, password or "") if user is not None else None
        return cls(RestconfTransport(url, auth, cert=cert, verify=verify, timeout=timeout))

    @classmethod
    def netconf(  # noqa: PLR0913 - the login's parts, keyword-only
        cls,
        host: str,
        port: int = 830,
        user: str = "",
        *,
        key: str | None = None,
        password: str | None = None,
        known_hosts: str | None = None,
        timeout: float = 30.0,
    ) -> Controller:
        """NETCONF over SSH to ``host:port`` as ``user`` with a private ``key`` file or a
        ``password``. The host key is checked against ``known_hosts`` when given, not otherwise
        (a lab or loopback C-PS, as the README's ncclient lines do)."""
        transport = NetconfTransport(
            host, port, user, key=key, password=password, known_hosts=known_hosts, timeout=timeout
        )
        return cls(transport)

    def __enter__(self) -> Controller:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the session."""
        self._transport.close()

    # ------------------------------------------------------------------ any subtree

    def get(self, module: str, name: str, *, config_only: bool = False) -> Binding:
        """The top-level container ``module:name`` as a pyangbind object (config and state, or
        configuration only); empty when the server holds none of it."""
        return self._transport.read(objects.top(module, name), config_only=config_only)

    def get_members(self, module: str, name: str, *, config_only: bool = False) -> Json:
        """The fast path of :meth:`get`: the container as RFC 7951 members, no objects (a CST
        of 1,000 entries read as objects takes minutes; as members, milliseconds)."""
        return self._transport.read_members(module, name, config_only=config_only)

    def edit(self, obj: Binding, *, replace: bool = False, candidate: bool = False) -> None:
        """Write a node, where it sits in its top-level container (any container or list
        entry of the object tree): merge what was set in it, or ``replace`` the node with it;
        into running, or the ``candidate`` (NETCONF, then :meth:`commit`)."""
        self._transport.edit(obj, replace=replace, candidate=candidate)

    def delete(self, obj: Binding, *, candidate: bool = False) -> None:
        """Delete a node (a container, or a list entry by its keys, as ``obj`` names it):
        ``cps.delete(policy.service_policy["ARS"])``."""
        self._transport.delete(obj, candidate=candidate)

    def commit(self, *, confirm_timeout: int | None = None) -> None:
        """Commit the candidate (NETCONF); confirmed when ``confirm_timeout`` (s) is given, then
        rolled back by the server unless a plain :meth:`commit` follows in time."""
        self._transport.commit(confirm_timeout=confirm_timeout)

    def discard_changes(self) -> None:
        """Drop the candidate's uncommitted changes (NETCONF)."""
        self._transport.discard_changes()

    def new_input(self, module: str, operation: str) -> Binding:
        """An empty input object of ``module:operation``, to fill and pass to :meth:`rpc`."""
        return objects.operation(module, operation).input

    def rpc(self, module: str, operation: str, request: Binding | None = None) -> Binding | None:
        """Call ``module:operation`` with its input object; its output object (None for an
        RPC that has no output)."""
        call = objects.operation(module, operation)
        if request is None:
            request = call.input
        elif request._yang_name != "input" or request._parent._yang_name != operation:
            raise not_of_schema(f"input of {module}:{operation}", TypeError(request._path()))
        answer = objects.output(call)
        self._transport.invoke(module, operation, request, answer)
        return answer

    def rpc_members(self, module: str, operation: str, members: Json) -> Json:
        """The fast path of :meth:`rpc`: RFC 7951 input members as built, the output as
        members (``{}`` when the RPC has none); no objects are made."""
        return self._transport.invoke_members(module, operation, members)

    # ------------------------------------------------------------------ service metrics

    def computing_service_table(self) -> Binding:
        """The CST (service-metrics-op 6.2.1), its entries with age, source and expiry."""
        return self.get(SM, "computing-service-table")

    def network_service_table(self) -> Binding:
        """The NST (service-metrics-op 6.2.2)."""
        return self.get(SM, "network-service-table")

    def selection_decisions(self) -> Binding:
        """The kept decision records, each candidate with its rank, score or exclusion."""
        return self.get(SM, "selection-decisions")

    def selection_policy(self) -> Binding:
        """The configured selection policy (service-metrics-op 6.2.3, 6.2.4)."""
        return self.get(SM, "selection-policy", config_only=True)

    def set_selection_policy(
        self, policy: Binding, *, replace: bool = False, candidate: bool = False
    ) -> None:
        """Merge (or replace) the selection policy."""
        if policy._yang_name != "selection-policy":
            raise SdkError(*not_of_schema("selection-policy", TypeError(policy._path())).items)
        self.edit(policy, replace=replace, candidate=candidate)

    def report_service_metrics(self, report: Binding) -> Binding:
        """A C-SMA's report (service-metrics-op 8); the output lists refused entries."""
        return self.rpc(SM, "report-service-metrics", report)

    def report_network_metrics(self, report: Binding) -> Binding:
        """A C-NMA's report of NST entries (service-metrics-op 8)."""
        return self.rpc(SM, "report-network-metrics", report)

    def report_service_metrics_bulk(self, members: Json) -> Json:
        """The fast path of :meth:`report_service_metrics`: RFC 7951 input members as built
        (:func:`controller.sdk.bulk.service_report`), the output as members."""
        return self.rpc_members(SM, "report-service-metrics", members)

    def report_network_metrics_bulk(self, members: Json) -> Json:
        """The fast path of :meth:`report_network_metrics` (members as built)."""
        return self.rpc_members(SM, "report-network-metrics", members)

    def select_service(
        self, cs_id: str, ingress: str, *, candidate_report: str | None = None
    ) -> Binding:
        """select-service for ``cs_id`` at ``ingress``: the selected CSCI-ID, the fallback level
        and, with ``candidate_report`` (``all``, ``examined``), every candidate's outcome."""
        request = self.new_input(SM, "select-service")
        request.cs_id = cs_id
        request.ingress = ingress
        if candidate_report is not None:
            request.candidate_report = candidate_report
        return self.rpc(SM, "select-service", request)

    # ------------------------------------------------------------------ agent sessions

    def agent_sessions(self) -> Binding:
        """``agent-selection`` with its sessions, decision records, commitments and handoffs."""
        return self.get(AS, "agent-selection")

    def submit_descriptor(self, request: Binding) -> Binding:
        """MSG-1: a session's descriptor; the output carries the admission decision."""
        return self.rpc(AS, "submit-descriptor", request)

    def step_boundary(self, request: Binding) -> Binding:
        """MSG-2: a step starts (decision point, keep / hold / move)."""
        return self.rpc(AS, "step-boundary", request)

    def invalidation_notice(self, request: Binding) -> Binding:
        """MSG-14: a tool call ran over, or state was invalidated (a tail event)."""
        return self.rpc(AS, "invalidation-notice", request)

    def state_transfer_notice(self, request: Binding) -> Binding:
        """MSG-13: a state transfer between instances was done or failed."""
        return self.rpc(AS, "state-transfer-notice", request)

    def accounting_feedback(self, request: Binding) -> Binding:
        """MSG-15: the observed costs of a step."""
        return self.rpc(AS, "accounting-feedback", request)

    def close_session(self, request: Binding) -> Binding:
        """MSG-16: the session ends; its state is released and its rules removed."""
        return self.rpc(AS, "close-session", request)
