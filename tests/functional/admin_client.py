"""Helpers of the cats-controller-admin functional tests: its RPCs and state over RESTCONF."""

from __future__ import annotations

import json
from typing import Any

import requests

from controller.auth import hash_password
from tests.functional.restconf_server import JSON, Server, admin_users

ADMIN_MODULE = "cats-controller-admin"
HEADERS = {"Content-Type": JSON, "Accept": JSON}
OLGA = ("olga", "olga-secret")  # in no group: reads, invokes, writes nothing
LENA = ("lena", "lena-secret")  # may not read /rc-test:top/name


def users_and_top() -> dict[str, Any]:
    """The admin, olga and lena, and rc-test's top with the ordered hops h1, h2, h3."""
    document: dict[str, Any] = admin_users()
    users = document["ietf-system:system"]["authentication"]["user"]
    users += [{"name": name, "password": hash_password(word)} for name, word in (OLGA, LENA)]
    document["rc-test:top"] = {"name": "a", "hop": [{"name": f"h{i}"} for i in (1, 2, 3)]}
    return document


def rpc(
    server: Server, name: str, members: dict[str, Any], auth: tuple[str, str] | None = None
) -> requests.Response:
    """POST a cats-controller-admin RPC (as ``auth``, the admin by default)."""
    body = json.dumps({f"{ADMIN_MODULE}:input": members})
    extra = {"auth": auth} if auth else {}
    return server.request(
        "POST", f"operations/{ADMIN_MODULE}:{name}", data=body, headers=HEADERS, **extra
    )


def output(reply: requests.Response) -> dict[str, Any]:
    """The output members of a successful RPC."""
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()[f"{ADMIN_MODULE}:output"]
    return found


def commits(server: Server) -> list[dict[str, Any]]:
    """The kept commits, newest first."""
    document = server.get_json(f"data/{ADMIN_MODULE}:commits")
    found: list[dict[str, Any]] = document[f"{ADMIN_MODULE}:commits"].get("commit", [])
    return sorted(found, key=lambda c: -int(c["id"]))


def top(server: Server) -> Any:
    """rc-test's top as running holds it (configuration only)."""
    return server.get_json("data/rc-test:top", content="config")["rc-test:top"]


def edits(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The edits of a compare result's YANG Patch."""
    found: list[dict[str, Any]] = result["yang-patch"].get("edit", [])
    return found
