"""Subtree filtering against the examples of RFC 6241 6.4."""

from __future__ import annotations

from typing import Any

from lxml import etree

from controller.netconf.subtree import subtree_filter

NS = "http://example.com/schema/1.2/config"
DATA = f"""
<top xmlns="{NS}">
  <users>
    <user><name>root</name><type>superuser</type><full-name>Charlie Root</full-name>
      <company-info><dept>1</dept><id>1</id></company-info></user>
    <user><name>fred</name><type>admin</type><full-name>Fred Flintstone</full-name>
      <company-info><dept>2</dept><id>2</id></company-info></user>
    <user><name>barney</name><type>admin</type><full-name>Barney Rubble</full-name>
      <company-info><dept>2</dept><id>3</id></company-info></user>
  </users>
  <groups><group><name>admin</name></group></groups>
</top>
"""


def run(filter_body: str) -> list[Any]:
    data = [etree.fromstring(DATA, etree.XMLParser(remove_blank_text=True))]
    holder = etree.fromstring(f"<filter>{filter_body}</filter>")
    return subtree_filter(data, list(holder))


def names(found: list[Any]) -> list[str]:
    return [node.text for node in found[0].iter(f"{{{NS}}}name")] if found else []


def test_empty_filter_selects_nothing() -> None:  # 6.4.1
    assert run("") == []


def test_select_the_entire_users_subtree() -> None:  # 6.4.3
    found = run(f'<top xmlns="{NS}"><users/></top>')
    assert names(found) == ["root", "fred", "barney"]
    assert found[0].find(f"{{{NS}}}groups") is None


def test_select_all_name_elements() -> None:  # 6.4.4
    found = run(f'<top xmlns="{NS}"><users><user><name/></user></users></top>')
    assert names(found) == ["root", "fred", "barney"]
    assert not list(found[0].iter(f"{{{NS}}}type"))


def test_one_specific_user_entry() -> None:  # 6.4.5
    found = run(f'<top xmlns="{NS}"><users><user><name>fred</name></user></users></top>')
    assert names(found) == ["fred"]
    assert found[0].find(f".//{{{NS}}}full-name").text == "Fred Flintstone"


def test_specific_elements_from_a_specific_entry() -> None:  # 6.4.6
    found = run(
        f'<top xmlns="{NS}"><users><user><name>fred</name><type/><full-name/></user></users></top>'
    )
    user = found[0].find(f".//{{{NS}}}user")
    assert [etree.QName(c).localname for c in user] == ["name", "type", "full-name"]


def test_multiple_subtrees() -> None:  # 6.4.7
    found = run(
        f'<top xmlns="{NS}"><users>'
        "<user><name>root</name><company-info/></user>"
        "<user><name>fred</name><company-info><id/></company-info></user>"
        "<user><name>barney</name><type>superuser</type><company-info><dept/></company-info></user>"
        "</users></top>"
    )
    assert names(found) == ["root", "fred"]
    fred = found[0].findall(f".//{{{NS}}}user")[1]
    assert [etree.QName(c).localname for c in fred.find(f"{{{NS}}}company-info")] == ["id"]


def test_namespace_mismatch_selects_nothing() -> None:  # 6.2.1
    assert run('<top xmlns="urn:other"><users/></top>') == []
