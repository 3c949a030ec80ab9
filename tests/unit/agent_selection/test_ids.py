"""The ids derived from a session id fit their YANG types for every valid session id (pure)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from controller.agent_selection import ids
from controller.types import SessionId

DERIVED: list[Callable[[SessionId, int], str]] = [
    ids.commitment_id,
    ids.instruction_id,
    ids.handoff_id,
    ids.reservation_id,
    ids.decision_id,
]
UINT64_MAX = 2**64 - 1


def test_a_short_session_id_keeps_the_readable_forms() -> None:
    session = SessionId("s-84")
    derived = [derive(session, 1) for derive in DERIVED]
    assert derived == ["cm-s-84-1", "si-cm-s-84-1", "ho-s-84-1", "rsv-ho-s-84-1", "s-84/1"]


@pytest.mark.parametrize("length", [1, 100, 118, 120, 121, 122, 124, 125, 126, 127, 128, 200, 255])
@pytest.mark.parametrize("derive", DERIVED)
@pytest.mark.parametrize("number", [1, 99_999, UINT64_MAX])
def test_every_derived_id_fits_128_characters(
    derive: Callable[[SessionId, int], str], length: int, number: int
) -> None:
    session = SessionId("é" * length)  # characters, not bytes, as YANG counts them
    derived = derive(session, number)
    assert 1 <= len(derived) <= ids.MAX_ID
    assert derived.endswith(str(number))


def test_a_long_session_id_keeps_a_readable_prefix_and_a_digest_of_the_whole() -> None:
    session = SessionId("tenant-1/agent-run/" + "x" * 236)
    assert len(session) == 255
    found = ids.commitment_id(session, 7)
    assert len(found) == ids.MAX_ID  # exactly the bound: never equal to a readable id
    assert found.startswith("cm-tenant-1/agent-run/xxx")
    assert found.endswith("-7")
    assert "~" in found
    assert ids.commitment_id(session, 7) == found  # stable: a retry maps to the same id


def test_long_session_ids_differing_only_past_the_prefix_get_different_ids() -> None:
    common = "p" * 250
    one, other = SessionId(common + "aaaaa"), SessionId(common + "bbbbb")
    for derive in DERIVED:
        assert derive(one, 1) != derive(other, 1)
        assert derive(one, 1) != derive(one, 2)


def test_a_readable_id_of_the_bound_is_shortened_so_it_cannot_collide() -> None:
    """A readable id is shorter than the bound, a shortened one exactly the bound: a session
    id chosen to spell another session's shortened id still gets a different id."""
    long_session = SessionId("q" * 200)
    shortened = ids.commitment_id(long_session, 1)
    spelled = SessionId(shortened.removeprefix("cm-").removesuffix("-1"))
    assert ids.commitment_id(spelled, 1) != shortened


def test_no_room_is_an_error_not_an_overlong_id() -> None:
    with pytest.raises(ValueError, match="no room"):
        ids.fitted("h" * 110, SessionId("s" * 200), "-1")
