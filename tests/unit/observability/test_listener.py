"""Readiness checks (the listener itself is exercised by tests/functional/test_observability)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from controller import __version__
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


def test_the_listener_alone_brings_the_build_info() -> None:
    """An agent imports the listener and not the server's metrics: its /metrics still carries
    ``cats_build_info`` (a fresh interpreter, so that nothing else imported it first)."""
    probe = (
        "import sys, controller.observability.listener\n"
        "from prometheus_client import REGISTRY, generate_latest\n"
        "assert 'controller.observability.metrics' not in sys.modules\n"
        "print(generate_latest(REGISTRY).decode())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert f'cats_build_info{{version="{__version__}"}} 1.0' in out
