"""Waiting on conditions and choosing ports, without processes."""

from __future__ import annotations

import itertools
import random
import socket

import pytest

from controller.demo import launch
from controller.demo.launch import (
    EPHEMERAL,
    LOWEST_PORT,
    WaitTimeout,
    free_port,
    port_taken,
    wait_until,
)


def test_wait_until_returns_the_first_truthy_observation() -> None:
    counter = itertools.count()
    assert wait_until("three polls", lambda: next(counter) >= 2 and "done", timeout=5) == "done"


def test_a_condition_that_never_shows_names_what_was_last_seen() -> None:
    with pytest.raises(WaitTimeout) as caught:
        wait_until("GAS 0", lambda: None, timeout=0.1, seen=lambda: {"SCI-3": "GAS 600"})
    assert caught.value.what == "GAS 0"
    assert "waiting for GAS 0 (last seen: {'SCI-3': 'GAS 600'})" in str(caught.value)


def test_a_free_port_is_below_the_kernels_ephemeral_range_and_bindable() -> None:
    low = int(EPHEMERAL.read_text().split()[0]) if EPHEMERAL.exists() else 32768
    port = free_port()
    assert LOWEST_PORT <= port < low
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))


def test_a_taken_port_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every draw taken: after PORT_TRIES draws the kernel chooses one."""
    drawn: list[int] = []
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        taken = holder.getsockname()[1]

        def draw(_: range) -> int:
            drawn.append(taken)
            return int(taken)

        monkeypatch.setattr(launch, "_below_ephemeral", lambda: range(10000, 30000))
        monkeypatch.setattr(random, "choice", draw)
        assert free_port() != taken
    assert len(drawn) == launch.PORT_TRIES


def test_a_port_is_never_chosen_twice() -> None:
    """A bed chooses all its ports before its children bind them, so a port chosen earlier
    is still free when chosen again: without memory, 500 random draws from the ~22,000 ports
    below the ephemeral range repeat one with a probability of 99.6 %."""
    ports = [free_port() for _ in range(500)]
    assert len(set(ports)) == len(ports)


def test_a_child_that_found_its_port_taken_is_worth_a_new_start() -> None:
    assert port_taken(RuntimeError("SCI-2 exited (1):\n[Errno 98] Address already in use"))
    assert port_taken(OSError(98, "Address already in use"))
    assert not port_taken(RuntimeError("cps exited (1):\nbad configuration"))
