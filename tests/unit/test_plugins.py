"""controller.plugins: loading ``--plugin`` modules into the core's registrations."""

from __future__ import annotations

import pytest

from controller.datastore.api import SYSTEM, Registrations
from controller.plugins import PluginError, apply_plugins, load_plugin
from controller.types import DataPath, SchemaPath

TEST_PLUGIN = "tests.functional.plugins.rc_test_plugin"


def test_a_plugin_registers_handlers_and_state() -> None:
    registrations = Registrations()
    apply_plugins([TEST_PLUGIN], registrations)
    assert set(registrations.rpcs) == {
        "/rc-test:ping",
        "/rc-test:reset-counters",
        "/rc-test:top/link/reset",
    }
    assert registrations.rpcs[SchemaPath("/rc-test:ping")](SYSTEM, {"message": "m"}) == {
        "echo": "m"
    }
    assert registrations.state[DataPath("/rc-test:top/counters")]() == {
        "rc-test:counters": {"packets": "1"}
    }


def test_missing_module_or_register_is_a_plugin_error() -> None:
    with pytest.raises(PluginError) as missing:
        load_plugin("tests.no_such_plugin")
    assert "tests.no_such_plugin" in missing.value.items[0].message
    with pytest.raises(PluginError) as no_register:
        load_plugin("json")
    assert "register(registrations)" in no_register.value.items[0].message


def test_a_failing_register_is_a_plugin_error() -> None:
    with pytest.raises(PluginError) as caught:
        apply_plugins(["tests.functional.plugins.failing_plugin"], Registrations())
    assert "register() failed" in caught.value.items[0].message
