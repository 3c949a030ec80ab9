"""The users of an agent's own servers (``[[users]]``) and how they are put into running.

An agent that is itself a model-driven server (controller.app) authenticates its clients
against ``ietf-system:system/authentication`` (RFC 7317 3.2). ``[[users]]`` gives each one a
``name`` and ``password`` or ``password-hash`` (``catsctl hash-password``); :func:`seed_logins`
replaces the users in running with them at start.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from agents.cnma.fields import Table
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


def read_logins(tables: list[Table]) -> tuple[Login, ...]:
    """``[[users]]``: names are unique, exactly one of password and password-hash each."""
    found: list[Login] = []
    for table in tables:
        table.allow("name", "password", "password-hash")
        if ("password" in table.values) == ("password-hash" in table.values):
            raise table.error("password", "give exactly one of password and password-hash")
        if "password-hash" in table.values:
            hashed: str = table.text("password-hash")
            if not _CRYPT.fullmatch(hashed):
                raise table.error("password-hash", "expected a crypt hash ($6$...)")
        else:
            hashed = hash_password(table.text("password"))
        name: str = table.text("name")
        if any(login.name == name for login in found):
            raise table.error("name", f"user {name!r} is given twice")
        found.append(Login(name, hashed))
    return tuple(found)


def seed_logins(core: Core, logins: tuple[Login, ...]) -> None:
    """Replace the users in running with ``logins`` (as the server's own action)."""
    users = [{"name": login.name, "password": login.password_hash} for login in logins]
    document = json.dumps({"ietf-system:authentication": {"user": users}})
    edit = Edit(EditOperation.REPLACE, AUTH_PATH, document, Encoding.JSON)
    core.edit(DatastoreName.RUNNING, [edit], SYSTEM)
