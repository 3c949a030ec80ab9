"""The contract between the server core and the protocols that sit on it (RESTCONF, NETCONF).

Both northbounds speak to one :class:`ServerCore`: they name datastores, data paths and edit
operations in these terms, pass the authenticated :class:`Principal`, and render the
:class:`~controller.errors.ErrorItem` of any :class:`~controller.errors.CatsError` they get.
Documents cross this boundary as text in RFC 7951 JSON or XML, so no protocol walks a libyang
tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from controller.model import Encoding
from controller.types import DataPath, SchemaPath


class DatastoreName(StrEnum):
    """The NMDA datastores (RFC 8342 5), named as the ietf-datastores identities are."""

    RUNNING = "running"
    CANDIDATE = "candidate"
    STARTUP = "startup"
    OPERATIONAL = "operational"

    @property
    def identity(self) -> str:
        """``ietf-datastores:NAME``, as RFC 8527 and RFC 8526 write it."""
        return f"ietf-datastores:{self.value}"


class EditOperation(StrEnum):
    """Edit operations (RFC 6241 7.2 ``operation``; RFC 8072 2.5 ``edit-operation``)."""

    CREATE = "create"
    MERGE = "merge"
    REPLACE = "replace"
    DELETE = "delete"  # the target must exist
    REMOVE = "remove"  # no error when it does not
    INSERT = "insert"  # YANG Patch: create at a position of an ordered-by user list
    MOVE = "move"  # YANG Patch: move an existing ordered-by user entry


class InsertWhere(StrEnum):
    """Position of a new or moved entry of an ordered-by user list (RFC 8040 4.8.5)."""

    FIRST = "first"
    LAST = "last"
    BEFORE = "before"
    AFTER = "after"


class Content(StrEnum):
    """Which nodes a read returns (RFC 8040 4.8.1)."""

    CONFIG = "config"
    NONCONFIG = "nonconfig"
    ALL = "all"


class WithDefaults(StrEnum):
    """Default handling of a read (RFC 6243 3)."""

    REPORT_ALL = "report-all"
    REPORT_ALL_TAGGED = "report-all-tagged"
    TRIM = "trim"
    EXPLICIT = "explicit"


class Access(StrEnum):
    """What a request does to a node, as NACM (RFC 8341 3.2.2) distinguishes it."""

    READ = "read"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    EXEC = "exec"


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated user a request runs as.

    ``groups`` are the groups the transport reports for the user (RFC 8341 3.2.6 external
    groups, used when ``enable-external-groups`` is true); NACM adds those of
    ``nacm/groups`` itself. A ``recovery`` principal bypasses access control (RFC 8341 3.2).
    """

    user: str
    groups: tuple[str, ...] = ()
    recovery: bool = field(default=False, kw_only=True)


#: The principal of the server's own work (state providers, start-up seeding, tests' setup).
SYSTEM = Principal("system")

#: error-app-tag of a configuration write refused because the cluster's store (etcd) has no
#: quorum (``resource-denied``; RESTCONF answers 503, docs/cluster.md).
CLUSTER_UNAVAILABLE = "cluster-unavailable"
#: error-app-tag of a read of running refused because this replica could not apply the
#: cluster's latest commits in time (``resource-denied``; RESTCONF answers 503).
CLUSTER_READ_TIMEOUT = "cluster-read-timeout"


@dataclass(frozen=True, slots=True)
class Edit:
    """One edit of a datastore.

    ``path`` is the data path of the target node (``/module:node/list[key='v']``, the libyang
    form; ``/`` for the datastore root). ``value`` is the target node itself as an instance
    document in ``encoding`` (RFC 8040 4.4: the body of a PUT or a YANG Patch ``value``), or
    None for delete and remove. At the root it is the whole datastore: an RFC 7951 object
    (optionally wrapped in ``ietf-restconf:data``), or in XML the top-level elements one after
    another, without a wrapper (the children of an RFC 6241 ``<config>``).
    """

    operation: EditOperation
    path: DataPath
    value: str | None = None
    encoding: Encoding = Encoding.JSON
    where: InsertWhere | None = None
    point: DataPath | None = None  # the neighbour for BEFORE and AFTER


@dataclass(frozen=True, slots=True)
class Revision:
    """The version of a resource: its entity-tag and last-modified time (RFC 8040 3.4.1.1)."""

    etag: str
    last_modified: datetime


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """A read of one subtree (or the whole datastore when ``path`` is None)."""

    datastore: DatastoreName
    path: DataPath | None = None
    encoding: Encoding = Encoding.JSON
    content: Content = Content.ALL
    depth: int | None = None
    with_defaults: WithDefaults | None = None
    with_origin: bool = False
    fields: str | None = None  # RFC 8040 4.8.3 expression, resolved by the core
    xpath_filter: str | None = None
    #: The selection nodes of a subtree filter (RFC 6241 6.2.4) as schema paths (one or more:
    #: ``/mod:a/b/c``, every step but the last a container, ``path`` None): the instances
    #: at them whole, with their ancestors, nothing else; an ancestor nothing is left in is
    #: left out. Applied on the tree (unselected nodes hidden for the print), not a copy.
    selection: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What a read found: the document (None when no instance exists) and its revision."""

    document: str | None
    revision: Revision


@dataclass(frozen=True, slots=True)
class Change:
    """What a committed transaction changed, handed to commit hooks and the notification bus.

    ``diff`` is the RFC 7951 JSON of the libyang diff (``yang:operation`` metadata), limited to
    the changed nodes.
    """

    datastore: DatastoreName
    principal: Principal
    diff: str
    changed_paths: tuple[DataPath, ...]
    revision: Revision


@dataclass(frozen=True, slots=True)
class Notification:
    """One event on a stream: the notification document (RFC 7951 JSON) and its time.

    With ``replay_complete`` it is the marker a subscription with a start time yields right
    after the last replayed event (RFC 5277 3.2.5 ``replayComplete``, RFC 8040 6.3): its
    ``document`` is :data:`REPLAY_COMPLETE` and it has no replay id.
    """

    stream: str
    event_time: datetime
    document: str
    replay_id: int = 0
    replay_complete: bool = field(default=False, kw_only=True)


#: The document of the replay-complete marker: RFC 5277's ``nc-notifications:replayComplete``.
REPLAY_COMPLETE = '{"nc-notifications:replayComplete": {}}'


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """An event stream as the core serves it (RFC 8040 9.2.1 ``stream``, RFC 5277 3.1)."""

    name: str
    description: str
    replay_log_creation_time: datetime | None = None  # when the replay log was started
    replay_support: bool = field(kw_only=True)


#: Renders the operational data of one ``config false`` subtree as RFC 7951 JSON (a dict whose
#: top-level key is the module-qualified node name), when that subtree is read.
StateProvider = Callable[[], dict[str, object]]

#: Serves one modelled RPC or action: validated input in, output out, both RFC 7951 JSON dicts
#: without the ``input``/``output`` wrapper. Raise CatsError to answer with an error.
RpcHandler = Callable[[Principal, dict[str, object]], dict[str, object]]

#: Sees a transaction before it is made current; raising CatsError refuses it, unchanged.
CommitHook = Callable[[Change], None]


class Subscription(Protocol):
    """A subscription to one stream; iterating yields notifications until it is closed.

    A subscription with a start time yields the replayed notifications, then one
    ``replay_complete`` marker, then the live ones.
    """

    def __iter__(self) -> Iterator[Notification]: ...

    def close(self) -> None:
        """Stop the subscription; iteration ends."""
        ...


class ServerCore(Protocol):
    """The model-driven server core both northbounds share (docs/architecture.md)."""

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        """Read a subtree of a datastore; operational includes registered state."""
        ...

    def revision(self, datastore: DatastoreName, path: DataPath | None) -> Revision:
        """The entity-tag and last-modified time of a resource, without rendering it."""
        ...

    def consistent(self, datastore: DatastoreName) -> None:
        """Before a client's read of ``datastore``: in a cluster, wait until this replica has
        applied every commit of running the cluster had when called, so that a session reads
        its own writes made on any replica (docs/cluster.md); nothing without a cluster."""
        ...

    def edit(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
        test_only: bool = False,
    ) -> Revision:
        """Apply edits as one transaction: all or nothing, validated, persisted, then notified.

        ``session`` identifies the caller for lock checks (a lock held by another session
        refuses the edit with ``lock-denied``).
        """
        ...

    def commit(self, principal: Principal, *, session: str | None = None) -> Revision:
        """Make candidate the running configuration (RFC 6241 8.3.4.1)."""
        ...

    def discard_changes(self, *, session: str | None = None) -> None:
        """Revert candidate to running (RFC 6241 8.3.4.2)."""
        ...

    def validate(self, datastore: DatastoreName) -> None:
        """Validate a whole datastore (RFC 6241 8.6), changing nothing."""
        ...

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Replace a datastore with another's content (RFC 6241 7.3)."""
        ...

    def restore(self, datastore: DatastoreName, document: str, encoding: Encoding) -> Revision:
        """Replace a datastore with a whole document as the server's own action (RFC 6241
        8.4 confirmed-commit rollback): as SYSTEM, past every lock, all or nothing, validated,
        persisted and notified."""
        ...

    def lock_holders(self) -> dict[DatastoreName, str]:
        """The session id holding each locked datastore (RFC 6022 ``locks``)."""
        ...

    def invoke(
        self,
        path: DataPath,
        input_document: str,
        encoding: Encoding,
        principal: Principal,
    ) -> str:
        """Invoke the RPC or action at ``path``: validate input, run the handler, validate and
        return the output document in the same encoding."""
        ...

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take the lock of a datastore for a session (RFC 6241 7.5)."""
        ...

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds (RFC 6241 7.6)."""
        ...

    def release_session(self, session: str) -> None:
        """Release everything a closed or dropped session held."""
        ...

    def subscribe(
        self,
        stream: str,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
        principal: Principal = SYSTEM,
    ) -> Subscription:
        """Subscribe to a stream, replaying the bounded log from ``start_time``; only the
        events ``principal`` may read are delivered (RFC 8341 3.4.6)."""
        ...

    def authorize(self, principal: Principal, module: str, name: str) -> None:
        """RFC 8341 3.4.4 for a protocol operation the northbound serves itself (NETCONF
        ``get-config``, ``lock``, ``kill-session``, ...): ``access-denied`` unless permitted.
        Operations invoked through :meth:`invoke` are checked there."""
        ...

    def watch_accounts(self, watcher: Callable[[frozenset[str]], None]) -> None:
        """Call ``watcher`` with the user names left after any change of the users or of NACM,
        so that a northbound can end what a deleted user still holds open."""
        ...

    def reveal(self, secret: str) -> str:
        """The clear text of a stored secret (a southbound credential), for the server's own
        use only."""
        ...

    def publish(self, stream: str, document: str) -> Notification:
        """Emit an application notification (validated against the schema)."""
        ...

    def keep(self, name: str, document: str | None) -> None:
        """Durably keep (None: forget) a small document of the server's own, such as a
        confirmed commit's backup (RFC 6241 8.4), so that it outlives a restart."""
        ...

    def kept(self, name: str) -> str | None:
        """The document :meth:`keep` last kept under ``name``, or None."""
        ...

    def streams(self) -> tuple[StreamInfo, ...]:
        """The event streams a client may subscribe to, ``NETCONF`` first."""
        ...


@dataclass
class Registrations:
    """What an application registers with the core: state, RPC handlers and commit hooks.

    A state provider is keyed by the data path of the ``config false`` subtree it renders; an
    RPC handler by the schema path of its RPC or action (an action's data path without its
    list keys: one handler serves every entry, RFC 7950 7.15). Both are in libyang's form, the
    module named on the first step and where it changes (``/m:top/list/act``, not
    ``/m:top/m:list/m:act`` as :attr:`~controller.model.paths.SchemaNode.schema_path` spells
    it): the core looks them up by string.
    """

    state: dict[DataPath, StateProvider] = field(default_factory=dict)
    rpcs: dict[SchemaPath, RpcHandler] = field(default_factory=dict)
    #: Leaves holding credentials the application must present to peers in clear: stored
    #: encrypted, and treated by access control as default-deny-all (RFC 8341 3.5.1.2).
    secrets: set[SchemaPath] = field(default_factory=set)
    #: Nodes access control treats as default-deny-all without storing them encrypted (the
    #: audit records: readable only by those whose rules name them).
    protected: set[SchemaPath] = field(default_factory=set)
    commit_hooks: list[CommitHook] = field(default_factory=list)
