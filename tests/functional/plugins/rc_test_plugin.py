"""A ``catsctl serve --plugin`` for tests/yang/rc-test: handlers of its RPCs and action, state.

- ``rc-test:ping`` echoes its message and counts the pings in ``top/counters/packets``;
  the message ``refuse`` is answered with ``resource-denied``, ``crash`` with an exception
  the core turns into ``operation-failed``, and ``bad-output`` with output the schema does not
  have (the core must refuse it: 500, nothing of it reaches the client).
- ``rc-test:reset-counters`` (no output) sets the count back to zero.
- ``rc-test:top/link/reset`` answers ``done``; the reason ``locked`` is ``in-use``.
"""

from __future__ import annotations

import threading

from controller.datastore.api import Principal, Registrations
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.types import DataPath, SchemaPath

PING = "/rc-test:ping"
RESET_COUNTERS = "/rc-test:reset-counters"
LINK_RESET = "/rc-test:top/link/reset"
COUNTERS = "/rc-test:top/counters"


def _refuse(tag: str, message: str) -> CatsError:
    return CatsError(ErrorItem(ErrorType.APPLICATION, tag, message))


def register(registrations: Registrations) -> None:
    """Add the handlers and the state provider of rc-test."""
    guard = threading.Lock()
    pings = [0]

    def ping(principal: Principal, members: dict[str, object]) -> dict[str, object]:
        del principal
        message = str(members.get("message", ""))
        if message == "refuse":
            raise _refuse("resource-denied", "ping refused on request")
        if message == "crash":
            raise RuntimeError("the plugin's handler has a bug")
        if message == "bad-output":
            return {"no-such-leaf": "x"}
        with guard:
            pings[0] += 1
        return {"echo": message}

    def reset_counters(principal: Principal, members: dict[str, object]) -> dict[str, object]:
        del principal, members
        with guard:
            pings[0] = 0
        return {}

    def link_reset(principal: Principal, members: dict[str, object]) -> dict[str, object]:
        del principal
        if members.get("reason") == "locked":
            raise _refuse("in-use", "the link is in use")
        return {"done": True}

    def counters() -> dict[str, object]:
        with guard:
            return {"rc-test:counters": {"packets": str(pings[0])}}

    registrations.rpcs[SchemaPath(PING)] = ping
    registrations.rpcs[SchemaPath(RESET_COUNTERS)] = reset_counters
    registrations.rpcs[SchemaPath(LINK_RESET)] = link_reset
    registrations.state[DataPath(COUNTERS)] = counters
