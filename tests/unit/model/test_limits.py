"""controller.model.limits: a document's shape is bounded before anything parses it."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from controller.model.limits import (
    DocumentLimits,
    LimitError,
    check_json_shape,
    check_xml,
    check_xml_markup,
    load_json,
    parse_bounded_xml,
)

LIMITS = DocumentLimits(max_attributes=8, max_elements=1000, max_depth=16)
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


def _tag(attributes: int) -> bytes:
    pairs = b" ".join(b'a%d="v>%d"' % (n, n) for n in range(attributes))
    return b"<e " + pairs + b"/>"


def test_attributes_are_counted_per_element_with_quotes_and_angles_in_values() -> None:
    check_xml_markup(b"<r>" + _tag(8) * 50 + b"</r>", LIMITS)
    with pytest.raises(LimitError, match="more than 8 attributes") as raised:
        check_xml_markup(b"<r>" + _tag(9) + b"</r>", LIMITS)
    assert raised.value.too_big
    single = b"<e " + b" ".join(b"a%d='1'" % n for n in range(9)) + b"/>"
    with pytest.raises(LimitError):
        check_xml_markup(single, LIMITS)
    declarations = b"<e " + b" ".join(b'xmlns:p%d="urn:%d"' % (n, n) for n in range(9)) + b"/>"
    with pytest.raises(LimitError):
        check_xml_markup(declarations, LIMITS)


def test_a_200k_attribute_element_is_refused_without_parsing() -> None:
    huge = b"<rpc " + b" ".join(b'a%d="1"' % n for n in range(200_000)) + b"/>"
    with pytest.raises(LimitError):
        check_xml_markup(huge, DocumentLimits())


def test_elements_and_depth() -> None:
    with pytest.raises(LimitError, match="more than 1000 elements"):
        check_xml_markup(b"<r>" + b"<a/>" * 1000 + b"</r>", LIMITS)
    deep = b"<a>" * 17 + b"</a>" * 17
    with pytest.raises(LimitError, match="nested more than 16") as raised:
        parse_bounded_xml(deep, PARSER, LIMITS)
    assert not raised.value.too_big
    assert parse_bounded_xml(b"<a>" * 16 + b"</a>" * 16, PARSER, LIMITS) is not None
    with pytest.raises(LimitError, match="nested"):
        check_xml(b"<a>" * 5000 + b"</a>" * 5000, DocumentLimits())  # past libxml2 too
    check_xml(b"<a><b/><not-closed>", LIMITS)  # not well-formed: its own parser says so


def test_json_depth_ignores_brackets_in_strings_and_escapes() -> None:
    check_json_shape(json.dumps({"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "b": '\\"[[[['}), LIMITS)
    nested: object = 1
    for _ in range(17):
        nested = [nested]
    with pytest.raises(LimitError, match="nested more than 16"):
        check_json_shape(json.dumps(nested), LIMITS)
    with pytest.raises(LimitError, match="nested"):
        load_json("[" * 100_000 + "]" * 100_000, DocumentLimits())


def test_json_values_are_bounded_and_names_unique() -> None:
    with pytest.raises(LimitError, match="more than 1000 values"):
        check_json_shape(json.dumps(list(range(1000))), LIMITS)
    with pytest.raises(LimitError, match="'name' appears twice") as raised:
        load_json('{"x": {"name": "a", "name": "b"}}', LIMITS)
    assert not raised.value.too_big
    assert load_json('{"x": [{"name": "a"}, {"name": "b"}]}', LIMITS) == {
        "x": [{"name": "a"}, {"name": "b"}]
    }
