"""controller.datastore.nacm: RFC 8341 3.4.4-3.4.6 decided over real libyang trees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from controller.datastore.api import SYSTEM, Principal
from controller.datastore.nacm import Nacm, Op, walk
from controller.model import Encoding, Schema, nodes
from tests.unit.datastore.conftest import TEST_YANG

NT = "nacm-test"
SITE = {
    f"{NT}:site": {
        "name": "s1",
        "device": [
            {"name": "a", "address": "10.0.0.1", "secret": "sa", "weight": "1.5"},
            {"name": "b", "address": "10.0.0.2", "secret": "sb", "weight": "2.25"},
        ],
        "guarded": {"level": 3},
    }
}
ALICE = Principal("alice")


def policy(*rule_lists: dict[str, Any], **leaves: Any) -> dict[str, Any]:
    """A nacm document: alice is in group ops, bob in no group."""
    return {
        "ietf-netconf-acm:nacm": {
            **leaves,
            "groups": {"group": [{"name": "ops", "user-name": ["alice"]}]},
            "rule-list": list(rule_lists),
        }
    }


def rules(*items: dict[str, Any], group: str = "ops") -> dict[str, Any]:
    return {"name": f"list-{group}", "group": [group], "rule": list(items)}


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    with Schema.for_server([TEST_YANG]) as compiled:
        yield compiled


@pytest.fixture
def nacm(schema: Schema) -> Nacm:
    return Nacm(schema.context.cdata)


@pytest.fixture
def tree(schema: Schema) -> Iterator[Any]:
    first = nodes.parse_data(schema.context.cdata, json.dumps(SITE), Encoding.JSON)
    yield first
    nodes.free_all(first)


def find(schema: Schema, tree: Any, path: str) -> Any:
    found = nodes.find(schema.context.cdata, tree, path)
    assert found is not None, path
    return found


def rpc(schema: Schema, path: str) -> Any:
    found = nodes.lib.lys_find_path(schema.context.cdata, nodes.ffi.NULL, path.encode(), 0)
    assert found != nodes.ffi.NULL
    return found


def readable(nacm: Nacm, schema: Schema, tree: Any, principal: Principal = ALICE) -> Any:
    """What the principal reads of the tree, as RFC 7951 JSON."""
    access = nacm.access(principal)
    assert access is not None
    copy = nodes.dup(tree)
    first = walk.prune(access.data(Op.READ), copy)
    try:
        text = nodes.print_tree(first, Encoding.JSON, nodes.lib.LYD_PRINT_WITHSIBLINGS)
        return json.loads(text or "{}")
    finally:
        nodes.free_all(first)


def test_system_recovery_and_disabled_nacm_are_not_decided(nacm: Nacm) -> None:
    nacm.load(policy())
    assert nacm.access(SYSTEM) is None
    assert nacm.access(Principal("root", recovery=True)) is None
    assert nacm.access(ALICE) is not None
    nacm.load(policy(**{"enable-nacm": False}))
    assert nacm.access(ALICE) is None


def test_reads_leave_out_default_deny_all_and_keep_the_rest(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    nacm.load(policy())
    seen = readable(nacm, schema, tree)
    devices = seen[f"{NT}:site"]["device"]
    assert [d["name"] for d in devices] == ["a", "b"]
    assert all("secret" not in d for d in devices)  # step 9: default-deny-all
    assert seen[f"{NT}:site"]["guarded"] == {"level": 3}  # deny-write does not hide


def test_a_permit_rule_reveals_a_default_deny_all_node(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    nacm.load(policy(rules({"name": "see", "module-name": NT, "action": "permit"})))
    devices = readable(nacm, schema, tree)[f"{NT}:site"]["device"]
    assert [d["secret"] for d in devices] == ["sa", "sb"]


def test_read_rules_with_instance_predicates_filter_per_entry(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    nacm.load(
        policy(
            rules(
                {
                    "name": "hide-b",
                    "path": f"/{NT}:site/device[name='b']",
                    "access-operations": "read",
                    "action": "deny",
                },
                {
                    "name": "hide-a-address",
                    "path": f"/{NT}:site/device[name='a']/address",
                    "access-operations": "*",
                    "action": "deny",
                },
            )
        )
    )
    devices = readable(nacm, schema, tree)[f"{NT}:site"]["device"]
    assert devices == [{"name": "a", "weight": "1.5"}]


def test_an_unreadable_key_takes_the_whole_entry(nacm: Nacm, schema: Schema, tree: Any) -> None:
    rule = {"name": "k", "path": f"/{NT}:site/device[name='a']/name", "action": "deny"}
    nacm.load(policy(rules(rule)))
    devices = readable(nacm, schema, tree)[f"{NT}:site"]["device"]
    assert [d["name"] for d in devices] == ["b"]


def test_rules_apply_in_order_first_match_wins(nacm: Nacm, schema: Schema, tree: Any) -> None:
    permit = {"name": "p", "path": f"/{NT}:site/device", "action": "permit"}
    deny = {"name": "d", "path": f"/{NT}:site/device", "action": "deny"}
    nacm.load(policy(rules(permit, deny)))
    assert len(readable(nacm, schema, tree)[f"{NT}:site"]["device"]) == 2
    nacm.load(policy(rules(deny, permit)))
    assert "device" not in readable(nacm, schema, tree)[f"{NT}:site"]


def test_a_user_in_no_group_gets_only_the_defaults(nacm: Nacm, schema: Schema, tree: Any) -> None:
    deny_all = {"name": "d", "module-name": "*", "action": "deny"}
    nacm.load(policy(rules(deny_all, group="*")))
    assert readable(nacm, schema, tree) == {}  # alice is in ops, "*" matches every group
    bob = readable(nacm, schema, tree, Principal("bob"))
    assert bob[f"{NT}:site"]["name"] == "s1"  # no group: read-default permit


def test_external_groups_count_only_when_enabled(nacm: Nacm, schema: Schema, tree: Any) -> None:
    see = {"name": "see", "module-name": NT, "action": "permit"}
    carol = Principal("carol", ("ops",))
    nacm.load(policy(rules(see)))
    assert "secret" in readable(nacm, schema, tree, carol)[f"{NT}:site"]["device"][0]
    nacm.load(policy(rules(see), **{"enable-external-groups": False}))
    assert "secret" not in readable(nacm, schema, tree, carol)[f"{NT}:site"]["device"][0]


def test_writes_follow_write_default_and_the_extensions(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    nacm.load(policy())
    access = nacm.access(ALICE)
    assert access is not None
    name = find(schema, tree, f"/{NT}:site/name")
    assert not access.data(Op.UPDATE).verdict(name).permit  # write-default deny
    nacm.load(policy(**{"write-default": "permit"}))
    access = nacm.access(ALICE)
    assert access is not None
    assert access.data(Op.UPDATE).verdict(name).permit
    level = find(schema, tree, f"/{NT}:site/guarded/level")
    assert not access.data(Op.UPDATE).verdict(level).permit  # default-deny-write
    site = find(schema, tree, f"/{NT}:site")
    denied = walk.first_denied(access.data(Op.DELETE), site)
    assert denied is not None
    assert nodes.path_of(denied).endswith("secret")


def test_a_write_rule_on_one_entry_permits_only_that_entry(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    rule = {
        "name": "edit-a",
        "path": f"/{NT}:site/device[name='a']/address",
        "access-operations": "update",
        "action": "permit",
    }
    nacm.load(policy(rules(rule)))
    access = nacm.access(ALICE)
    assert access is not None
    update = access.data(Op.UPDATE)
    assert update.verdict(find(schema, tree, f"/{NT}:site/device[name='a']/address")).permit
    assert not update.verdict(find(schema, tree, f"/{NT}:site/device[name='b']/address")).permit
    assert (
        not access.data(Op.DELETE)
        .verdict(find(schema, tree, f"/{NT}:site/device[name='a']/address"))
        .permit
    )


def test_key_values_are_compared_canonically(nacm: Nacm, schema: Schema) -> None:
    document = {f"{NT}:site": {"device": [{"name": "x", "weight": "1.50"}]}}
    first = nodes.parse_data(schema.context.cdata, json.dumps(document), Encoding.JSON)
    try:
        rule = {
            "name": "w",
            "path": f"/{NT}:site/device[name='x']/weight[.='1.5']",
            "action": "deny",
        }
        nacm.load(policy(rules(rule)))
        access = nacm.access(ALICE)
        assert access is not None
        weight = find(schema, first, f"/{NT}:site/device[name='x']/weight")
        assert not access.data(Op.READ).verdict(weight).permit
    finally:
        nodes.free_all(first)


def test_operations(nacm: Nacm, schema: Schema) -> None:
    nacm.load(policy())
    access = nacm.access(ALICE)
    assert access is not None
    assert access.operation(rpc(schema, f"/{NT}:ping")).permit  # exec-default permit
    assert not access.operation(rpc(schema, f"/{NT}:wipe")).permit  # default-deny-all
    assert not access.operation(rpc(schema, "/ietf-netconf:kill-session")).permit  # step 11
    assert not access.operation(rpc(schema, "/ietf-netconf:delete-config")).permit
    assert access.operation(rpc(schema, "/ietf-netconf:close-session")).permit  # step 3
    deny = {"name": "no", "module-name": "*", "rpc-name": "*", "action": "deny"}
    allow = {"name": "yes", "module-name": NT, "rpc-name": "wipe", "action": "permit"}
    nacm.load(policy(rules(allow, deny)))
    access = nacm.access(ALICE)
    assert access is not None
    assert access.operation(rpc(schema, f"/{NT}:wipe")).permit
    assert not access.operation(rpc(schema, f"/{NT}:ping")).permit
    assert access.operation(rpc(schema, "/ietf-netconf:close-session")).permit


def test_notifications(nacm: Nacm, schema: Schema) -> None:
    alarm = rpc(schema, f"/{NT}:alarm")
    nacm.load(policy())
    access = nacm.access(ALICE)
    assert access is not None
    assert access.notification(alarm, nodes.ffi.NULL).permit
    rule = {"name": "n", "module-name": NT, "notification-name": "alarm", "action": "deny"}
    nacm.load(policy(rules(rule)))
    access = nacm.access(ALICE)
    assert access is not None
    assert not access.notification(alarm, nodes.ffi.NULL).permit


def test_a_denied_ancestor_of_permitted_data_is_kept_as_the_way_to_it(
    nacm: Nacm, schema: Schema, tree: Any
) -> None:
    """An agent may read one subtree and nothing else: the containers above it come back
    with the permitted subtree only (and a list entry with its keys)."""
    permit = {"name": "one-address", "path": f"/{NT}:site/device[name='b']/address"}
    permit |= {"access-operations": "read", "action": "permit"}
    nacm.load(policy(rules(permit, {"name": "deny-rest", "action": "deny"})))
    assert readable(nacm, schema, tree) == {
        f"{NT}:site": {"device": [{"name": "b", "address": "10.0.0.2"}]}
    }
    nacm.load(policy(rules({"name": "deny-rest", "action": "deny"})))
    assert readable(nacm, schema, tree) == {}
