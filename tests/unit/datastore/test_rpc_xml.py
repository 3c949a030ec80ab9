"""RESTCONF XML RPC input keeps the namespace declarations its identityref values use."""

from __future__ import annotations

from typing import Any

import pytest

from controller.datastore.rpc import xml_to_yang_form
from controller.errors import CatsError
from controller.model import Schema, nodes

SM = "urn:ietf:params:xml:ns:yang:ietf-cats-service-metrics"


def _select_service(schema: Schema) -> Any:
    found = nodes.ffi.new("struct ly_set **")
    path = b"/ietf-cats-service-metrics:select-service"
    assert nodes.lib.lys_find_xpath(schema.context.cdata, nodes.ffi.NULL, path, 0, found) == 0
    return found[0].snodes[0]


def test_input_root_is_renamed_and_value_prefixes_survive(schema: Schema) -> None:
    document = (
        f'<input xmlns="{SM}" xmlns:sm="{SM}"><cs-id>ARS</cs-id>'
        "<requirement><objective>sm:minimize-latency</objective></requirement></input>"
    )
    converted = xml_to_yang_form(document, _select_service(schema))
    assert converted.startswith("<select-service")
    assert f'xmlns:sm="{SM}"' in converted
    assert "sm:minimize-latency" in converted


def test_an_rpc_already_in_yang_form_is_unchanged(schema: Schema) -> None:
    document = f'<select-service xmlns="{SM}"><cs-id>ARS</cs-id></select-service>'
    assert xml_to_yang_form(document, _select_service(schema)) == document


def test_malformed_input_is_malformed_message(schema: Schema) -> None:
    with pytest.raises(CatsError) as caught:
        xml_to_yang_form("<input", _select_service(schema))
    assert caught.value.items[0].tag == "malformed-message"
