"""controller.auth.policy: the shipped default policy and the init-data example that carries it."""

from __future__ import annotations

import json

from controller.auth.policy import AGENT_RPCS, GROUPS, default_policy, read_only_rule_list
from controller.model import InstanceKind, Schema
from tests.conftest import DOCS_DIR

EXAMPLE = DOCS_DIR / "examples" / "init-data.json"


def test_the_example_init_data_carries_the_default_policy(schema: Schema) -> None:
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    groups = document["ietf-netconf-acm:nacm"]["groups"]["group"]
    members = {group["name"]: group["user-name"] for group in groups}
    assert set(members) == set(GROUPS)
    assert document["ietf-netconf-acm:nacm"] == default_policy(members)["ietf-netconf-acm:nacm"]
    users = document["ietf-system:system"]["authentication"]["user"]
    assert all(user["password"].startswith("$0$") for user in users)  # hashed when seeded
    named = {user["name"] for user in users}
    assert named == {name for names in members.values() for name in names}


def test_the_policy_validates(schema: Schema) -> None:
    with Schema.for_server(()) as server:
        server.validate(json.dumps(default_policy({"admin": ["a"]})), InstanceKind.CONFIG)
        rule_list = {"ietf-netconf-acm:nacm": {"rule-list": [read_only_rule_list("g")]}}
        server.validate(json.dumps(rule_list), InstanceKind.CONFIG)


def test_every_agent_rule_list_ends_by_denying_the_rest() -> None:
    lists = default_policy({})["ietf-netconf-acm:nacm"]["rule-list"]
    for group in AGENT_RPCS:
        (rule_list,) = [item for item in lists if item["group"] == [group]]
        last = rule_list["rule"][-1]
        assert (last["module-name"], last["access-operations"], last["action"]) == (
            "*",
            "*",
            "deny",
        )
