"""Conditional requests in RFC 9110 13.2.2 order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from controller.datastore.api import Revision
from controller.restconf.conditional import (
    Outcome,
    Preconditions,
    evaluate,
    format_etag,
    http_date,
)

NOW = datetime(2026, 11, 30, 12, 0, 0, 500_000, tzinfo=UTC)
REV = Revision("abc-7", NOW)
TAG = '"abc-7"'
BEFORE = "Mon, 30 Nov 2026 11:00:00 GMT"
AFTER = "Mon, 30 Nov 2026 13:00:00 GMT"
SAME = http_date(NOW)


def test_formatting() -> None:
    assert format_etag("abc-7") == TAG
    assert format_etag('W/"x"') == 'W/"x"'
    assert SAME == "Mon, 30 Nov 2026 12:00:00 GMT"


@pytest.mark.parametrize(
    ("pre", "safe", "expected"),
    [
        (Preconditions(), True, Outcome.PROCEED),
        (Preconditions(if_match=TAG), False, Outcome.PROCEED),
        (Preconditions(if_match='"other", ' + TAG), False, Outcome.PROCEED),
        (Preconditions(if_match='"other"'), False, Outcome.FAILED),
        (Preconditions(if_match="*"), False, Outcome.PROCEED),
        (Preconditions(if_match="W/" + TAG), False, Outcome.FAILED),  # strong comparison
        (Preconditions(if_none_match=TAG), True, Outcome.NOT_MODIFIED),
        (Preconditions(if_none_match="W/" + TAG), True, Outcome.NOT_MODIFIED),  # weak
        (Preconditions(if_none_match=TAG), False, Outcome.FAILED),
        (Preconditions(if_none_match="*"), False, Outcome.FAILED),
        (Preconditions(if_none_match='"other"'), True, Outcome.PROCEED),
        (Preconditions(if_modified_since=SAME), True, Outcome.NOT_MODIFIED),
        (Preconditions(if_modified_since=BEFORE), True, Outcome.PROCEED),
        (Preconditions(if_modified_since=SAME), False, Outcome.PROCEED),  # GET/HEAD only
        (Preconditions(if_unmodified_since=BEFORE), False, Outcome.FAILED),
        (Preconditions(if_unmodified_since=AFTER), False, Outcome.PROCEED),
        (Preconditions(if_unmodified_since="not a date"), False, Outcome.PROCEED),
        # If-Match decides; If-Unmodified-Since is then ignored (13.2.2 step 2).
        (Preconditions(if_match=TAG, if_unmodified_since=BEFORE), False, Outcome.PROCEED),
        # If-None-Match decides; If-Modified-Since is then ignored (step 4).
        (Preconditions(if_none_match='"x"', if_modified_since=SAME), True, Outcome.PROCEED),
    ],
)
def test_evaluate(pre: Preconditions, *, safe: bool, expected: Outcome) -> None:
    assert evaluate(pre, REV, safe=safe) is expected


def test_missing_resource() -> None:
    assert evaluate(Preconditions(if_match="*"), None, safe=False) is Outcome.FAILED
    assert evaluate(Preconditions(if_none_match="*"), None, safe=False) is Outcome.PROCEED
