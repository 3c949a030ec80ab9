"""Access control and secrets as the server core applies them, one object per core.

:class:`Authorization` owns the NACM engine (:mod:`controller.datastore.nacm`) and the
secrets (:mod:`controller.datastore.secrets`) of one core: it answers the core's questions
(may this principal invoke this operation, which nodes of this read it may see, which guard
checks its edits, whether a subscriber may receive an event), reloads the policy when
running's ``nacm`` changes, counts the denials, and tells the northbounds which users exist
after their accounts changed, so that a deleted user's sessions and streams end at once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from controller.datastore import reads, rpc
from controller.datastore.access import Guard
from controller.datastore.api import (
    DatastoreName,
    Notification,
    Principal,
    ReadRequest,
)
from controller.datastore.errors import refuse
from controller.datastore.hiding import Hider
from controller.datastore.nacm import NACM_PATH, Nacm, Op, UserAccess, walk
from controller.datastore.nacm.schema import SECRETS
from controller.datastore.tree import Tree
from controller.errors import CatsError, ErrorType
from controller.model import nodes
from controller.model.schema import Encoding
from controller.types import DataPath, Json

LOG = logging.getLogger("catsctl.nacm")
USERS = DataPath("/ietf-system:system/authentication")
_USER_NAMES = "/ietf-system:system/authentication/user/name"
_NOTIF = nodes.lib.LYD_TYPE_NOTIF_YANG
_WATCHED = (NACM_PATH, USERS)

#: Called with the user names of running after a change of the users or of NACM.
AccountsWatcher = Callable[[frozenset[str]], None]


def touches(paths: Sequence[str], prefixes: Sequence[str]) -> bool:
    """Whether any changed path is, or is above or below, one of ``prefixes``."""
    for path in paths:
        for prefix in prefixes:
            if path in ("/", "") or path.startswith(prefix) or prefix.startswith(path + "/"):
                return True
    return False


class Authorization:
    """The access control of one server core (RFC 8341) and its bookkeeping."""

    def __init__(self, ctx: Any, secret_leaves: Sequence[str] = ()) -> None:
        self.ctx = ctx
        self.nacm = Nacm(ctx, (*SECRETS, *secret_leaves))
        self._watchers: list[AccountsWatcher] = []
        self._guard = threading.Lock()
        self._notifications: dict[str, Any] = {}  # "module:name" -> schema node (top level)

    # -- the policy -----------------------------------------------------------------------

    def reload(self, running_first: Any) -> None:
        """Read running's ``nacm`` into the engine (the caller holds the core lock)."""
        request = ReadRequest(DatastoreName.RUNNING, DataPath(NACM_PATH))
        document = reads.render(self.ctx, running_first, request)
        loaded = json.loads(document) if document else {}
        self.nacm.load(loaded if isinstance(loaded, dict) else {})

    def after_commit(self, running_first: Any, changed: Sequence[str]) -> None:
        """After a transaction on running: reload the policy and tell the watchers which users
        are left, when it touched NACM or the users (the caller holds the core lock)."""
        if not touches(changed, _WATCHED):
            return
        self.reload(running_first)
        users = self.user_names(running_first)
        with self._guard:
            watchers = list(self._watchers)
        for watcher in watchers:
            try:
                watcher(users)
            except Exception:
                LOG.exception("nacm: a watcher of the accounts failed")

    def user_names(self, running_first: Any) -> frozenset[str]:
        """The local users of running."""
        if not running_first:
            return frozenset()
        return frozenset(
            nodes.value_of(node) for node in nodes.find_all(self.ctx, running_first, _USER_NAMES)
        )

    def watch_accounts(self, watcher: AccountsWatcher) -> None:
        """Be told the remaining users after every change of the users or of NACM."""
        with self._guard:
            self._watchers.append(watcher)

    def state(self) -> Json:
        """The counters of ``ietf-netconf-acm:nacm`` (mandatory state, RFC 8341 3.5.2)."""
        return {"ietf-netconf-acm:nacm": self.nacm.counters.state()}

    # -- decisions ------------------------------------------------------------------------

    def user(self, principal: Principal) -> UserAccess | None:
        """The principal's access; None when NACM does not apply to it."""
        return self.nacm.access(principal)

    def guard(self, principal: Principal) -> Guard:
        """The guard of a transaction run by ``principal`` (RFC 8341 3.4.5 writes)."""
        return Guard(
            self.user(principal),
            principal.user,
            lambda: self.nacm.counters.count("denied_data_writes"),
        )

    def operation(self, principal: Principal, operation: Any) -> None:
        """RFC 8341 3.4.4 for an RPC (``operation.schema``) or, for an action, 3.4.5 exec on
        its node; ``access-denied`` unless permitted."""
        user = self.user(principal)
        if user is None:
            return
        if operation.is_rpc:
            verdict = user.operation(operation.schema)
        else:
            tree = nodes.new_path(self.ctx, None, operation.path)
            try:
                action = nodes.find(self.ctx, tree, operation.path)
                verdict = user.action(action)
            finally:
                nodes.free_all(tree)
        if not verdict.permit:
            self._deny_operation(principal, operation.name, operation.path)

    def named_operation(self, principal: Principal, module: str, name: str) -> None:
        """RFC 8341 3.4.4 for a protocol operation the northbound serves itself (NETCONF
        ``get``, ``lock``, ``kill-session``, ...), by module and name."""
        user = self.user(principal)
        if user is None:
            return
        snode = nodes.lib.lys_find_path(self.ctx, nodes.ffi.NULL, f"/{module}:{name}".encode(), 0)
        nodes.clean_errors(self.ctx)  # a module not loaded ("notifications") is no error here
        verdict = user.named_operation(module, name, None if snode == nodes.ffi.NULL else snode)
        if not verdict.permit:
            self._deny_operation(principal, f"{module}:{name}", None)

    def _deny_operation(self, principal: Principal, name: str, path: str | None) -> None:
        self.nacm.counters.count("denied_operations")
        LOG.info("nacm: %s may not invoke %s", principal.user, name)
        raise refuse(
            "access-denied",
            f"{principal.user} may not invoke {name} (access control, RFC 8341)",
            path,
            error_type=ErrorType.PROTOCOL,
        )

    def hide(self, user: UserAccess, tree: Tree, path: DataPath | None, hider: Hider) -> bool:
        """Hide from a live tree, for one read of ``path`` (None: all), what the user may not
        read (RFC 8341 3.4.5); False when the target itself may not be read."""
        reader = user.data(Op.READ)
        if path is None:
            if tree.first[0]:
                walk.prune(reader, tree.first[0], hider.hide)
            return True
        target = tree.find(path)
        return target is None or walk.prune_below(reader, target, hider.hide)

    def prune(self, user: UserAccess, first: Any) -> Any:
        """Free what the user may not read of a scratch tree (operational reads)."""
        return walk.prune(user.data(Op.READ), first) if first else first

    def admit(self, principal: Principal) -> Callable[[Notification], bool]:
        """Whether each event may go to the subscriber (RFC 8341 3.4.6), decided on the
        policy in force when it is delivered."""

        def admitted(event: Notification) -> bool:
            if event.replay_complete:
                return True
            user = self.user(principal)
            if user is None:
                return True
            try:
                permit = self._notification_permitted(user, event.document)
            except CatsError:
                permit = False
            if not permit:
                self.nacm.counters.count("denied_notifications")
            return permit

        return admitted

    def _notification_permitted(self, user: UserAccess, document: str) -> bool:
        found = rpc.first_member(document)
        snode = self._top_notification(found.group(1)) if found is not None else None
        if snode is not None:
            return user.notification(snode, nodes.ffi.NULL).permit
        tree, notification = nodes.parse_op(self.ctx, document, Encoding.JSON, _NOTIF)
        try:
            return user.notification(notification.schema, notification).permit
        finally:
            nodes.free_all(tree)

    def _top_notification(self, member: str) -> Any:
        found = self._notifications.get(member)
        if found is None and ":" in member:
            snode = nodes.lib.lys_find_path(self.ctx, nodes.ffi.NULL, f"/{member}".encode(), 0)
            nodes.clean_errors(self.ctx)
            if snode != nodes.ffi.NULL and snode.nodetype & nodes.lib.LYS_NOTIF:
                found = self._notifications[member] = snode
        return found
