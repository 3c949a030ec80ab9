"""ietf-netconf-monitoring's datastore locks (controller.netconf.monitoring): the core's holders."""

from __future__ import annotations

from typing import Any

from controller.datastore.api import DatastoreName
from controller.netconf.monitoring import NETCONF_STATE, netconf_state
from controller.netconf.sessions import Registry


def locks(state: dict[str, Any]) -> dict[str, Any]:
    datastores = state[NETCONF_STATE]["datastores"]["datastore"]
    return {
        entry["name"]: entry["locks"]["global-lock"] for entry in datastores if "locks" in entry
    }


def test_locks_are_the_cores_with_the_time_netconf_took_them() -> None:
    registry = Registry()
    registry.locked(DatastoreName.CANDIDATE, "7")
    taken = registry.locked_time(DatastoreName.CANDIDATE, "7")
    state = netconf_state(registry, {DatastoreName.CANDIDATE: "7"}, [], [])
    assert locks(state) == {
        "candidate": {
            "locked-by-session": 7,
            "locked-time": taken.isoformat().replace("+00:00", "Z"),
        }
    }


def test_a_lock_the_core_released_is_not_listed() -> None:
    registry = Registry()
    registry.locked(DatastoreName.RUNNING, "7")  # e.g. kill-session: the core freed it first
    assert locks(netconf_state(registry, {}, [], [])) == {}


def test_a_lock_taken_outside_netconf_is_listed_from_when_it_was_seen() -> None:
    registry = Registry()
    first = locks(netconf_state(registry, {DatastoreName.RUNNING: "9"}, [], []))
    again = locks(netconf_state(registry, {DatastoreName.RUNNING: "9"}, [], []))
    assert first == again
    assert first["running"]["locked-by-session"] == 9
