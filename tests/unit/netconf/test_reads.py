"""controller.netconf.reads and .narrow: a subtree filter reads the narrowest exact path.

Every filter is run twice: through :class:`Reads` (narrowed reads) and as the whole datastore
filtered by :func:`subtree_filter` (what a read without narrowing returns). The two must be the
same elements, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    ReadRequest,
    ReadResult,
    WithDefaults,
)
from controller.model import Schema
from controller.model.paths import PathResolver
from controller.netconf.narrow import key_values, narrow
from controller.netconf.reads import Filter, Reads
from controller.netconf.subtree import subtree_filter
from controller.types import DataPath

TEST_YANG = Path(__file__).resolve().parents[2] / "yang"
RC = "urn:example:rc-test"
CT = "urn:example:core-test"
ST = "urn:example:shapes-test"
RUNNING = DatastoreName.RUNNING
SEED: dict[str, object] = {
    "rc-test:top": {
        "name": "r1",
        "mtu": 1500,
        "tag": ["x", "y"],
        "hop": [
            {"name": "h1", "cost": 1},
            {"name": "h2", "cost": 2},
            {"name": "it's", "cost": 3},
            {"name": "a:b", "cost": 4},
        ],
        "link": [
            {"from": "a", "to": "b", "speed": 10},
            {"from": "a", "to": "c", "speed": 20},
            {"from": "b", "to": "c", "speed": 30},
        ],
    },
    "core-test:top": {
        "label": "L",
        "pool": [{"name": "p1"}],
        "item": [
            {"id": 1, "name": "i1", "addr": "a1", "pool": "p1"},
            {"id": 2, "name": "i2", "addr": "a2"},
        ],
    },
    "shapes-test:pools": {"pool": [{"name": "sp"}]},
    "shapes-test:area": {"slot": [{"n": 1, "label": "one"}, {"n": 2, "label": "two"}]},
}


class Recorder:
    """The core's reads, with the paths they asked for (the Reader seam)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.paths: list[str | None] = []

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        self.paths.append(request.path)
        return self.core.read(request, principal)


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    with Schema.for_server([TEST_YANG]) as compiled:
        yield compiled


@pytest.fixture(scope="module")
def core(schema: Schema, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Core]:
    state = tmp_path_factory.mktemp("reads") / "state"
    with Core(schema, state) as opened:
        opened.edit(RUNNING, [Edit(EditOperation.MERGE, DataPath("/"), json.dumps(SEED))], SYSTEM)
        yield opened


def read_json(core: Core) -> object:
    """Running as RFC 7951 JSON."""
    document = core.read(ReadRequest(RUNNING, None), SYSTEM).document
    return json.loads(document or "{}")


@pytest.fixture
def recorder(core: Core) -> Recorder:
    return Recorder(core)


@pytest.fixture(scope="module")
def resolver(schema: Schema) -> PathResolver:
    return PathResolver(schema.context)


def selectors(body: str) -> tuple[Any, ...]:
    holder = etree.fromstring(f"<filter>{body}</filter>")
    return tuple(child for child in holder if isinstance(child.tag, str))


def serialized(elements: list[Any]) -> list[str]:
    """The top-level elements in C14N 2.0 with prefixes renamed (lxml names the with-defaults
    prefix ``ns<N>`` by a counter), in any order (modules come in filter order or not)."""
    return sorted(
        etree.canonicalize(etree.tostring(element).decode(), rewrite_prefixes=True)
        for element in elements
    )


def both(
    recorder: Recorder,
    resolver: PathResolver,
    body: str,
    datastore: DatastoreName = RUNNING,
    **options: Any,
) -> tuple[list[str], list[str]]:
    """(narrowed, whole) results of one filter."""
    content = Content.ALL if datastore is DatastoreName.OPERATIONAL else Content.CONFIG
    narrowed = Reads(recorder, resolver).read(
        datastore, SYSTEM, content=content, filter_=Filter(subtree=selectors(body)), **options
    )
    everything = Reads(recorder.core, resolver).read(datastore, SYSTEM, content=content, **options)
    whole = subtree_filter(everything, selectors(body))
    return serialized(narrowed), serialized(whole)


def rc(inner: str) -> str:
    return f'<top xmlns="{RC}">{inner}</top>'


FILTERS = {
    "both keys": rc("<link><from>a</from><to>c</to></link>"),
    "both keys, reversed": rc("<link><to>c</to><from>a</from></link>"),
    "partial keys": rc("<link><from>a</from></link>"),
    "key as selection node": rc("<link><from/><to>c</to></link>"),
    "key twice": rc("<link><from>a</from><from>b</from><to>c</to></link>"),
    "one key, selection": rc("<hop><name>h2</name><cost/></hop>"),
    "one key, failing content match": rc("<hop><name>h2</name><cost>9</cost></hop>"),
    "one key, matching content match": rc("<hop><name>h2</name><cost>2</cost></hop>"),
    "two entries": rc("<hop><name>h1</name></hop><hop><name>h2</name></hop>"),
    "absent entry": rc("<hop><name>nope</name></hop>"),
    "quote in key": rc("<hop><name>it's</name></hop>"),
    "colon in key": rc("<hop><name>a:b</name></hop>"),
    "whitespace around key": rc("<hop><name>  h1 </name></hop>"),
    "attribute on entry": rc('<hop kind="x"><name>h1</name></hop>'),
    "attribute on key": rc('<hop><name kind="x">h1</name></hop>'),
    "attribute on container": rc('<hop xmlns:o="urn:o" o:a="1"><name>h1</name></hop>'),
    "namespace-less child": rc('<hop xmlns=""><name>h1</name></hop>'),
    "foreign namespace child": rc('<hop xmlns="urn:other"><name>h1</name></hop>'),
    "key in other namespace": rc(f'<hop><name xmlns="{CT}">h1</name></hop>'),
    "namespace-less top": "<top><hop><name>h1</name></hop></top>",
    "selection of a container's list": rc("<hop/>"),
    "content match at top": rc("<name>r1</name><hop><name>h1</name></hop>"),
    "leaf-list": rc("<tag>x</tag>"),
    "two filters of one container": rc("<hop><name>h1</name></hop>") + rc("<mtu/>"),
    "two modules": rc("<hop><name>h1</name></hop>")
    + f'<top xmlns="{CT}"><item><id>2</id><name/></item></top>',
    "numeric key written differently": f'<top xmlns="{CT}"><item><id>01</id></item></top>',
    "numeric key": f'<top xmlns="{CT}"><item><id>1</id></item></top>',
    "list in a choice": f'<area xmlns="{ST}"><slot><n>2</n></slot></area>',
    "unknown module": '<top xmlns="urn:nobody"><a/></top>',
    "unknown node": rc("<nothing><name>h1</name></nothing>"),
    "empty filter": "",
    "top-level list": f'<site xmlns="{ST}"><id>1</id></site>',
}


@pytest.mark.parametrize("body", FILTERS.values(), ids=FILTERS.keys())
def test_narrowed_reads_return_what_a_whole_read_does(
    recorder: Recorder, resolver: PathResolver, body: str
) -> None:
    narrowed, whole = both(recorder, resolver, body)
    assert narrowed == whole


@pytest.mark.parametrize("body", FILTERS.values(), ids=FILTERS.keys())
@pytest.mark.parametrize(
    "with_defaults", [WithDefaults.REPORT_ALL, WithDefaults.REPORT_ALL_TAGGED, WithDefaults.TRIM]
)
def test_narrowed_reads_with_defaults(
    recorder: Recorder, resolver: PathResolver, body: str, with_defaults: WithDefaults
) -> None:
    narrowed, whole = both(recorder, resolver, body, with_defaults=with_defaults)
    assert narrowed == whole


@pytest.mark.parametrize("body", FILTERS.values(), ids=FILTERS.keys())
def test_narrowed_reads_of_operational(
    recorder: Recorder, resolver: PathResolver, body: str
) -> None:
    narrowed, whole = both(recorder, resolver, body, DatastoreName.OPERATIONAL)
    assert narrowed == whole


def test_one_entry_is_read_by_its_keys(recorder: Recorder, resolver: PathResolver) -> None:
    narrowed, _ = both(recorder, resolver, FILTERS["both keys"])
    assert recorder.paths == ["/rc-test:top/link[from='a'][to='c']"]
    assert len(narrowed) == 1
    assert "<n0:speed>20</n0:speed>" in narrowed[0]
    assert "<n0:speed>10</n0:speed>" not in narrowed[0]


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("partial keys", "/rc-test:top"),
        ("two entries", "/rc-test:top"),
        ("colon in key", "/rc-test:top"),
        ("quote in key", '/rc-test:top/hop[name="it\'s"]'),
        ("list in a choice", "/shapes-test:area/slot[n='2']"),
        ("two filters of one container", "/rc-test:top"),
        ("namespace-less top", None),
    ],
)
def test_reads_fall_back_where_keys_do_not_name_one_entry(
    recorder: Recorder, resolver: PathResolver, name: str, path: str | None
) -> None:
    both(recorder, resolver, FILTERS[name])
    assert recorder.paths == [path]


def test_report_all_tagged_reads_the_container(recorder: Recorder, resolver: PathResolver) -> None:
    both(recorder, resolver, FILTERS["both keys"], with_defaults=WithDefaults.REPORT_ALL_TAGGED)
    assert recorder.paths == ["/rc-test:top"]


def test_narrow_walks_containers_and_keyed_entries(resolver: PathResolver) -> None:
    top = resolver.child(None, "rc-test", "top")
    assert top is not None
    (selector,) = selectors(rc("<link><from>a</from><to>b</to><speed/></link>"))
    plan = narrow(selector, top, resolver)
    assert plan.path == "/rc-test:top/link[from='a'][to='b']"
    assert [node.name for node in plan.ancestors] == ["top"]


def test_key_values_need_every_key_once(resolver: PathResolver) -> None:
    link = resolver.child(resolver.child(None, "rc-test", "top"), "rc-test", "link")
    assert link is not None
    (entry,) = selectors(f'<link xmlns="{RC}"><from>a</from></link>')
    assert key_values(entry, link) is None
    (entry,) = selectors(f'<link xmlns="{RC}"><to> b </to><from>a</from></link>')
    assert key_values(entry, link) == ("a", "b")


RAW_FILTERS = {
    "no filter": None,
    "one container": rc(""),
    "two modules": rc("") + f'<top xmlns="{CT}"/>',
    "a container twice": rc("") + rc(""),
    "unknown node": f'<nothing xmlns="{RC}"/>' + rc(""),
}


@pytest.mark.parametrize("body", RAW_FILTERS.values(), ids=RAW_FILTERS.keys())
@pytest.mark.parametrize("with_defaults", [None, WithDefaults.REPORT_ALL, WithDefaults.TRIM])
@pytest.mark.parametrize("datastore", [RUNNING, DatastoreName.OPERATIONAL])
def test_raw_reads_return_what_element_reads_do(
    core: Core,
    resolver: PathResolver,
    body: str | None,
    with_defaults: WithDefaults | None,
    datastore: DatastoreName,
) -> None:
    """Whole containers are answered with the core's text unparsed: the same elements."""
    content = Content.ALL if datastore is DatastoreName.OPERATIONAL else Content.CONFIG
    filter_ = None if body is None else Filter(subtree=selectors(body))
    reads = Reads(core, resolver)
    options: dict[str, Any] = {"content": content, "filter_": filter_}
    raw = reads.read_raw(datastore, SYSTEM, with_defaults=with_defaults, **options)
    assert raw is not None
    elements = reads.read(datastore, SYSTEM, with_defaults=with_defaults, **options)
    assert elements, "the case reads something"
    parsed = list(etree.fromstring(f"<data>{raw}</data>"))
    assert serialized(parsed) == serialized(elements)


SELECTION_FILTERS = {
    "a list": rc("<hop/>"),
    "two lists": rc("<hop/><link/>"),
    "a leaf with a default, set": rc("<mtu/>"),
    "a leaf-list and a leaf": rc("<tag/><name/>"),
    "a list of another module": f'<top xmlns="{CT}"><item/></top>',
    "a default leaf alone": f'<top xmlns="{CT}"><mode/></top>',
    "a default leaf in a default container": f'<settings xmlns="{ST}"><level/></settings>',
    "two modules": rc("<hop/>") + f'<top xmlns="{CT}"><pool/></top>',
    "one container twice": rc("<hop/>") + rc("<link/>"),
    "a list in a choice": f'<area xmlns="{ST}"><slot/></area>',
    "a whole container and a part": rc("") + rc("<hop/>"),
    "a state container": rc("<counters/>"),
}


@pytest.mark.parametrize("body", SELECTION_FILTERS.values(), ids=SELECTION_FILTERS.keys())
@pytest.mark.parametrize("with_defaults", [None, WithDefaults.REPORT_ALL])
def test_selection_filters_are_applied_on_the_tree_as_on_elements(
    core: Core, resolver: PathResolver, body: str, with_defaults: WithDefaults | None
) -> None:
    """Containment and selection nodes alone: the core prints the selected nodes of its
    tree (``ReadRequest.selection``), the same elements as the whole read filtered."""
    before = read_json(core)
    filter_ = Filter(subtree=selectors(body))
    reads = Reads(core, resolver)
    options: dict[str, Any] = {"content": Content.CONFIG, "with_defaults": with_defaults}
    raw = reads.read_raw(RUNNING, SYSTEM, filter_=filter_, **options)
    assert raw is not None
    whole = subtree_filter(reads.read(RUNNING, SYSTEM, **options), selectors(body))
    parsed = list(etree.fromstring(f"<data>{raw}</data>"))
    assert serialized(parsed) == serialized(whole)
    assert read_json(core) == before  # the tree is whole again after the read


@pytest.mark.parametrize(
    "body",
    [
        rc("<hop><cost/></hop>"),
        f'<top xmlns="{RC}" xmlns:o="urn:o" o:a="1"/>',
        "<top/>",
        rc("r1"),
        rc("<name>r1</name><hop/>"),
        rc("<nothing/>"),
    ],
    ids=["containment of a list", "attribute", "namespace-less", "content", "match", "unknown"],
)
def test_raw_reads_leave_real_filters_to_elements(
    resolver: PathResolver, core: Core, body: str
) -> None:
    filter_ = Filter(subtree=selectors(body))
    raw = Reads(core, resolver).read_raw(RUNNING, SYSTEM, content=Content.CONFIG, filter_=filter_)
    assert raw is None
