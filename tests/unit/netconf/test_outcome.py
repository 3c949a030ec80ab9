"""controller.netconf.outcome: the caller, the outcome and the parameter readers."""

from __future__ import annotations

import pytest
from lxml import etree

from controller.datastore.api import Principal, WithDefaults
from controller.errors import CatsError
from controller.netconf.messages import BASE_NS, reply, to_bytes
from controller.netconf.outcome import Caller, Outcome, child_text, raw_data, with_defaults_of
from controller.netconf.reads import WD_NS
from controller.types import Element


def _operation(children: str) -> Element:
    return etree.fromstring(f'<get xmlns="{BASE_NS}" xmlns:wd="{WD_NS}">{children}</get>'.encode())


def test_caller_names_its_session_for_the_core_and_for_events() -> None:
    caller = Caller(7, "alice", Principal("alice"), lambda _: None)
    assert caller.session == "7"
    assert (caller.actor.session_id, caller.actor.user) == (7, "alice")


def test_an_outcome_without_children_is_ok_and_keeps_the_session() -> None:
    assert Outcome() == Outcome((), close=False)


def test_child_text_is_stripped_and_none_when_absent() -> None:
    operation = _operation("<source> running </source>")
    assert child_text(operation, "source") == "running"
    assert child_text(operation, "target") is None
    assert child_text(operation, "source", WD_NS) is None


def test_with_defaults_reads_rfc_6243_parameter() -> None:
    assert with_defaults_of(_operation("")) is None
    chosen = _operation("<wd:with-defaults>trim</wd:with-defaults>")
    assert with_defaults_of(chosen) is WithDefaults.TRIM


def test_a_bad_with_defaults_names_the_element() -> None:
    with pytest.raises(CatsError) as raised:
        with_defaults_of(_operation("<wd:with-defaults>all</wd:with-defaults>"))
    (item,) = raised.value.items
    assert (item.tag, item.info) == ("invalid-value", (("bad-element", "with-defaults"),))


def test_raw_data_is_spliced_into_the_serialized_reply_as_printed() -> None:
    printed = '<top xmlns="urn:example:t"><name>a &lt; b</name></top><other xmlns="urn:o"/>'
    outcome = raw_data(printed)
    attributes = [("message-id", '7 "<?cats-raw-data ?>"')]  # the mark, escaped in a value
    message = outcome.serialize(to_bytes(reply(attributes, outcome.children)))
    root = etree.fromstring(message)
    assert root.get("message-id") == '7 "<?cats-raw-data ?>"'
    (data,) = root
    assert data.tag == f"{{{BASE_NS}}}data"
    assert [etree.QName(child).localname for child in data] == ["top", "other"]
    assert data[0][0].text == "a < b"
    assert b"cats-raw-data ?></data>" not in message
