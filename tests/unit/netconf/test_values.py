"""XML values that name modules, as data paths take them (controller.netconf.values)."""

from __future__ import annotations

import pytest

from controller.netconf.errors import NetconfError
from controller.netconf.values import identity_value, instance_value, json_value

CF = "urn:example:conform-test"
RC = "urn:example:rc-test"
MODULES = {CF: "conform-test", RC: "rc-test"}


def test_an_identityref_prefix_becomes_its_module() -> None:
    assert identity_value("t:tcp", {"t": CF}, MODULES.get) == "conform-test:tcp"


def test_an_unprefixed_identityref_is_in_the_default_namespace() -> None:
    assert identity_value("udp", {None: CF}, MODULES.get) == "conform-test:udp"


def test_an_unbound_prefix_is_refused() -> None:
    with pytest.raises(NetconfError):
        identity_value("x:tcp", {"t": CF}, MODULES.get)


def test_an_instance_identifier_names_modules_where_they_change() -> None:
    value = "/t:box/t:port[t:proto='t:tcp'][t:number='80']/r:x"
    found = instance_value(value, {"t": CF, "r": RC}, MODULES.get)
    assert found == "/conform-test:box/port[proto='t:tcp'][number='80']/rc-test:x"


def test_json_value_tells_the_two_apart() -> None:
    assert json_value("/t:box/t:label", {"t": CF}, MODULES.get) == "/conform-test:box/label"
    assert json_value("t:udp", {"t": CF}, MODULES.get) == "conform-test:udp"
