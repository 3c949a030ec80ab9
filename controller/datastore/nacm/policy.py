"""The NACM configuration (RFC 8341 3.5, ``ietf-netconf-acm:nacm``) as frozen values.

Parsed from the RFC 7951 JSON of running, which libyang has validated, so only the YANG
defaults are filled in here (RFC 8341 3.5.2 gives them: enable-nacm true, read-default
permit, write-default deny, exec-default permit, enable-external-groups true; a rule's
module-name and access-operations default to ``*``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntFlag
from typing import Any

from controller.types import Json

MODULE = "ietf-netconf-acm"
NACM_PATH = f"/{MODULE}:nacm"
ALL = "*"


class Op(IntFlag):
    """The access operations of RFC 8341 3.2.2 (``access-operations-type`` bits)."""

    CREATE = 1
    READ = 2
    UPDATE = 4
    DELETE = 8
    EXEC = 16
    ALL = CREATE | READ | UPDATE | DELETE | EXEC


WRITE = Op.CREATE | Op.UPDATE | Op.DELETE


class RuleType(Enum):
    """The cases of the ``rule-type`` choice; ANY when the rule has none (RFC 8341 3.5.2)."""

    ANY = "any"
    PROTOCOL_OPERATION = "protocol-operation"  # rpc-name
    NOTIFICATION = "notification"  # notification-name
    DATA_NODE = "data-node"  # path


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of a rule-list (RFC 8341 3.5.2 ``rule``)."""

    name: str
    module_name: str  # a module name or "*"
    rule_type: RuleType
    target: str  # rpc-name or notification-name ("*" or a name), path, or "" for ANY
    operations: Op
    permit: bool


@dataclass(frozen=True, slots=True)
class RuleList:
    """One rule-list: the groups it applies to ("*" matches every group) and its rules."""

    name: str
    groups: frozenset[str]
    rules: tuple[Rule, ...]

    def applies_to(self, groups: frozenset[str]) -> bool:
        """Whether the rule-list is for one of ``groups`` (RFC 8341 3.4.5 step 5)."""
        return bool(groups) and (ALL in self.groups or not self.groups.isdisjoint(groups))


@dataclass(frozen=True, slots=True)
class Policy:
    """The whole ``nacm`` container, defaults filled in."""

    enable_nacm: bool = True
    read_default: bool = True  # permit
    write_default: bool = False  # deny
    exec_default: bool = True  # permit
    enable_external_groups: bool = True
    members: Mapping[str, frozenset[str]] = field(default_factory=dict)  # user: groups
    rule_lists: tuple[RuleList, ...] = ()

    def groups_of(self, user: str, external: Sequence[str] = ()) -> frozenset[str]:
        """The user's groups: those of ``groups/group`` that list the user, and the groups
        the transport reported when ``enable-external-groups`` is true (RFC 8341 3.2.6)."""
        found = set(self.members.get(user, frozenset()))
        if self.enable_external_groups:
            found.update(external)
        return frozenset(found)

    def rules_for(self, groups: frozenset[str]) -> tuple[Rule, ...]:
        """The rules of every rule-list that applies to the groups, in configuration order
        (RFC 8341 3.4.4 steps 6-7, 3.4.5 steps 5-6)."""
        return tuple(
            rule
            for rule_list in self.rule_lists
            if rule_list.applies_to(groups)
            for rule in rule_list.rules
        )


#: The policy when the nacm container is absent from running: every default of RFC 8341.
DEFAULT = Policy()


def _action(value: Any, *, default: bool) -> bool:
    return default if value is None else value == "permit"


def _operations(value: Any) -> Op:
    if value is None or value == ALL:
        return Op.ALL
    found = Op(0)
    for bit in str(value).split():
        found |= Op[bit.upper()]
    return found


def _rule(item: Json) -> Rule:
    rule_type, target = RuleType.ANY, ""
    for leaf, kind in (
        ("rpc-name", RuleType.PROTOCOL_OPERATION),
        ("notification-name", RuleType.NOTIFICATION),
        ("path", RuleType.DATA_NODE),
    ):
        if leaf in item:
            rule_type, target = kind, str(item[leaf])
    return Rule(
        name=str(item["name"]),
        module_name=str(item.get("module-name", ALL)),
        rule_type=rule_type,
        target=target,
        operations=_operations(item.get("access-operations")),
        permit=item.get("action") == "permit",
    )


def parse_policy(document: Json) -> Policy:
    """The policy of the RFC 7951 JSON of ``/ietf-netconf-acm:nacm`` (the member itself, or
    an empty document when nothing is configured)."""
    nacm = document.get(f"{MODULE}:nacm", {})
    if not isinstance(nacm, dict):
        return DEFAULT
    members: dict[str, set[str]] = {}
    groups = nacm.get("groups", {})
    for group in groups.get("group", []) if isinstance(groups, dict) else []:
        for user in group.get("user-name", []):
            members.setdefault(str(user), set()).add(str(group["name"]))
    rule_lists = tuple(
        RuleList(
            str(item["name"]),
            frozenset(str(g) for g in item.get("group", [])),
            tuple(_rule(rule) for rule in item.get("rule", [])),
        )
        for item in nacm.get("rule-list", [])
    )
    return Policy(
        enable_nacm=nacm.get("enable-nacm", True) is not False,
        read_default=_action(nacm.get("read-default"), default=True),
        write_default=_action(nacm.get("write-default"), default=False),
        exec_default=_action(nacm.get("exec-default"), default=True),
        enable_external_groups=nacm.get("enable-external-groups", True) is not False,
        members={user: frozenset(names) for user, names in members.items()},
        rule_lists=rule_lists,
    )
