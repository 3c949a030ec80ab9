"""Waiting on conditions, without sockets or processes."""

from __future__ import annotations

import itertools

import pytest

from controller.demo.launch import WaitTimeout, wait_until


def test_wait_until_returns_the_first_truthy_observation() -> None:
    counter = itertools.count()
    assert wait_until("three polls", lambda: next(counter) >= 2 and "done", timeout=5) == "done"


def test_a_condition_that_never_shows_names_what_was_last_seen() -> None:
    with pytest.raises(WaitTimeout) as caught:
        wait_until("GAS 0", lambda: None, timeout=0.1, seen=lambda: {"SCI-3": "GAS 600"})
    assert caught.value.what == "GAS 0"
    assert "waiting for GAS 0 (last seen: {'SCI-3': 'GAS 600'})" in str(caught.value)
