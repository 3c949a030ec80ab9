"""RFC 8341 3.4's algorithms for one user, over compiled rules (one function per step group).

A :class:`UserRules` holds the rules of the rule-lists that apply to one set of groups, in
configuration order, with their paths resolved to schema nodes (RFC 8341 3.4.4 steps 4-7,
3.4.5 steps 3-6). Deciding on a data node is then a walk down its ancestors that keeps, at
each level, the rules whose path still matches; transitions that depend only on schema nodes
are cached, so the check of a node costs a few dictionary lookups (sysrepo's NACM compiles its
rules the same way; Clixon re-evaluates per request instead, which is simpler and slower).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.datastore.nacm.policy import Op, Policy, RuleType
from controller.datastore.nacm.schema import SchemaMarks, Step, address, module_of
from controller.model import nodes

Node = Any  # struct lyd_node *


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule with its path resolved (``steps`` None for a rule without a data-node path)."""

    rule_list: str
    name: str
    module: str | None  # None: module-name "*"
    rule_type: RuleType
    target: str  # rpc-name or notification-name ("*" or a name); "" otherwise
    steps: tuple[Step, ...] | None
    operations: Op
    permit: bool

    def names(self, name: str) -> bool:
        """Whether the rule's rpc-name or notification-name is ``*`` or ``name``."""
        return self.target in ("*", name)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of a check, and the rule that decided it (None: a default decided)."""

    permit: bool
    rule: CompiledRule | None = None

    def explain(self) -> str:
        """The rule-list and rule that decided, or the default, for log lines."""
        if self.rule is None:
            return "no rule matched; the default applies"
        return f"rule-list {self.rule.rule_list!r}, rule {self.rule.name!r}"


@dataclass(frozen=True, slots=True)
class Level:
    """What the walk knows at one data node: rules still matching, and the verdict."""

    alive: tuple[int, ...]  # indices of path rules whose steps so far match the ancestors
    verdict: Verdict
    uniform: bool  # every descendant gets the same verdict


class DataDecider:
    """RFC 8341 3.4.5 for one user and one access operation."""

    def __init__(
        self, rules: tuple[CompiledRule, ...], marks: SchemaMarks, policy: Policy, op: Op
    ) -> None:
        self._rules = tuple(
            r
            for r in rules
            if r.operations & op and r.rule_type in (RuleType.ANY, RuleType.DATA_NODE)
        )
        self._paths = tuple(r for r in self._rules if r.steps is not None)
        self._path_index = {id(r): i for i, r in enumerate(self._paths)}
        self._module_specific = any(r.module is not None for r in self._rules)
        self._marks = marks
        self._op = op
        self._read = op == Op.READ
        self._default = policy.read_default if self._read else policy.write_default
        if op == Op.EXEC:
            self._default = policy.exec_default
        self.root = tuple(range(len(self._paths)))
        self._cache: dict[tuple[tuple[int, ...], int, frozenset[int]], Level] = {}
        self._pending: dict[tuple[tuple[int, ...], int], tuple[tuple[int, Step], ...]] = {}

    # -- one level of the walk ------------------------------------------------------------

    def level(self, dnode: Node, alive_above: tuple[int, ...], depth: int) -> Level:
        """The walk's state at ``dnode`` (at ``depth``, 1 for a top-level node), given the
        path rules still matching its parent."""
        snode = dnode.schema
        pending = self.pending(alive_above, snode, depth)
        if not pending:
            return self.keyed_level(snode, alive_above, depth, frozenset())
        keyed = frozenset(i for i, step in pending if keys_match(dnode, step))
        return self.keyed_level(snode, alive_above, depth, keyed)

    def pending(
        self, alive_above: tuple[int, ...], snode: Any, depth: int
    ) -> tuple[tuple[int, Step], ...]:
        """The path rules whose step at ``depth`` names ``snode`` with key predicates: the
        only ones an instance's keys decide on (cached per schema transition)."""
        key = (alive_above, address(snode))
        found = self._pending.get(key)
        if found is None:
            found = tuple(
                (i, steps[depth - 1])
                for i in alive_above
                if len(steps := self._paths[i].steps or ()) >= depth
                and steps[depth - 1].schema == key[1]
                and steps[depth - 1].keys
            )
            self._pending[key] = found
        return found

    def keyed_level(
        self, snode: Any, alive_above: tuple[int, ...], depth: int, keyed: frozenset[int]
    ) -> Level:
        """The level of an instance of ``snode`` whose keys matched the rules ``keyed``."""
        cache_key = (alive_above, address(snode), keyed)
        found = self._cache.get(cache_key)
        if found is None:
            found = self._cache[cache_key] = self._compute(snode, alive_above, depth, keyed)
        return found

    def _compute(
        self, snode: Any, alive_above: tuple[int, ...], depth: int, keyed: frozenset[int]
    ) -> Level:
        key_addr = address(snode)
        alive = []
        for i in alive_above:
            steps = self._paths[i].steps or ()
            if len(steps) < depth:
                alive.append(i)  # matched by an ancestor: applies to every descendant
            elif steps[depth - 1].schema == key_addr and (not steps[depth - 1].keys or i in keyed):
                alive.append(i)
        alive_now = tuple(alive)
        module = module_of(snode)
        verdict = self._first_rule(alive_now, depth, module)
        marks = self._marks.of(snode)
        if verdict is None:
            verdict = Verdict(self._default_for(marks))
        uniform = not any(len(self._paths[i].steps or ()) > depth for i in alive_now)
        if uniform and self._module_specific and (marks.modules_below - {module}):
            uniform = False
        if uniform and verdict.rule is None and verdict.permit:
            uniform = not (marks.deny_all_below if self._read else marks.deny_write_below)
        return Level(alive_now, verdict, uniform)

    def _first_rule(self, alive: tuple[int, ...], depth: int, module: str) -> Verdict | None:
        """RFC 8341 3.4.5 steps 6-7: the first rule that matches, in order."""
        for rule in self._rules:
            if rule.module is not None and rule.module != module:
                continue
            if rule.steps is None:
                return Verdict(rule.permit, rule)
            index = self._path_index[id(rule)]
            if index in alive and len(rule.steps) <= depth:
                return Verdict(rule.permit, rule)
        return None

    def _default_for(self, marks: Any) -> bool:
        """RFC 8341 3.4.5 steps 9-12: the extensions, then read-default or write-default."""
        if marks.deny_all:
            return False
        if not self._read and self._op != Op.EXEC and marks.deny_write:
            return False
        return bool(self._default)

    # -- walks ----------------------------------------------------------------------------

    def at(self, dnode: Node) -> tuple[Level, int]:
        """The walk's state at a node of a tree, from its top-level ancestor down."""
        chain = [dnode]
        while chain[-1].parent:
            chain.append(nodes.ffi.cast("struct lyd_node *", chain[-1].parent))
        alive, level = self.root, None
        for depth, node in enumerate(reversed(chain), start=1):
            level = self.level(node, alive, depth)
            alive = level.alive
        assert level is not None
        return level, len(chain)

    def verdict(self, dnode: Node) -> Verdict:
        """The decision on one data node."""
        return self.at(dnode)[0].verdict

    def permits_below(self, level: Level, depth: int) -> bool:
        """Whether a rule that permits may still match a descendant of a node denied itself
        (a path rule whose steps go on below it)."""
        return any(
            len(self._paths[i].steps or ()) > depth and self._paths[i].permit for i in level.alive
        )


def keys_match(dnode: Node, step: Step) -> bool:
    """Whether a list entry (or leaf-list instance) has the key values of a rule step."""
    for key, value in step.keys:
        if key == ".":
            actual = nodes.lib.lyd_get_value(dnode)
        else:
            actual = nodes.ffi.NULL
            child = nodes.lib.lyd_child(dnode)
            while child and child.schema.flags & nodes.lib.LYS_KEY:
                if nodes.ffi.string(child.schema.name).decode() == key:
                    actual = nodes.lib.lyd_get_value(child)
                    break
                child = child.next
        if actual == nodes.ffi.NULL or nodes.ffi.string(actual).decode() != value:
            return False
    return True


#: RFC 8341 3.4.4 step 11: denied unless a rule permits them, whatever exec-default says.
ALWAYS_PROTECTED = frozenset({("ietf-netconf", "kill-session"), ("ietf-netconf", "delete-config")})


def exec_verdict(
    rules: tuple[CompiledRule, ...],
    module: str,
    name: str,
    policy: Policy,
    *,
    deny_all: bool,
) -> Verdict:
    """RFC 8341 3.4.4 steps 3 and 6-12 for a protocol operation ``module:name`` (``deny_all``:
    its ``rpc`` statement carries ``nacm:default-deny-all``)."""
    if (module, name) == ("ietf-netconf", "close-session"):
        return Verdict(permit=True)  # step 3
    for rule in rules:  # steps 6-8
        if not rule.operations & Op.EXEC or (rule.module is not None and rule.module != module):
            continue
        if rule.rule_type is RuleType.ANY or (
            rule.rule_type is RuleType.PROTOCOL_OPERATION and rule.names(name)
        ):
            return Verdict(rule.permit, rule)
    if deny_all or (module, name) in ALWAYS_PROTECTED:  # steps 10-11
        return Verdict(permit=False)
    return Verdict(policy.exec_default)  # step 12


def notification_verdict(
    rules: tuple[CompiledRule, ...],
    snode: Any,
    marks: SchemaMarks,
    policy: Policy,
    nested: Callable[[], Verdict],
) -> Verdict:
    """RFC 8341 3.4.6 steps 6-11 for a notification (``nested`` decides a notification
    defined inside a data node, by the data-node rules of its path)."""
    if snode.parent:
        return nested()
    module = module_of(snode)
    name = nodes.ffi.string(snode.name).decode()
    for rule in rules:
        if not rule.operations & Op.READ or (rule.module is not None and rule.module != module):
            continue
        if rule.rule_type is RuleType.ANY or (
            rule.rule_type is RuleType.NOTIFICATION and rule.names(name)
        ):
            return Verdict(rule.permit, rule)
    if marks.of(snode).deny_all:
        return Verdict(permit=False)
    return Verdict(policy.read_default)
