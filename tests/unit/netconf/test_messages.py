"""controller.netconf.messages: error-path as an XPath with its prefixes declared (RFC 6241 4.3)."""

from __future__ import annotations

import pytest
from lxml import etree

from controller.netconf.messages import error_path

BL = "urn:example:bench-list"
AUG = "urn:example:aug"
NAMESPACES = {"bench-list": BL, "aug": AUG}
DATA = f"""
<bench xmlns="{BL}" xmlns:a="{AUG}">
  <entry><id>4</id><name>four</name></entry>
  <entry><id>5</id><name>five</name><a:extra><a:port>80</a:port></a:extra></entry>
  <link><from>x]/'y</from><to>b</to></link>
  <tag>t1</tag><tag>t2</tag>
</bench>
"""


def namespace_of(module: str) -> str | None:
    return NAMESPACES.get(module)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "/bench-list:bench/entry[id='5']/name",
            "/bench-list:bench/bench-list:entry[bench-list:id='5']/bench-list:name",
        ),
        (
            "/bench-list:bench/entry[id='5']/aug:extra/port",
            "/bench-list:bench/bench-list:entry[bench-list:id='5']/aug:extra/aug:port",
        ),
        (
            """/bench-list:bench/link[from="x]/'y"][to='b']""",
            "/bench-list:bench/bench-list:link"
            """[bench-list:from="x]/'y"][bench-list:to='b']""",
        ),
        ("/bench-list:bench/tag[.='t2']", "/bench-list:bench/bench-list:tag[.='t2']"),
        ("/bench-list:bench/entry[2]/id", "/bench-list:bench/bench-list:entry[2]/bench-list:id"),
        (
            "/bench-list:bench/entry[bench-list:id='4']",
            "/bench-list:bench/bench-list:entry[bench-list:id='4']",
        ),
    ],
)
def test_error_path_prefixes_every_name(path: str, expected: str) -> None:
    element = error_path(path, namespace_of)
    assert element.text == expected
    used = {prefix for prefix in NAMESPACES if f"{prefix}:" in expected}
    assert {k: v for k, v in element.nsmap.items() if k in used} == {m: NAMESPACES[m] for m in used}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/bench-list:bench/entry[id='5']/name", ["five"]),
        ("/bench-list:bench/entry[id='5']/aug:extra/port", ["80"]),
        ("""/bench-list:bench/link[from="x]/'y"][to='b']/to""", ["b"]),
        ("/bench-list:bench/tag[.='t2']", ["t2"]),
    ],
)
def test_error_path_selects_the_node_with_the_namespaces_it_declares(
    path: str, found: list[str]
) -> None:
    element = error_path(path, namespace_of)
    document = etree.ElementTree(etree.fromstring(DATA))
    namespaces = {k: v for k, v in element.nsmap.items() if k is not None}
    selected = document.xpath(element.text, namespaces=namespaces)
    assert [node.text for node in selected] == found
