"""Parse a whole-datastore document in linear time (a root replace, a seed, a copy-config).

libyang 2.1.30 searches the place of every top-level node it parses among the siblings parsed
so far (``lyd_insert_get_next_anchor``: no hash table at the top level), so a document with one
long top-level list is quadratic to parse: 1.7 s for 20k entries. A large RFC 7951 document is
therefore parsed member by member, long lists in chunks of :data:`CHUNK` entries, and the
pieces are joined in the order libyang gives their schema nodes (found on a one-entry copy of
each member). The result is the tree libyang would have built; errors are those of the piece
holding the first bad node.
"""

from __future__ import annotations

import json
from typing import Any

from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding

CHUNK = 500  # entries per parse: the search for a place costs CHUNK**2 / 2 steps at most
LARGE = 1 << 16  # characters below which a plain parse is as fast


def _join(head: Node, tail: Node) -> Node:
    """Concatenate two detached sibling lists; the first sibling of the result."""
    if not head:
        return tail
    if not tail:
        return head
    head_last, tail_last = head.prev, tail.prev
    head_last.next = tail
    tail.prev = head_last
    head.prev = tail_last
    return head


def _members(text: str) -> dict[str, Any] | None:
    """The top-level members of a JSON document, when it can be parsed in pieces."""
    try:
        document = json.loads(text)
    except ValueError:
        return None  # libyang reports the syntax error
    if not isinstance(document, dict) or any(name.startswith("@") for name in document):
        return None  # metadata members are aligned with their instances: parse whole
    return document


def _order(ctx: Any, runs: list[Node]) -> list[int]:
    """The indexes of ``runs`` in libyang's top-level order (modules by name, then schema)."""
    skeleton = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
    place: dict[int, int] = {}
    try:
        for index, run in enumerate(runs):
            copy = nodes.dup(run)
            place[nodes.native.address(copy) or 0] = index
            nodes.link(None, skeleton, copy)
        return [place[nodes.native.address(node) or 0] for node in nodes.siblings(skeleton[0])]
    finally:
        nodes.free_all(skeleton[0])


def parse_document(ctx: Any, text: str, encoding: Encoding) -> Node:
    """Parse a datastore document (not validated): the first top-level sibling or NULL."""
    members = _members(text) if encoding is Encoding.JSON and len(text) > LARGE else None
    if members is None:
        return nodes.parse_data(ctx, text, encoding)
    runs: list[Node] = []
    try:
        for name, value in members.items():
            pieces = (
                [value[start : start + CHUNK] for start in range(0, len(value), CHUNK)]
                if isinstance(value, list) and value
                else [value]
            )
            run = nodes.ffi.NULL
            runs.append(run)
            for piece in pieces:
                run = _join(run, nodes.parse_data(ctx, json.dumps({name: piece}), encoding))
                runs[-1] = run
        runs = [run for run in runs if run]
        first = nodes.ffi.NULL
        for index in _order(ctx, runs):
            first = _join(first, runs[index])
        return first
    except BaseException:
        for run in runs:
            nodes.free_all(run)
        raise
