"""The access-control engine of the server core: RFC 8341 over every northbound path.

:class:`Nacm` holds the policy of running's ``ietf-netconf-acm:nacm``, compiled once per
change of that subtree, and hands out a :class:`UserAccess` per request: the rules for the
principal's groups, with the deciders of each access operation built on first use. The core
asks it about every operation, data node and notification (RFC 8341 3.4.4-3.4.6) and counts the
denials (``denied-operations``, ``denied-data-writes``, ``denied-notifications``).

NACM does not apply to the server's own work (:data:`~controller.datastore.api.SYSTEM`), to a
recovery session (RFC 8341 3.2: a principal marked ``recovery``, which the transports set for
the user named by ``--recovery-user``), or at all when ``enable-nacm`` is false.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.datastore.api import SYSTEM, Principal
from controller.datastore.nacm.decide import (
    CompiledRule,
    DataDecider,
    Verdict,
    exec_verdict,
    notification_verdict,
)
from controller.datastore.nacm.policy import DEFAULT, Op, Policy, RuleType, parse_policy
from controller.datastore.nacm.schema import (
    SECRETS,
    SchemaMarks,
    address,
    compile_path,
    module_of,
)
from controller.model import nodes
from controller.types import Json

Node = Any  # struct lyd_node *


def compile_rules(ctx: Any, policy: Policy, groups: frozenset[str]) -> tuple[CompiledRule, ...]:
    """The rules for a set of groups, in order, paths resolved (a path that names no node of
    the schema leaves a rule that matches nothing; it is dropped)."""
    compiled = []
    for rule_list in policy.rule_lists:
        if not rule_list.applies_to(groups):
            continue
        for rule in rule_list.rules:
            steps = None
            if rule.rule_type is RuleType.DATA_NODE:
                steps = compile_path(ctx, rule.target)
                if steps is None:
                    continue
            compiled.append(
                CompiledRule(
                    rule_list.name,
                    rule.name,
                    None if rule.module_name == "*" else rule.module_name,
                    rule.rule_type,
                    rule.target if rule.rule_type is not RuleType.DATA_NODE else "",
                    steps,
                    rule.operations,
                    rule.permit,
                )
            )
    return tuple(compiled)


class UserAccess:
    """The access of one set of groups under one policy: deciders built on first use."""

    def __init__(self, ctx: Any, policy: Policy, groups: frozenset[str], marks: SchemaMarks):
        self.groups = groups
        self.policy = policy
        self._marks = marks
        self._rules = compile_rules(ctx, policy, groups) if groups else ()
        self._deciders: dict[Op, DataDecider] = {}
        self._exec: dict[tuple[str, str], Verdict] = {}
        self._notifications: dict[int, Verdict] = {}
        self._guard = threading.Lock()

    def data(self, op: Op) -> DataDecider:
        """The decider of an access operation on data nodes (RFC 8341 3.4.5)."""
        found = self._deciders.get(op)
        if found is None:
            with self._guard:
                found = self._deciders.get(op)
                if found is None:
                    found = DataDecider(self._rules, self._marks, self.policy, op)
                    self._deciders[op] = found
        return found

    def operation(self, snode: Any) -> Verdict:
        """RFC 8341 3.4.4: may the user invoke the RPC ``snode``?"""
        name = nodes.ffi.string(snode.name).decode()
        return self.named_operation(module_of(snode), name, snode)

    def named_operation(self, module: str, name: str, snode: Any = None) -> Verdict:
        """RFC 8341 3.4.4 for a protocol operation known by name (``snode``: its schema node,
        when the schema has one; the base operations of NETCONF may have none)."""
        key = (module, name)
        found = self._exec.get(key)
        if found is None:
            deny_all = snode is not None and self._marks.of(snode).deny_all
            found = exec_verdict(self._rules, module, name, self.policy, deny_all=deny_all)
            self._exec[key] = found
        return found

    def action(self, dnode: Node) -> Verdict:
        """RFC 8341 3.4.5 for ``exec`` on an action node of a data tree."""
        return self.data(Op.EXEC).verdict(dnode)

    def notification(self, snode: Any, dnode: Node) -> Verdict:
        """RFC 8341 3.4.6: may the user receive this notification?"""
        if snode.parent:
            return self.data(Op.READ).verdict(dnode)
        key = address(snode)
        found = self._notifications.get(key)
        if found is None:
            found = notification_verdict(
                self._rules, snode, self._marks, self.policy, lambda: Verdict(permit=False)
            )
            self._notifications[key] = found
        return found


@dataclass
class Counters:
    """The mandatory counters of the nacm container (RFC 8341 3.5.2), since start."""

    denied_operations: int = 0
    denied_data_writes: int = 0
    denied_notifications: int = 0
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, name: str) -> None:
        """Add one to a counter."""
        with self._guard:
            setattr(self, name, getattr(self, name) + 1)

    def state(self) -> Json:
        """The counters as RFC 7951 members of ``ietf-netconf-acm:nacm``."""
        with self._guard:
            return {
                "denied-operations": self.denied_operations,
                "denied-data-writes": self.denied_data_writes,
                "denied-notifications": self.denied_notifications,
            }


class Nacm:
    """The policy in force and the access of each set of groups under it."""

    def __init__(self, ctx: Any, secrets: Iterable[str] = SECRETS) -> None:
        self._ctx = ctx
        self._marks = SchemaMarks(ctx, secrets)
        self._guard = threading.Lock()
        self.policy: Policy = DEFAULT
        self._users: dict[frozenset[str], UserAccess] = {}
        self.counters = Counters()

    def load(self, document: Json) -> None:
        """Put the policy of a read of ``/ietf-netconf-acm:nacm`` in force (the next operation
        of every session is decided by it)."""
        policy = parse_policy(document)
        with self._guard:
            self.policy = policy
            self._users = {}

    def applies(self, principal: Principal) -> bool:
        """Whether NACM decides for this principal (RFC 8341 3.4.4 steps 1-2, 3.4.5 1-2)."""
        return self.policy.enable_nacm and principal != SYSTEM and not principal.recovery

    def access(self, principal: Principal) -> UserAccess | None:
        """The access of a principal; None when NACM does not apply to it."""
        with self._guard:
            policy = self.policy
            if not (policy.enable_nacm and principal != SYSTEM and not principal.recovery):
                return None
            groups = policy.groups_of(principal.user, principal.groups)
            found = self._users.get(groups)
            if found is None:
                found = self._users[groups] = UserAccess(self._ctx, policy, groups, self._marks)
            return found
