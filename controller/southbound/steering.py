"""Steering entries as values: from a selection outcome, compared, diffed, batched, in XML.

The C-PS's intended steering of a forwarder and what the forwarder holds are both maps from an
:data:`EntryKey` (``service`` by CS-ID, ``rule`` by commitment-id, ietf-cats-steering) to an
:class:`Entry`. A push writes :func:`diff` of the two, split by :func:`batches` into edit-configs
of at most :data:`BATCH` entries (``replace`` of an entry, ``remove`` of one not intended:
both idempotent, so a retried or reordered edit never creates a second commitment, agent
draft 9.1 MSG-10, 9.3). Pure: no socket; XML with lxml and explicit namespaces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lxml import etree

from controller.selection.joint import Outcome, ResultKind
from controller.types import CsId, Json

NS = "urn:ietf:params:xml:ns:yang:ietf-cats-steering"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
#: Entries per edit-config: the forwarder applies an edit of up to this many entries entry by
#: entry, a larger one by re-reading its whole configuration (controller.netconf.edits).
BATCH = 64

EntryKind = Literal["service", "rule"]
EntryKey = tuple[EntryKind, str]
Snapshot = Mapping[EntryKey, "Entry"]
_KEY_LEAF: dict[str, str] = {"service": "cs-id", "rule": "commitment-id"}
_KINDS: tuple[EntryKind, ...] = ("service", "rule")


def _canonical(value: Any) -> Any:
    """A comparable form: scalars as strings, lists sorted, a one-item list as its item (the
    XML of a leaf-list or list of one looks like a leaf or a container)."""
    if isinstance(value, Mapping):
        return {str(k).split(":", 1)[-1]: _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_canonical(v) for v in value]
        if len(items) == 1:
            return items[0]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``service`` or ``rule`` entry: its members (RFC 7951 names, key first); equal when
    their canonical forms are."""

    kind: EntryKind
    members: Json = field(compare=False)
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        text = json.dumps(_canonical(self.members), sort_keys=True)
        object.__setattr__(self, "digest", hashlib.sha256(text.encode()).hexdigest())

    @property
    def key(self) -> EntryKey:
        """``(kind, cs-id | commitment-id)``."""
        return (self.kind, str(self.members[_KEY_LEAF[self.kind]]))


def rule_entry(members: Json) -> Entry:
    """A MSG-10 steering rule (``steering/rule`` members, RFC 7951)."""
    ordered = {"commitment-id": members["commitment-id"]}
    ordered.update((k, v) for k, v in members.items() if k != "commitment-id")
    return Entry("rule", ordered)


def service_entry(cs_id: CsId, outcome: Outcome) -> Entry | None:
    """The ``service`` entry that installs a selection result at an ingress (6.2.3 step 7):
    normal steering to the CSCI-ID and its egress, network-only to the egress (fallback level
    2), the default route (level 3); None when the service is unavailable (no entry: the
    forwarder then uses the default route too). The decision-id is derived from the content,
    so an unchanged result is an unchanged entry."""
    members: Json = {"cs-id": cs_id}
    if outcome.result is ResultKind.SELECTED and outcome.csci_id and outcome.egress:
        members.update({"csci-id": outcome.csci_id, "egress-forwarder": outcome.egress})
    elif outcome.result is ResultKind.EGRESS_ONLY and outcome.egress:
        members.update({"fallback-mode": "network-only", "egress-forwarder": outcome.egress})
    elif outcome.result is ResultKind.DEFAULT_ROUTE:
        members["fallback-mode"] = "default-route"
    else:
        return None
    digest = hashlib.sha256(json.dumps(members, sort_keys=True).encode()).hexdigest()
    members["decision-id"] = f"steering-{digest[:16]}"
    return Entry("service", members)


def same_content(one: Entry, other: Entry) -> bool:
    """Whether two service entries install the same thing (their decision-ids aside)."""
    return bool(_canonical(_content(one)) == _canonical(_content(other)))


def _content(entry: Entry) -> Json:
    return {k: v for k, v in entry.members.items() if k != "decision-id"}


def with_decision(entry: Entry, decision_id: str) -> Entry:
    """A service entry naming the kept decision record that chose it (its provenance)."""
    return Entry(entry.kind, {**entry.members, "decision-id": decision_id})


@dataclass(frozen=True, slots=True)
class Changes:
    """What to write: entries to create or replace, keys of entries to remove."""

    put: tuple[Entry, ...] = ()
    remove: tuple[EntryKey, ...] = ()

    def __len__(self) -> int:
        return len(self.put) + len(self.remove)


def diff(intended: Snapshot, actual: Snapshot) -> Changes:
    """The changes that turn ``actual`` into ``intended`` (only the entries that differ)."""
    put = tuple(entry for key, entry in intended.items() if actual.get(key) != entry)
    remove = tuple(key for key in actual if key not in intended)
    return Changes(put, remove)


def applied(actual: Snapshot, changes: Changes) -> dict[EntryKey, Entry]:
    """``actual`` after ``changes`` were committed."""
    result = dict(actual)
    for key in changes.remove:
        result.pop(key, None)
    result.update((entry.key, entry) for entry in changes.put)
    return result


def batches(changes: Changes, size: int = BATCH) -> list[Changes]:
    """``changes`` in edits of at most ``size`` entries, puts before removals."""
    items: list[Entry | EntryKey] = [*changes.put, *changes.remove]
    result: list[Changes] = []
    for start in range(0, len(items), size):
        chunk = items[start : start + size]
        puts = tuple(i for i in chunk if isinstance(i, Entry))
        removes = tuple(i for i in chunk if not isinstance(i, Entry))
        result.append(Changes(puts, removes))
    return result


# -- XML (RFC 6241 7.2 edit-config, 6 subtree filtering) ----------------------------------------


def _leaves(parent: Any, name: str, value: Any) -> None:
    if isinstance(value, list | tuple):
        for item in value:
            _leaves(parent, name, item)
        return
    child = etree.SubElement(parent, f"{{{NS}}}{name.split(':', 1)[-1]}")
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _leaves(child, key, inner)
    elif isinstance(value, bool):
        child.text = "true" if value else "false"
    elif value is not None:
        child.text = str(value)


FENCING_NS = "urn:cats-controller:yang:cats-fencing"  # the forwarder's fencing module


def fencing_config(term: int) -> Any:
    """The ``<config>`` that writes a cluster leader's term (cats-fencing, docs/cluster.md)."""
    config = etree.Element(f"{{{NC}}}config", nsmap={None: NC})
    fencing = etree.SubElement(config, f"{{{FENCING_NS}}}fencing", nsmap={None: FENCING_NS})
    etree.SubElement(fencing, f"{{{FENCING_NS}}}leader-term").text = str(term)
    return config


def edit_config(changes: Changes) -> Any:
    """The ``<config>`` of one edit-config: each entry replaced, each removal ``remove``."""
    config = etree.Element(f"{{{NC}}}config", nsmap={None: NC})
    steering = etree.SubElement(config, f"{{{NS}}}steering", nsmap={None: NS, "nc": NC})
    for entry in changes.put:
        _leaves(steering, entry.kind, entry.members)
        steering[-1].set(f"{{{NC}}}operation", "replace")
    for kind, key in changes.remove:
        element = etree.SubElement(steering, f"{{{NS}}}{kind}")
        element.set(f"{{{NC}}}operation", "remove")
        etree.SubElement(element, f"{{{NS}}}{_KEY_LEAF[kind]}").text = key
    return config


def subtree_filter() -> Any:
    """The subtree filter of get-config that selects the steering entries."""
    steering = etree.Element(f"{{{NS}}}steering", nsmap={None: NS})
    etree.SubElement(steering, f"{{{NS}}}service")
    etree.SubElement(steering, f"{{{NS}}}rule")
    return steering


def _members(element: Any) -> Any:
    children = [c for c in element if isinstance(c.tag, str)]
    if not children:
        return element.text or ""
    result: Json = {}
    for child in children:
        name = etree.QName(child).localname
        value = _members(child)
        if name in result:
            previous = result[name]
            result[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            result[name] = value
    return result


def parse_steering(data: Any) -> dict[EntryKey, Entry]:
    """The entries of a get-config ``<data>`` element (or its ``<steering>``)."""
    found: dict[EntryKey, Entry] = {}
    roots = [data] if etree.QName(data).localname == "steering" else data.iter(f"{{{NS}}}steering")
    for steering in roots:
        for kind in _KINDS:
            for element in steering.iterchildren(f"{{{NS}}}{kind}"):
                entry = Entry(kind, _members(element))
                found[entry.key] = entry
    return found


def entries_of(items: Iterable[Entry]) -> dict[EntryKey, Entry]:
    """Entries by key."""
    return {entry.key: entry for entry in items}
