"""controller.model.schema: loading, structured validation errors, schema paths."""

from __future__ import annotations

import json

import pytest

from controller.errors import ErrorType
from controller.model import CATS_MODULES, InstanceKind, ModelError, Schema
from controller.model.schema import SERVER_FEATURES
from controller.types import SchemaPath
from tests.conftest import EXAMPLES_DIR

# Scenario A's first CST entry (service-metrics-op 7.1), as the example file holds it.
CST_ENTRY = json.loads((EXAMPLES_DIR / "scenario-a-tables.data.json").read_text())[
    "ietf-cats-service-metrics:computing-service-table"
]["entry"][0]


# ietf-cats-sci's second revision made every configured duration milliseconds.
REVISIONS = {"ietf-cats-sci": "2026-12-02"}


def test_all_cats_modules_are_implemented(schema: Schema) -> None:
    implemented = dict(schema.implemented_modules())
    for name in CATS_MODULES:
        assert implemented[name] == REVISIONS.get(name, "2026-11-30")


def test_error_names_the_data_path_and_the_rfc6241_tag(schema: Schema) -> None:
    document = {
        "ietf-cats-service-metrics:computing-service-table": {
            "entry": [{**CST_ENTRY, "reputation": 11}]
        }
    }
    with pytest.raises(ModelError) as caught:
        schema.validate(json.dumps(document), InstanceKind.DATA)
    (item,) = caught.value.items
    assert item.tag == "invalid-value"
    assert item.type is ErrorType.APPLICATION
    assert item.path is not None
    assert item.path.endswith("/reputation")
    assert "11" in item.message


def test_unknown_node_is_an_unknown_element(schema: Schema) -> None:
    document = {
        "ietf-cats-service-metrics:computing-service-table": {
            "entry": [{**CST_ENTRY, "colour": "blue"}]
        }
    }
    with pytest.raises(ModelError) as caught:
        schema.validate(json.dumps(document), InstanceKind.DATA)
    assert caught.value.items[0].tag == "unknown-element"
    assert "colour" in caught.value.items[0].message


def test_truncated_json_is_malformed(schema: Schema) -> None:
    with pytest.raises(ModelError) as caught:
        schema.validate('{"ietf-cats-service-metrics:computing-service-table": ', InstanceKind.DATA)
    assert caught.value.items[0].tag == "malformed-message"


def test_config_kind_refuses_state(schema: Schema) -> None:
    document = {"ietf-cats-service-metrics:computing-service-table": {"entry": [CST_ENTRY]}}
    schema.validate(json.dumps(document), InstanceKind.DATA)
    with pytest.raises(ModelError):
        schema.validate(json.dumps(document), InstanceKind.CONFIG)


def test_schema_paths_resolve_with_input_and_output(schema: Schema) -> None:
    assert schema.has_schema_path(
        SchemaPath("/ietf-cats-service-metrics:select-service/input/cs-id")
    )
    assert schema.has_schema_path(
        SchemaPath("/ietf-cats-service-metrics:select-service/output/candidate")
    )
    assert not schema.has_schema_path(
        SchemaPath("/ietf-cats-service-metrics:select-service/input/candidate")
    )
    assert not schema.has_schema_path(SchemaPath("/ietf-cats-service-metrics:no-such-node"))


def test_loading_a_missing_module_is_a_model_error() -> None:
    with pytest.raises(ModelError):
        Schema(modules=("ietf-cats-no-such-module",))


def _entry_without(leaf: str) -> str:
    entry = {key: value for key, value in CST_ENTRY.items() if key != leaf}
    return json.dumps({"ietf-cats-service-metrics:computing-service-table": {"entry": [entry]}})


def test_missing_key_and_missing_mandatory_are_missing_elements(schema: Schema) -> None:
    for leaf in ("csci-id", "last-updated"):
        with pytest.raises(ModelError) as caught:
            schema.validate(_entry_without(leaf), InstanceKind.DATA)
        assert caught.value.items[0].tag == "missing-element", leaf
        assert leaf in caught.value.items[0].message


def test_unknown_module_is_an_unknown_element(schema: Schema) -> None:
    with pytest.raises(ModelError) as caught:
        schema.validate('{"no-such-module:x": 1}', InstanceKind.DATA)
    assert caught.value.items[0].tag == "unknown-element"


def test_the_server_schema_enables_the_ietf_system_features() -> None:
    with Schema.for_server() as server:
        system = server.context.get_module("ietf-system")
        enabled = {feature.name() for feature in system.features() if feature.state()}
        assert enabled == set(SERVER_FEATURES["ietf-system"])
        assert server.has_schema_path(
            SchemaPath("/ietf-system:system/authentication/user/password")
        )


def test_features_are_given_at_load_time() -> None:
    with Schema.for_server(features={"ietf-system": ("ntp",)}) as server:
        system = server.context.get_module("ietf-system")
        enabled = {feature.name() for feature in system.features() if feature.state()}
        assert enabled == {"authentication", "local-users", "ntp"}
    with Schema(modules=("ietf-system",)) as plain:
        system = plain.context.get_module("ietf-system")
        assert not any(feature.state() for feature in system.features())
        assert not plain.has_schema_path(SchemaPath("/ietf-system:system/authentication"))


def test_unknown_features_are_model_errors() -> None:
    with pytest.raises(ModelError) as unknown:
        Schema(modules=("ietf-system",), features={"ietf-system": ("no-such-feature",)})
    assert "no-such-feature" in unknown.value.items[0].message
    with pytest.raises(ModelError) as unloaded:
        Schema(modules=("ietf-system",), features={"ietf-cats-sci": ("x",)})
    assert "ietf-cats-sci" in unloaded.value.items[0].message
