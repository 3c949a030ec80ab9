"""controller.model.config_file: a TOML document's numbers and leaf-lists as RFC 7951 has them,
everything else left for libyang to judge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest

from controller.model import InstanceKind, ModelError, Schema
from controller.model.config_file import to_rfc7951

TOP = "cats-csma-config:csma"


@pytest.fixture(scope="module")
def csma() -> Iterator[Schema]:
    with Schema(modules=("cats-csma-config",)) as schema:
        yield schema


def test_decimal64_and_uint64_become_strings_and_int32_stays_a_number(csma: Schema) -> None:
    document = {
        "site": "S",
        "reporting": {"interval-ms": 250, "thresholds": {"gas-relative": Decimal("7.5")}},
        "instances": [{"csci-id": "x", "cs-id": "A", "capacity": 8589934592}],
    }
    converted = to_rfc7951(csma, TOP, document)[TOP]
    assert converted["reporting"] == {"interval-ms": 250, "thresholds": {"gas-relative": "7.5"}}
    assert converted["instances"][0]["capacity"] == "8589934592"


def test_a_single_value_of_a_leaf_list_becomes_a_list(csma: Schema) -> None:
    users = [{"name": "u", "password": "p", "role": "sci", "csci-id": "10.0.0.1:80"}]
    converted = to_rfc7951(csma, TOP, {"site": "S", "users": users})[TOP]
    assert converted["users"][0]["csci-id"] == ["10.0.0.1:80"]


def test_unknown_and_wrong_values_are_left_for_libyang(csma: Schema) -> None:
    document = {"site": "S", "colour": 1, "reporting": {"interval-ms": "soon"}}
    converted = to_rfc7951(csma, TOP, document)
    assert converted[TOP]["colour"] == 1
    assert converted[TOP]["reporting"]["interval-ms"] == "soon"
    with pytest.raises(ModelError) as refused:
        csma.validate(json.dumps(converted), InstanceKind.CONFIG)
    assert refused.value.items[0].path == f"/{TOP}"
