"""The C-SMA configuration's lists of who may call it and of the state it answers for.

Read from the ``cats-csma-config`` module's validated data (agents.csma.config); the module
holds every constraint and default.

``[[users]]``: ``name``, ``password`` or ``password-hash`` (``catsctl hash-password``),
``role`` (``sci``: may call report-sci-metrics for the ``csci-id`` list, every CSCI-ID when
empty; ``cps``: may call query-state, reserve-state and release-state; ``operator``: both).
``[[instances]]``: ``csci-id``, ``cs-id``, ``capacity`` (bytes of state it can hold),
``tenants`` (served tenants; empty: any), and ``[[instances.state]]`` seeding the state view
(agent-selection-mapping 7.2): ``tenant``, ``reuse-key``, ``presence``, ``residency``,
``element-class``, ``size``, ``age``, ``retention-ms``, ``retrieval-cost`` and
``recompute-cost`` (all ms). ``[reservations]``: ``validity-ms`` (after needed-by),
``max-rate`` per session per ``window-ms`` (agent-selection-mapping 9.3, 14).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from agents.common.logins import PublicKey, keys_of, password_hash_of
from agents.csma.capability import Capability, read_capability
from agents.csma.reservations import Policy
from agents.csma.stateview import Element, Presence
from controller.types import CsciId, CsId, Json, ReuseKey, TenantId


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
        """The NACM group of the user: its role (agents.csma.access.RULE_LISTS)."""
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


def _user(entry: Json) -> UserConfig:
    hashed, password = password_hash_of(entry)
    secret = hashed if password is None else fingerprint(password)
    return UserConfig(
        entry["name"],
        hashed,
        Role(entry["role"]),
        frozenset(str(csci) for csci in entry.get("csci-id", ())),
        secret,
        keys_of(entry),
    )


def read_users(entries: list[Json]) -> tuple[UserConfig, ...]:
    """The validated ``users`` list (keyed by name, so names are unique)."""
    return tuple(_user(entry) for entry in entries)


def _decimal(entry: Json, name: str) -> Decimal | None:
    value = entry.get(name)
    return None if value is None else Decimal(value)


def _element(entry: Json, csci: CsciId, now: float) -> Element:
    """One validated ``state`` entry; its ``age`` counts back from ``now`` (Unix s)."""
    presence = Presence(entry["presence"])
    present = presence is Presence.PRESENT
    age = _decimal(entry, "age")
    retention = entry.get("retention-ms")
    size = entry.get("size")
    return Element(
        csci,
        TenantId(entry["tenant"]),
        ReuseKey(entry["reuse-key"]),
        presence,
        entry.get("residency"),
        entry.get("element-class"),
        None if size is None else int(size),
        _decimal(entry, "retrieval-cost"),
        _decimal(entry, "recompute-cost"),
        (now - float(age) / 1000) if age is not None else (now if present else None),
        None if retention is None else retention // 1000,
    )


def read_instances(entries: list[Json], now: float) -> tuple[InstanceConfig, ...]:
    """The validated ``instances`` with their state seeds; ``now`` (Unix s) is when ages are
    counted."""
    found: list[InstanceConfig] = []
    for entry in entries:
        csci = CsciId(str(entry["csci-id"]))
        capability = entry.get("capability")
        found.append(
            InstanceConfig(
                csci,
                CsId(str(entry["cs-id"])),
                int(entry["capacity"]),
                frozenset(TenantId(t) for t in entry.get("tenants", ())),
                tuple(_element(e, csci, now) for e in entry.get("state", ())),
                None if capability is None else read_capability(capability),
            )
        )
    return tuple(found)


def read_reservations(entry: Json) -> Policy:
    """``reservations`` (validated, defaults filled in; ms in the file, s in the policy)."""
    return Policy(entry["validity-ms"] / 1000, entry["max-rate"], entry["window-ms"] / 1000)
