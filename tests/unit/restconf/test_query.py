"""Query parameters (RFC 8040 4.8)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from controller.datastore.api import Content, InsertWhere, WithDefaults
from controller.restconf.errors import RestconfError
from controller.restconf.query import (
    READ_PARAMS,
    STREAM_PARAMS,
    WRITE_PARAMS,
    parse_query,
)


def test_read_parameters() -> None:
    params = parse_query(
        "content=config&depth=2&with-defaults=report-all&fields=a%3Bb", READ_PARAMS
    )
    assert params.content is Content.CONFIG
    assert params.depth == 2
    assert params.with_defaults is WithDefaults.REPORT_ALL
    assert params.fields == "a;b"
    assert parse_query("depth=unbounded", READ_PARAMS).depth is None


def test_insert_and_point_decode_once() -> None:
    params = parse_query("insert=before&point=rc-test%3Atop%2Fhop%3Da%252Cb", WRITE_PARAMS)
    assert params.insert is InsertWhere.BEFORE
    assert params.point == "rc-test:top/hop=a%2Cb"


def test_stream_times() -> None:
    params = parse_query("start-time=2026-11-30T00:00:00Z&filter=/a", STREAM_PARAMS)
    assert params.start_time == datetime(2026, 11, 30, tzinfo=UTC)
    assert params.xpath_filter == "/a"


@pytest.mark.parametrize(
    ("query", "allowed"),
    [
        ("depth=0", READ_PARAMS),
        ("depth=x", READ_PARAMS),
        ("content=everything", READ_PARAMS),
        ("with-defaults=all", READ_PARAMS),
        ("depth=1&depth=2", READ_PARAMS),
        ("insert=first", READ_PARAMS),
        ("unknown=1", READ_PARAMS),
        ("insert=before", WRITE_PARAMS),
        ("point=rc-test:top/hop=a", WRITE_PARAMS),
        ("insert=middle", WRITE_PARAMS),
        ("stop-time=2026-11-30T00:00:00Z", STREAM_PARAMS),
        ("start-time=yesterday", STREAM_PARAMS),
        ("fields=", READ_PARAMS),
    ],
)
def test_bad_parameters_are_400(query: str, allowed: frozenset[str]) -> None:
    with pytest.raises(RestconfError) as caught:
        parse_query(query, allowed)
    assert caught.value.status == 400
    assert caught.value.items[0].tag == "invalid-value"
