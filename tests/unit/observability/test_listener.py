"""Readiness checks (the listener itself is exercised by tests/functional/test_observability)."""

from __future__ import annotations

import pytest

from controller.observability.listener import Readiness, parse_address


def test_ready_when_every_check_holds_and_a_failing_check_is_not_ready() -> None:
    readiness = Readiness()
    readiness.expect("datastore")
    assert readiness.status() == {"datastore": False}
    readiness.done("datastore")

    def broken() -> bool:
        raise RuntimeError("cannot tell")

    readiness.set("southbound", broken)
    assert readiness.status() == {"datastore": True, "southbound": False}


@pytest.mark.parametrize(
    ("text", "found"), [("127.0.0.1:9180", ("127.0.0.1", 9180)), ("[::1]:0", ("::1", 0))]
)
def test_addresses(text: str, found: tuple[str, int]) -> None:
    assert parse_address(text) == found


@pytest.mark.parametrize("text", ["9180", "host:", "host:70000", ":80"])
def test_bad_addresses(text: str) -> None:
    with pytest.raises(ValueError, match="ADDR:PORT"):
        parse_address(text)
