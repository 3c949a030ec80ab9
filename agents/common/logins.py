"""The users of an agent's own servers (``[[users]]``) and how they are put into running.

An agent that is itself a model-driven server (controller.app) authenticates its clients
against ``ietf-system:system/authentication`` (RFC 7317 3.2). ``[[users]]`` gives each one a
``name`` and ``password`` or ``password-hash`` (``catsctl hash-password``), read by
:func:`read_password_hash`; :func:`seed_logins` replaces the users in running with them at
start, with the access-control policy (RFC 8341) that gives each user its role's rights. The
forwarder's users are :class:`Login` values (:func:`read_logins`); the C-SMA's carry a role too
(agents.csma.config_state).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agents.common.config import Table
from controller.auth import hash_password
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.datastore.core import Core
from controller.model import Encoding
from controller.types import DataPath, Json

AUTH_PATH = DataPath("/ietf-system:system/authentication")
ACM = "ietf-netconf-acm"
NACM = DataPath(f"/{ACM}:nacm")
_CRYPT = re.compile(r"\$[0-9a-z]+(\$[^$\s]+)+")
_KEY_DATA = re.compile(r"[A-Za-z0-9+/]+={0,2}")


#: An authorized SSH public key: (algorithm, base64 key data), as ``~/.ssh/id_*.pub`` has it.
PublicKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Login:
    """One user of the agent's NETCONF and RESTCONF servers, in the NACM group ``group``: a
    crypt-hashed password ("" for none) and authorized SSH keys (RFC 7317 3.2)."""

    name: str
    password_hash: str = field(repr=False)
    group: str = "controller"
    keys: tuple[PublicKey, ...] = ()


class Account(Protocol):
    """What running needs of a user: the name and the crypt hash of the password."""

    @property
    def name(self) -> str:
        """The user name."""
        ...

    @property
    def password_hash(self) -> str:
        """The crypt hash (``ianach:crypt-hash``)."""
        ...

    @property
    def group(self) -> str:
        """The NACM group (RFC 8341) the user is in: its role at this agent."""
        ...

    @property
    def keys(self) -> tuple[PublicKey, ...]:
        """The user's authorized SSH public keys."""
        ...


def read_keys(table: Table) -> tuple[PublicKey, ...]:
    """``authorized-key``: a list of public keys as ``ssh-keygen`` writes them
    (``ssh-ed25519 AAAA... comment``)."""
    value = table.values.get("authorized-key", [])
    if not isinstance(value, list):
        raise table.error("authorized-key", "expected a list of public keys")
    keys = []
    for item in value:
        parts = item.split() if isinstance(item, str) else []
        if len(parts) < 2 or not _KEY_DATA.fullmatch(parts[1]):  # noqa: PLR2004
            raise table.error("authorized-key", "expected 'ALGORITHM BASE64-KEY [comment]'")
        keys.append((parts[0], parts[1]))
    return tuple(keys)


def read_password_hash(table: Table) -> tuple[str, str | None]:
    """A user's ``password`` or ``password-hash`` (at most one; none only for a user with an
    ``authorized-key``): the crypt hash ("" for none), and the plaintext when it was
    ``password``."""
    given = ("password" in table.values) + ("password-hash" in table.values)
    if given == 0 and "authorized-key" in table.values:
        return "", None
    if given != 1:
        raise table.error("password", "give exactly one of password and password-hash")
    if "password-hash" in table.values:
        hashed = table.text("password-hash")
        if not _CRYPT.fullmatch(hashed):
            raise table.error("password-hash", "expected a crypt hash ($6$...)")
        return hashed, None
    password = table.text("password")
    return hash_password(password), password


def read_logins(tables: list[Table]) -> tuple[Login, ...]:
    """``[[users]]``: names are unique, exactly one of password and password-hash each."""
    found: list[Login] = []
    for table in tables:
        table.allow("name", "password", "password-hash", "authorized-key")
        hashed, _ = read_password_hash(table)
        name = table.text("name")
        if any(login.name == name for login in found):
            raise table.error("name", f"user {name!r} is given twice")
        found.append(Login(name, hashed, keys=read_keys(table)))
    return tuple(found)


def seed_logins(core: Core, logins: Iterable[Account], rule_lists: Sequence[Json]) -> None:
    """Replace the users in running with ``logins`` and the access-control policy with one
    group per role (each user in its own role's group) and ``rule_lists`` (RFC 8341), in one
    transaction, as the server's own action."""
    accounts = list(logins)
    users = [_user(login) for login in accounts]
    members: dict[str, list[str]] = {}
    for login in accounts:
        members.setdefault(login.group, []).append(login.name)
    groups = [{"name": name, "user-name": names} for name, names in sorted(members.items())]
    nacm = {
        "enable-external-groups": False,
        "groups": {"group": groups},
        "rule-list": list(rule_lists),
    }
    edits = [
        Edit(
            EditOperation.REPLACE,
            AUTH_PATH,
            json.dumps({"ietf-system:authentication": {"user": users}}),
            Encoding.JSON,
        ),
        Edit(EditOperation.REPLACE, NACM, json.dumps({f"{ACM}:nacm": nacm}), Encoding.JSON),
    ]
    core.edit(DatastoreName.RUNNING, edits, SYSTEM)


def _user(login: Account) -> Json:
    """A user of ``ietf-system:system/authentication`` (RFC 7317 3.2)."""
    user: Json = {"name": login.name}
    if login.password_hash:
        user["password"] = login.password_hash
    if login.keys:
        user["authorized-key"] = [
            {"name": f"key-{n}", "algorithm": algorithm, "key-data": data}
            for n, (algorithm, data) in enumerate(login.keys, start=1)
        ]
    return user


def rule(name: str, action: str, **target: str) -> Json:
    """One NACM rule (``module_name``, ``rpc_name``, ``path``, ``access_operations``)."""
    found: Json = {"name": name}
    found.update({key.replace("_", "-"): value for key, value in target.items()})
    found["action"] = action
    return found
