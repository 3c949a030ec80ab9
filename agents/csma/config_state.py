"""The C-SMA configuration's tables of who may call it and of the state it answers for.

``[[users]]``: ``name``, ``password`` or ``password-hash`` (``catsctl hash-password``),
``role`` (``sci``: may call report-sci-metrics for the ``csci-id`` list, every CSCI-ID when
empty; ``cps``: may call query-state, reserve-state and release-state; ``operator``: both).
``[[instances]]``: ``csci-id``, ``cs-id``, ``capacity`` (bytes of state it can hold),
``tenants`` (served tenants; empty: any), and ``[[instances.state]]`` seeding the state view
(agent-selection-mapping 7.2): ``tenant``, ``reuse-key``, ``presence``, ``residency``,
``element-class``, ``size``, ``age`` (ms), ``retention`` (s), ``retrieval-cost`` and
``recompute-cost`` (ms). ``[reservations]``: ``validity`` (s after needed-by), ``max-rate``
per session per ``window`` seconds (agent-selection-mapping 9.3, 14).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from agents.common.config import Table
from agents.common.logins import PublicKey, read_keys, read_password_hash
from agents.csma.capability import Capability, read_capability
from agents.csma.reservations import Policy
from agents.csma.stateview import Element, Presence
from controller.types import CsciId, CsId, ReuseKey, TenantId

RESIDENCY = frozenset({"accelerator-memory", "host-memory", "local-storage", "remote-store"})
CLASSES = frozenset(
    {
        "model-context-state",
        "retrieved-material",
        "tool-result",
        "plan-scratch-state",
        "long-term-memory",
    }
)


class Role(StrEnum):
    """What a user may call at the C-SMA."""

    SCI = "sci"
    CPS = "cps"
    OPERATOR = "operator"


#: Keys the fingerprints of plaintext passwords for this process only (never persisted).
_PROCESS_KEY = secrets.token_bytes(32)


def fingerprint(password: str) -> str:
    """What tells two loads of the same plaintext password apart from a changed one, without
    comparing salted hashes (each load salts anew)."""
    return "plain:" + hmac.new(_PROCESS_KEY, password.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class UserConfig:
    """One user of the C-SMA's servers; equal when name, role, CSCI-IDs and password are."""

    name: str
    password_hash: str = field(compare=False)
    role: Role
    csci_ids: frozenset[str] = frozenset()  # an SCI user's CSCI-IDs (empty: any)
    secret: str = field(default="", repr=False)  # the hash given, or a plaintext fingerprint
    keys: tuple[PublicKey, ...] = ()  # authorized SSH keys

    def may_report(self, csci_id: str) -> bool:
        """Whether the user may report for ``csci_id`` (sci-implementation 9)."""
        allowed = self.role in (Role.SCI, Role.OPERATOR)
        return allowed and (not self.csci_ids or csci_id in self.csci_ids)

    @property
    def may_query(self) -> bool:
        """Whether the user may query, reserve and release state."""
        return self.role in (Role.CPS, Role.OPERATOR)

    @property
    def group(self) -> str:
        """The NACM group of the user: its role (agents.csma.service.RULE_LISTS)."""
        return str(self.role.value)


@dataclass(frozen=True, slots=True)
class InstanceConfig:
    """One instance (SCI) the C-SMA answers for in the state view."""

    csci_id: CsciId
    cs_id: CsId
    capacity: int
    tenants: frozenset[TenantId] = frozenset()
    state: tuple[Element, ...] = ()
    capability: Capability | None = None  # advertised with MSG-4 (agents.csma.capability)


def _strings(table: Table, name: str) -> frozenset[str]:
    value = table.values.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise table.error(name, "expected a list of non-empty strings")
    return frozenset(value)


def _user(table: Table, base: Path) -> UserConfig:
    del base
    table.allow("name", "password", "password-hash", "role", "csci-id", "authorized-key")
    hashed, password = read_password_hash(table)
    secret = hashed if password is None else fingerprint(password)
    return UserConfig(
        table.text("name"),
        hashed,
        table.choice("role", Role),
        _strings(table, "csci-id"),
        secret,
        read_keys(table),
    )


def read_users(tables: list[Table], base: Path) -> tuple[UserConfig, ...]:
    """``[[users]]``; names are unique."""
    users = tuple(_user(t, base) for t in tables)
    names = [u.name for u in users]
    for table, user in zip(tables, users, strict=True):
        if names.count(user.name) > 1:
            raise table.error("name", f"user {user.name!r} is given twice")
    return users


def _identity(table: Table, name: str, allowed: frozenset[str]) -> str | None:
    value: str | None = table.text(name, None)
    if value is not None and value not in allowed:
        raise table.error(name, f"expected one of {', '.join(sorted(allowed))}, got {value!r}")
    return value


def _element(table: Table, csci: CsciId, now: float) -> Element:
    table.allow(
        "tenant",
        "reuse-key",
        "presence",
        "residency",
        "element-class",
        "size",
        "age",
        "retention",
        "retrieval-cost",
        "recompute-cost",
    )
    presence = table.choice("presence", Presence, Presence.PRESENT)
    present = presence is Presence.PRESENT
    for held_only in ("residency", "age", "retention"):
        if held_only in table.values and not present:
            raise table.error(held_only, "only a present element has it")
    age = table.millis("age", None) if present else None
    return Element(
        csci,
        TenantId(table.text("tenant")),
        ReuseKey(table.text("reuse-key")),
        presence,
        _identity(table, "residency", RESIDENCY),
        _identity(table, "element-class", CLASSES),
        table.integer("size", None, maximum=2**63),
        table.decimal("retrieval-cost", None),
        table.decimal("recompute-cost", None),
        (now - age / 1_000_000) if age is not None else (now if present else None),
        table.integer("retention", None) if present else None,
    )


def read_instances(tables: list[Table], now: float) -> tuple[InstanceConfig, ...]:
    """``[[instances]]`` with their state seeds; ``now`` (Unix s) is when ages are counted."""
    found: list[InstanceConfig] = []
    for table in tables:
        table.allow("csci-id", "cs-id", "capacity", "tenants", "state", "capability")
        csci = CsciId(table.text("csci-id"))
        if any(i.csci_id == csci for i in found):
            raise table.error("csci-id", f"instance {csci!r} is given twice")
        elements = tuple(_element(t, csci, now) for t in table.tables("state"))
        keys = [e.key for e in elements]
        if len(set(keys)) != len(keys):
            raise table.error("state", "a (tenant, reuse-key) is given twice")
        found.append(
            InstanceConfig(
                csci,
                CsId(table.text("cs-id")),
                table.integer("capacity", 2**40, maximum=2**63),
                frozenset(TenantId(t) for t in _strings(table, "tenants")),
                elements,
                read_capability(table.table("capability")),
            )
        )
    return tuple(found)


def read_reservations(table: Table) -> Policy:
    """``[reservations]``."""
    table.allow("validity", "max-rate", "window")
    return Policy(
        table.seconds("validity", 30.0),
        table.integer("max-rate", 10),
        table.seconds("window", 60.0),
    )
