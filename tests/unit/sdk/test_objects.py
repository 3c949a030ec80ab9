"""The SDK's pyangbind objects encode every example as libyang reads it, in JSON and XML.

Each valid document of yang/examples/ is loaded into the bindings, encoded with pyangbind's
IETF JSON and XML encoders (as corrected in controller.sdk.objects), validated by libyang, and
compared with the example in libyang's canonical form; the XML is decoded back into an equal
object (docs/notes/pyangbind.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from lxml import etree

from controller.model import Encoding, InstanceKind, ModelError, Schema, nodes
from controller.sdk import objects
from controller.sdk.objects import Binding
from tests.conftest import EXAMPLES_DIR

VALID = sorted(EXAMPLES_DIR.glob("*.json"))
NETCONF_DATA = "<data xmlns='urn:ietf:params:xml:ns:netconf:base:1.0'>{}</data>"


def canonical(schema: Schema, text: str, kind: InstanceKind, encoding: Encoding) -> Any:
    """The document as libyang prints it (JSON, canonical values), after full validation."""
    schema.validate(text, kind, encoding)
    ctx = schema.context.cdata
    if kind is InstanceKind.RPC:
        tree, op = nodes.parse_op(ctx, text, encoding, nodes.lib.LYD_TYPE_RPC_YANG)
        printed = nodes.print_tree(op, Encoding.JSON)
    else:
        tree = nodes.parse_data(ctx, text, encoding, state=True)
        printed = nodes.print_tree(tree, Encoding.JSON, nodes.lib.LYD_PRINT_WITHSIBLINGS)
    nodes.free_all(tree)
    return json.loads(printed)


def load_example(document: dict[str, Any], kind: InstanceKind) -> list[Binding]:
    """One SDK object per top-level member of the example (an RPC input for an RPC)."""
    loaded = []
    for name, members in document.items():
        module, node = name.split(":")
        target = objects.operation(module, node).input if kind is InstanceKind.RPC else None
        loaded.append(objects.load_members(target or objects.top(module, node), members))
    return loaded


def as_document(obj: Binding, kind: InstanceKind) -> dict[str, Any]:
    if kind is InstanceKind.RPC:
        operation = obj._parent
        return {f"{obj._defining_module}:{operation._yang_name}": objects.to_members(obj)}
    loaded: dict[str, Any] = json.loads(objects.to_json(obj))
    return loaded


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.name)
def test_json_encoding_is_the_example(schema: Schema, path: Any) -> None:
    text = path.read_text(encoding="utf-8")
    kind = InstanceKind(path.name.split(".")[-2])
    document: dict[str, Any] = {}
    for obj in load_example(json.loads(text), kind):
        document.update(as_document(obj, kind))
    encoded = json.dumps(document)
    assert canonical(schema, encoded, kind, Encoding.JSON) == canonical(
        schema, text, kind, Encoding.JSON
    )


@pytest.mark.parametrize(
    "path", [p for p in VALID if ".data." in p.name], ids=lambda path: path.name
)
def test_xml_encoding_is_the_example_and_decodes_back(schema: Schema, path: Any) -> None:
    text = path.read_text(encoding="utf-8")
    loaded = load_example(json.loads(text), InstanceKind.DATA)
    xml = "".join(objects.xml_text(obj) for obj in loaded)
    assert canonical(schema, xml, InstanceKind.DATA, Encoding.XML) == canonical(
        schema, text, InstanceKind.DATA, Encoding.JSON
    )
    for obj in loaded:
        again = objects.load_xml(
            objects.top(obj._defining_module, obj._yang_name), objects.to_xml(obj)
        )
        assert objects.equal(again, obj)


def test_identityref_leaf_lists_are_written_bare_or_qualified_and_declared(schema: Schema) -> None:
    """pyangbind 0.8.7 alone fails on this leaf-list in XML; the SDK declares each prefix."""
    policy = objects.top(objects.SM, "selection-policy")
    policy.default_requirement.tie_break.append("ietf-cats-service-metrics:highest-gas")
    policy.default_requirement.tie_break.append("lowest-price")
    assert objects.to_members(policy) == {
        "default-requirement": {"tie-break": ["highest-gas", "lowest-price"]}
    }
    element = objects.to_xml(policy)
    values = element.findall(f".//{{{objects.namespace(objects.SM)}}}tie-break")
    assert [value.text for value in values] == ["highest-gas", "lowest-price"]
    canonical(
        schema, etree.tostring(element, encoding="unicode"), InstanceKind.CONFIG, Encoding.XML
    )


def test_pyangbind_refuses_a_value_outside_the_type() -> None:
    report = objects.operation(objects.SM, "report-service-metrics").input
    entry = report.entry.add(cs_id="ARS", csci_id="188.3.67.4:69")
    with pytest.raises(ValueError, match="gas"):
        entry.gas = -1


def test_what_pyangbind_lets_through_libyang_refuses(schema: Schema) -> None:
    """A missing mandatory leaf is not pyangbind's to check: the server's libyang refuses it."""
    report = objects.operation(objects.SM, "report-service-metrics").input
    report.entry.add(cs_id="ARS", csci_id="188.3.67.4:69")
    document = json.dumps(
        {"ietf-cats-service-metrics:report-service-metrics": objects.to_members(report)}
    )
    with pytest.raises(ModelError):
        schema.validate(document, InstanceKind.RPC)


def test_only_the_five_modules_are_bound() -> None:
    with pytest.raises(ValueError, match="no binding"):
        objects.binding_module("ietf-system")
