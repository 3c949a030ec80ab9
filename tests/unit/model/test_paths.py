"""RFC 8040 3.5.3 resource paths to libyang data paths."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.model import ModelError, Schema, project_yang_dir
from controller.model.paths import NodeKind, PathResolver, split_api_path
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def resolver() -> Iterator[PathResolver]:
    """A resolver over the RESTCONF test module."""
    with Schema([project_yang_dir(), ROOT / "tests" / "yang"], modules=("rc-test",)) as schema:
        yield PathResolver(schema.context)


def test_split_keeps_encoded_separators_inside_keys() -> None:
    steps = list(split_api_path("rc-test:top/link=a%2Fb,c%2Cd"))
    assert steps == [("rc-test", "top", None), (None, "link", ("a/b", "c,d"))]


def test_list_entry_with_two_keys(resolver: PathResolver) -> None:
    resolved = resolver.resolve("rc-test:top/link=a%2Fb,x")
    assert resolved.data_path == "/rc-test:top/link[from='a/b'][to='x']"
    assert resolved.node is not None
    assert resolved.node.kind is NodeKind.LIST
    assert resolved.values == ("a/b", "x")
    assert resolved.api_path == "rc-test:top/link=a%2Fb,x"


def test_root_and_module_inheritance(resolver: PathResolver) -> None:
    assert resolver.resolve("").data_path == "/"
    leaf = resolver.resolve("/rc-test:top/rc-test:name")
    assert leaf.data_path == "/rc-test:top/name"


def test_leaf_list_entry_and_quotes(resolver: PathResolver) -> None:
    assert resolver.resolve("rc-test:top/tag=it's").data_path == '/rc-test:top/tag[.="it\'s"]'


def test_operations(resolver: PathResolver) -> None:
    assert "rc-test:ping" in resolver.operations()
    action = resolver.resolve("rc-test:top/link=a,b/reset")
    assert action.node is not None
    assert action.node.kind is NodeKind.ACTION


@pytest.mark.parametrize(
    ("raw", "tag"),
    [
        ("top", "invalid-value"),  # the first step names its module
        ("rc-test:nope", "unknown-element"),
        ("nomodule:top", "unknown-element"),
        ("rc-test:top/link=a", "invalid-value"),  # two keys
        ("rc-test:top/link/speed", "invalid-value"),  # keys needed mid-path
        ("rc-test:top/name=x", "invalid-value"),  # a leaf has no keys
        ("rc-test:top//name", "invalid-value"),
        ("rc-test:ping/input", "unknown-element"),
        ("rc-test:ticked", "unknown-element"),
        ("rc-test:top/tag=a'b\"c", "invalid-value"),
    ],
)
def test_paths_that_name_nothing(resolver: PathResolver, raw: str, tag: str) -> None:
    with pytest.raises(ModelError) as caught:
        resolver.resolve(raw)
    assert caught.value.items[0].tag == tag


def test_child_and_namespaces(resolver: PathResolver) -> None:
    top = resolver.resolve("rc-test:top")
    assert resolver.resolve_child(top, "hop").ordered_by_user
    assert resolver.namespace("rc-test") == "urn:example:rc-test"
    assert resolver.module_of("urn:example:rc-test") == "rc-test"
    with pytest.raises(ModelError):
        resolver.resolve_child(top, "rc-test:nothing")
