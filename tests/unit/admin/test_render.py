"""cats-controller-admin documents from values: compare results as YANG Patch and diff."""

from __future__ import annotations

from controller.admin.render import compare_result
from controller.datastore.compare import ChangeItem
from controller.types import DataPath

HOP = DataPath("/rc-test:top/hop[name='h2']")


def test_a_compare_result_is_a_yang_patch_and_a_unified_diff() -> None:
    items = [
        ChangeItem(
            "replace", DataPath("/rc-test:top/name"), '{"rc-test:name":"a"}', '{"rc-test:name":"b"}'
        ),
        ChangeItem("delete", HOP, '{"rc-test:hop":[{"name":"h2"}]}'),
        ChangeItem(
            "move",
            DataPath("/rc-test:top/hop[name='h3']"),
            where="before",
            point=DataPath("/rc-test:top/hop[name='h1']"),
        ),
    ]
    result = compare_result(items, "12", "running")
    assert result["changes"] == 3
    edits = result["yang-patch"]["edit"]
    assert [e["operation"] for e in edits] == ["replace", "delete", "move"]
    assert edits[0]["value"] == '{"rc-test:name":"b"}'
    assert "value" not in edits[1]
    assert (edits[2]["where"], edits[2]["point"]) == ("before", "/rc-test:top/hop[name='h1']")
    diff = result["unified-diff"]
    assert "--- 12 /rc-test:top/name\n+++ running /rc-test:top/name\n" in diff
    assert '-  "rc-test:name": "a"\n+  "rc-test:name": "b"\n' in diff
    assert "@@ moved before /rc-test:top/hop[name='h1'] @@\n" in diff


def test_no_changes_is_an_empty_patch() -> None:
    result = compare_result([], "running", "candidate")
    assert result == {
        "changes": 0,
        "yang-patch": {"patch-id": "compare running candidate"},
        "unified-diff": "",
    }
