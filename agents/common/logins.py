"""The users of an agent's own servers (``[[users]]``) and how they are put into running.

An agent that is itself a model-driven server (controller.app) authenticates its clients
against ``ietf-system:system/authentication`` (RFC 7317 3.2). ``[[users]]`` gives each one a
``name`` and ``password`` or ``password-hash`` (``catsctl hash-password``), read by
:func:`password_hash_of` once the agent's module has validated them; :func:`seed_logins`
replaces the users in running with them at start, with the access-control policy (RFC 8341)
that gives each user its role's rights. The forwarder's users are :class:`Login` values
(:func:`logins_of`); the C-SMA's carry a role too (agents.csma.config_state).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from controller.auth import hash_password
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.datastore.core import Core
from controller.model import Encoding
from controller.types import DataPath, Json

AUTH_PATH = DataPath("/ietf-system:system/authentication")
ACM = "ietf-netconf-acm"
NACM = DataPath(f"/{ACM}:nacm")


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


def keys_of(entry: Json) -> tuple[PublicKey, ...]:
    """A validated user's ``authorized-key`` list (``ssh-ed25519 AAAA... comment``) as
    (algorithm, key data) pairs; the module's pattern has checked the form."""
    return tuple((key.split()[0], key.split()[1]) for key in entry.get("authorized-key", ()))


def password_hash_of(entry: Json) -> tuple[str, str | None]:
    """A validated user's crypt hash ("" for a key-only user) and the plaintext when the file
    gave ``password`` (hashed here; the module has checked that at most one is given)."""
    if "password" in entry:
        return hash_password(entry["password"]), entry["password"]
    return entry.get("password-hash", ""), None


def logins_of(entries: Iterable[Json]) -> tuple[Login, ...]:
    """A validated ``users`` list (keyed by name, so names are unique)."""
    return tuple(
        Login(entry["name"], password_hash_of(entry)[0], keys=keys_of(entry)) for entry in entries
    )


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
