"""RFC 6241 operations over the server core: one ``<rpc>`` operation element in, reply out.

Base operations (7, 8.3-8.6), RFC 8526 get-data and edit-data, RFC 6022 get-schema and RFC
5277 create-subscription are served here; any other operation of a loaded module is a
modelled RPC and goes to the handler RESTCONF uses, through ``core.invoke``.
"""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from controller import audit
from controller.audit import Event
from controller.datastore.api import (
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    ServerCore,
)
from controller.errors import ErrorType
from controller.model import Encoding
from controller.model.paths import ROOT, NodeKind
from controller.netconf.apply import ErrorOption, apply_edits, missing_ancestors
from controller.netconf.confirmed import CommitParams, ConfirmedCommits
from controller.netconf.edits import ConfigEdits, SchemaLookup
from controller.netconf.errors import bad_element, netconf_error
from controller.netconf.messages import BASE_NS, NC, parse_output
from controller.netconf.monitoring import MONITORING_NS, SchemaSources
from controller.netconf.nmda import NMDA_NS, Nmda
from controller.netconf.notifications import NOTIFICATION_NS, SubscriptionRequest
from controller.netconf.outcome import Caller, Outcome, child_text, raw_data, with_defaults_of
from controller.netconf.reads import Reads, parse_filter
from controller.netconf.sessions import Registry
from controller.types import DataPath, Element

_DATASTORES = {name.value: name for name in DatastoreName if name is not DatastoreName.OPERATIONAL}
_DEFAULT_OPS = {"merge": EditOperation.MERGE, "replace": EditOperation.REPLACE, "none": None}
_ERROR_OPTIONS = tuple(option.value for option in ErrorOption)
YANG_NS = "urn:ietf:params:xml:ns:yang:1"
_TEST_OPTIONS = ("test-then-set", "set", "test-only")


def _choice(value: str | None, allowed: tuple[str, ...], name: str, default: str) -> str:
    if value is None:
        return default
    if value not in allowed:
        raise netconf_error(
            "invalid-value",
            f"{name} {value!r} is not one of {', '.join(allowed)}",
            info=(("bad-element", name),),
        )
    return value


def datastore_of(operation: Element, name: str) -> DatastoreName:
    """The datastore a ``<source>`` or ``<target>`` names (``<url>`` is not served)."""
    holder = operation.find(NC + name)
    if holder is None:
        raise bad_element("missing-element", name, f"{name} is required")
    chosen = [child for child in holder if isinstance(child.tag, str)]
    if len(chosen) != 1:
        raise bad_element("missing-element", name, f"{name} names one datastore")
    qname = etree.QName(chosen[0])
    if qname.namespace == BASE_NS and qname.localname == "url":
        raise netconf_error("operation-not-supported", ":url is not served")
    if qname.namespace != BASE_NS or qname.localname not in _DATASTORES:
        raise bad_element("invalid-value", qname.localname, f"no datastore {qname.localname!r}")
    return _DATASTORES[qname.localname]


class Operations:
    """The operations of one server; shared by every session (thread-safe)."""

    def __init__(  # noqa: PLR0913, PLR0917 - the composition of the operations' collaborators
        self,
        core: ServerCore,
        lookup: SchemaLookup,
        registry: Registry,
        confirmed: ConfirmedCommits,
        sources: SchemaSources,
        kill: Callable[[int, int], bool],
    ) -> None:
        self._core = core
        self._lookup = lookup
        self._registry = registry
        self._confirmed = confirmed
        self._sources = sources
        self._kill = kill
        self._reads = Reads(core, lookup)
        self._config = ConfigEdits(lookup)
        self._nmda = Nmda(core, self._reads, self._config)
        base: dict[str, Callable[[Caller, Element], Outcome]] = {
            "get": self._get,
            "get-config": self._get_config,
            "edit-config": self._edit_config,
            "copy-config": self._copy_config,
            "delete-config": self._delete_config,
            "lock": self._lock,
            "unlock": self._unlock,
            "close-session": self._close_session,
            "kill-session": self._kill_session,
            "validate": self._validate,
            "commit": self._commit,
            "discard-changes": self._discard_changes,
            "cancel-commit": self._cancel_commit,
        }
        self._handlers = {f"{{{BASE_NS}}}{name}": handler for name, handler in base.items()}
        self._names = {f"{{{BASE_NS}}}{name}": ("ietf-netconf", name) for name in base}
        self._handlers[f"{{{NMDA_NS}}}get-data"] = self._nmda.get_data
        self._handlers[f"{{{NMDA_NS}}}edit-data"] = self._nmda.edit_data
        self._handlers[f"{{{MONITORING_NS}}}get-schema"] = self._get_schema
        self._handlers[f"{{{NOTIFICATION_NS}}}create-subscription"] = self._create_subscription
        self._handlers[f"{{{YANG_NS}}}action"] = self._action  # checked by the core
        self._names[f"{{{NMDA_NS}}}get-data"] = ("ietf-netconf-nmda", "get-data")
        self._names[f"{{{NMDA_NS}}}edit-data"] = ("ietf-netconf-nmda", "edit-data")
        self._names[f"{{{MONITORING_NS}}}get-schema"] = ("ietf-netconf-monitoring", "get-schema")
        self._names[f"{{{NOTIFICATION_NS}}}create-subscription"] = (
            "notifications",
            "create-subscription",
        )

    def dispatch(self, caller: Caller, operation: Element) -> Outcome:
        """Run one operation.

        Raises:
            CatsError: its items are the rpc-errors of the reply.
        """
        handler = self._handlers.get(operation.tag)
        if handler is not None:
            name = self._names.get(operation.tag)
            if name is not None:  # RFC 8341 3.4.4; modelled RPCs and actions: in the core
                self._core.authorize(caller.principal, *name)
            return handler(caller, operation)
        return self._modelled(caller, operation)

    # ---------------------------------------------------------------- reads

    def _get(self, caller: Caller, operation: Element) -> Outcome:
        return self._read(caller, operation, DatastoreName.OPERATIONAL, Content.ALL)

    def _get_config(self, caller: Caller, operation: Element) -> Outcome:
        return self._read(caller, operation, datastore_of(operation, "source"), Content.CONFIG)

    def _read(
        self, caller: Caller, operation: Element, datastore: DatastoreName, content: Content
    ) -> Outcome:
        filter_ = parse_filter(operation.find(NC + "filter"))
        with_defaults = with_defaults_of(operation)
        self._core.consistent(datastore)  # a cluster: this replica has every commit (cluster.md)
        raw = self._reads.read_raw(
            datastore,
            caller.principal,
            content=content,
            filter_=filter_,
            with_defaults=with_defaults,
        )
        if raw is not None:  # spliced into the reply as printed (no parse, no re-serialize)
            return raw_data(raw)
        elements = self._reads.read(
            datastore,
            caller.principal,
            content=content,
            filter_=filter_,
            with_defaults=with_defaults,
        )
        return Outcome((_data(elements),))

    # ---------------------------------------------------------------- edits

    def _edit_config(self, caller: Caller, operation: Element) -> Outcome:
        target = datastore_of(operation, "target")
        default = _choice(
            child_text(operation, "default-operation"),
            tuple(_DEFAULT_OPS),
            "default-operation",
            "merge",
        )
        test = _choice(child_text(operation, "test-option"), _TEST_OPTIONS, "test-option", "set")
        on_error = _choice(
            child_text(operation, "error-option"), _ERROR_OPTIONS, "error-option", "stop-on-error"
        )
        config = operation.find(NC + "config")
        if config is None:
            if operation.find(NC + "url") is not None:
                raise netconf_error("operation-not-supported", ":url is not served")
            raise bad_element("missing-element", "config", "edit-config needs config")
        edits = self._config.edits(config, _DEFAULT_OPS[default])
        self._core.consistent(target)  # a cluster: from every commit acknowledged before it
        if default == "none":
            levels = self._config.levels(config)
            missing_ancestors(self._core, target, edits, caller.principal, levels)
        if not edits:
            return Outcome()
        apply_edits(
            self._core,
            target,
            edits,
            caller.principal,
            session=caller.session,
            on_error=ErrorOption(on_error),
            test_only=test == "test-only",
        )
        return Outcome()

    def _copy_config(self, caller: Caller, operation: Element) -> Outcome:
        target = datastore_of(operation, "target")
        source_holder = operation.find(NC + "source")
        inline = source_holder.find(NC + "config") if source_holder is not None else None
        self._core.consistent(target)  # a cluster: from every commit acknowledged before it
        if inline is None:
            source = datastore_of(operation, "source")
            if source is DatastoreName.RUNNING:
                self._core.consistent(source)  # what the cluster has, not this copy's past
            self._core.copy_config(source, target, caller.principal, session=caller.session)
            return Outcome()
        edits = self._config.edits(inline, EditOperation.REPLACE)
        self._core.edit(target, edits, caller.principal, session=caller.session)
        return Outcome()

    def _delete_config(self, caller: Caller, operation: Element) -> Outcome:
        target = datastore_of(operation, "target")
        if target is not DatastoreName.STARTUP:
            raise bad_element(
                "operation-not-supported", target.value, "only startup can be deleted"
            )
        remove = Edit(EditOperation.REMOVE, ROOT)
        self._core.edit(target, [remove], caller.principal, session=caller.session)
        return Outcome()

    # ---------------------------------------------------------------- locks and sessions

    def _lock(self, caller: Caller, operation: Element) -> Outcome:
        target = datastore_of(operation, "target")
        if target is DatastoreName.RUNNING and self._confirmed.pending:
            raise netconf_error(
                "lock-denied", "a confirmed commit is in progress", info=(("session-id", "0"),)
            )
        self._core.lock(target, caller.session)
        self._registry.locked(target, caller.session)
        audit.record(Event.LOCK, caller.user, detail=f"{target} locked")
        return Outcome()

    def _unlock(self, caller: Caller, operation: Element) -> Outcome:
        target = datastore_of(operation, "target")
        self._core.unlock(target, caller.session)
        self._registry.unlocked(target, caller.session)
        audit.record(Event.UNLOCK, caller.user, detail=f"{target} unlocked")
        return Outcome()

    def _close_session(self, caller: Caller, operation: Element) -> Outcome:
        del caller, operation
        return Outcome(close=True)

    def _kill_session(self, caller: Caller, operation: Element) -> Outcome:
        raw = child_text(operation, "session-id")
        if raw is None:
            raise bad_element("missing-element", "session-id", "kill-session needs session-id")
        if not raw.isdigit():
            raise bad_element("bad-element", "session-id", f"{raw!r} is not a session-id")
        if int(raw) == caller.session_id or int(raw) == 0:
            raise bad_element("invalid-value", "session-id", f"cannot kill session {raw!r}")
        if not self._kill(int(raw), caller.session_id):  # here, or on another replica
            raise bad_element("invalid-value", "session-id", f"no session {raw}")
        return Outcome()

    # ---------------------------------------------------------------- candidate

    def _validate(self, caller: Caller, operation: Element) -> Outcome:
        source_holder = operation.find(NC + "source")
        inline = source_holder.find(NC + "config") if source_holder is not None else None
        if inline is None:
            self._core.validate(datastore_of(operation, "source"))
            return Outcome()
        edits = self._config.edits(inline, EditOperation.REPLACE)
        self._core.edit(
            DatastoreName.RUNNING, edits, caller.principal, session=caller.session, test_only=True
        )
        return Outcome()

    def _commit(self, caller: Caller, operation: Element) -> Outcome:
        raw_timeout = child_text(operation, "confirm-timeout")
        if raw_timeout is not None and not raw_timeout.isdigit():
            raise bad_element("bad-element", "confirm-timeout", f"{raw_timeout!r} is no uint32")
        if raw_timeout is not None and int(raw_timeout) == 0:
            raise bad_element("invalid-value", "confirm-timeout", "a timeout is 1 or more s")
        params = CommitParams(
            confirmed=operation.find(NC + "confirmed") is not None,
            timeout=int(raw_timeout) if raw_timeout else CommitParams().timeout,
            persist=child_text(operation, "persist"),
            persist_id=child_text(operation, "persist-id"),
        )
        self._core.consistent(DatastoreName.RUNNING)  # a cluster: the commits before it
        self._confirmed.commit(caller.actor, caller.principal, params)
        return Outcome()

    def _discard_changes(self, caller: Caller, operation: Element) -> Outcome:
        del operation
        self._core.discard_changes(session=caller.session)
        return Outcome()

    def _cancel_commit(self, caller: Caller, operation: Element) -> Outcome:
        self._confirmed.cancel(caller.actor, child_text(operation, "persist-id"))
        return Outcome()

    # ---------------------------------------------------------------- other modules

    def _get_schema(self, caller: Caller, operation: Element) -> Outcome:
        del caller
        identifier = child_text(operation, "identifier", MONITORING_NS)
        if not identifier:
            raise bad_element("missing-element", "identifier", "get-schema needs identifier")
        text = self._sources.text(
            identifier,
            child_text(operation, "version", MONITORING_NS),
            _schema_format(operation.find(f"{{{MONITORING_NS}}}format")),
        )
        data = etree.Element(f"{{{MONITORING_NS}}}data", nsmap={None: MONITORING_NS})
        data.text = text
        return Outcome((data,))

    def _create_subscription(self, caller: Caller, operation: Element) -> Outcome:
        caller.subscribe(SubscriptionRequest.parse(operation, self._core.streams()))
        return Outcome()

    def _modelled(self, caller: Caller, operation: Element) -> Outcome:
        """An RPC of a loaded module (RFC 7950 7.14.2): the handler RESTCONF uses too."""
        qname = etree.QName(operation)
        module = self._lookup.module_of(qname.namespace or "")
        if module is None:
            raise netconf_error(
                "unknown-namespace" if qname.namespace else "unknown-element",
                f"no operation {qname.localname!r} in namespace {qname.namespace!r}",
                error_type=ErrorType.PROTOCOL,
                info=(("bad-element", qname.localname), ("bad-namespace", qname.namespace or "")),
            )
        node = self._lookup.child(None, module, qname.localname)
        if node is None or node.kind is not NodeKind.RPC or qname.namespace == BASE_NS:
            raise bad_element(
                "operation-not-supported", qname.localname, f"no operation {qname.localname!r}"
            )
        document = etree.tostring(operation).decode()
        path = DataPath(f"/{module}:{node.name}")
        output = self._core.invoke(path, document, Encoding.XML, caller.principal)
        return Outcome(tuple(parse_output(output, self._lookup.prefix_of)))

    def _action(self, caller: Caller, operation: Element) -> Outcome:
        """``<action>`` (RFC 7950 7.15.2): the handler RESTCONF uses too."""
        path, document = self._config.action(operation)
        output = self._core.invoke(path, document, Encoding.XML, caller.principal)
        return Outcome(tuple(parse_output(output, self._lookup.prefix_of)))


def _schema_format(element: Element | None) -> str:
    """get-schema's ``format``, an identityref of ietf-netconf-monitoring (RFC 6022 2.1.3):
    ``ncm:yin`` with ``ncm`` bound to its namespace, or the bare name; ``yang`` if absent."""
    if element is None:
        return "yang"
    text = (element.text or "").strip()
    prefix, colon, name = text.rpartition(":")
    if not colon:
        return name
    namespace = element.nsmap.get(prefix)
    if namespace == MONITORING_NS or prefix == "ietf-netconf-monitoring":
        return name
    return text  # refused by the sources as a format not served


def _data(elements: list[Element]) -> Element:
    data = etree.Element(NC + "data", nsmap={None: BASE_NS})
    for element in elements:
        data.append(element)
    return data
