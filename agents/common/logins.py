"""The users of an agent's own servers (``[[users]]``) and how they are put into running.

An agent that is itself a model-driven server (controller.app) authenticates its clients
against ``ietf-system:system/authentication`` (RFC 7317 3.2). ``[[users]]`` gives each one a
``name`` and ``password`` or ``password-hash`` (``catsctl hash-password``), read by
:func:`read_password_hash`; :func:`seed_logins` replaces the users in running with them at
start. The forwarder's users are :class:`Login` values (:func:`read_logins`); the C-SMA's carry
a role too (agents.csma.config_state).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from agents.common.config import Table
from controller.auth import hash_password
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.datastore.core import Core
from controller.model import Encoding
from controller.types import DataPath

AUTH_PATH = DataPath("/ietf-system:system/authentication")
_CRYPT = re.compile(r"\$[0-9a-z]+(\$[^$\s]+)+")


@dataclass(frozen=True, slots=True)
class Login:
    """One user of the agent's NETCONF and RESTCONF servers."""

    name: str
    password_hash: str = field(repr=False)


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


def read_password_hash(table: Table) -> tuple[str, str | None]:
    """A user's ``password`` or ``password-hash`` (exactly one): the crypt hash, and the
    plaintext when it was ``password``."""
    if ("password" in table.values) == ("password-hash" in table.values):
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
        table.allow("name", "password", "password-hash")
        hashed, _ = read_password_hash(table)
        name = table.text("name")
        if any(login.name == name for login in found):
            raise table.error("name", f"user {name!r} is given twice")
        found.append(Login(name, hashed))
    return tuple(found)


def seed_logins(core: Core, logins: Iterable[Account]) -> None:
    """Replace the users in running with ``logins`` (as the server's own action)."""
    users = [{"name": login.name, "password": login.password_hash} for login in logins]
    document = json.dumps({"ietf-system:authentication": {"user": users}})
    edit = Edit(EditOperation.REPLACE, AUTH_PATH, document, Encoding.JSON)
    core.edit(DatastoreName.RUNNING, [edit], SYSTEM)
