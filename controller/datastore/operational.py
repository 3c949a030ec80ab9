"""The operational datastore (RFC 8342 5.3): running's configuration plus registered state.

State providers render their ``config false`` subtree as RFC 7951 JSON when it is read; only
the providers whose subtree overlaps the read are called, and their output is parsed without
validation (it is the application's own data, printed by the same model) into a tree that
exists for that one read. With ``with_origin`` (RFC 8342 7.4) the read target and every
provider subtree carry ``ietf-origin:origin``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from controller.datastore import datapath
from controller.datastore.api import Content, ReadRequest, Revision
from controller.datastore.errors import operation_failed
from controller.datastore.reads import within
from controller.errors import CatsError
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath

INTENDED = "ietf-origin:intended"
LEARNED = "ietf-origin:learned"
SYSTEM = "ietf-origin:system"


def provider_paths(registered: Mapping[DataPath, object], request: ReadRequest) -> list[DataPath]:
    """The registered state subtrees a read needs."""
    if request.content is Content.CONFIG:
        return []
    return [path for path in registered if within(request.path, path)]


def state_revision(config: Revision, states: Mapping[DataPath, dict[str, object]]) -> Revision:
    """The revision of an operational resource: its configuration's, changed by its state.

    State is rendered when read and has no change history, so its entity-tag is a digest of
    what the providers returned (equal state, equal tag: If-None-Match still saves a transfer)
    and its last-modified time is now (If-Modified-Since never hides a change).
    """
    if not states:
        return config
    rendered = json.dumps(states, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(rendered.encode(), digest_size=8).hexdigest()
    now = datetime.now(UTC).replace(microsecond=0)
    return Revision(f"{config.etag}-{digest}", max(config.last_modified, now))


def add_state(ctx: Any, tree: Any, region: DataPath, state: dict[str, object]) -> None:
    """Parse one provider's output into ``tree`` (``struct lyd_node **``) at its region."""
    text = json.dumps(state)
    parent_path = datapath.parent(region)
    if parent_path == datapath.ROOT:
        top = nodes.parse_data(ctx, text, Encoding.JSON, state=True)
    else:
        top = nodes.new_path(ctx, None, parent_path)
        parent = nodes.find(ctx, top, parent_path)
        try:
            nodes.parse_data(ctx, text, Encoding.JSON, parent, state=True)
        except Exception:
            nodes.free_all(top)
            raise
    if top and nodes.lib.lyd_merge_siblings(tree, top, nodes.lib.LYD_MERGE_DESTRUCT):
        raise nodes.fail(ctx)


def config_part(ctx: Any, running: Node, request: ReadRequest) -> Node:
    """A copy of the part of running a read covers (NULL when none)."""
    if request.content is Content.NONCONFIG or not running:
        return nodes.ffi.NULL
    if request.path is None:
        out = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
        opts = nodes.lib.LYD_DUP_RECURSIVE | nodes.lib.LYD_DUP_WITH_FLAGS
        if nodes.lib.lyd_dup_siblings(running, nodes.ffi.NULL, opts, out):
            raise nodes.fail(ctx)
        return out[0]
    node = nodes.find(ctx, running, request.path)
    if node is None:
        return nodes.ffi.NULL
    return nodes.top_of(nodes.dup(node, with_parents=True))


def build(
    ctx: Any, running: Node, request: ReadRequest, states: Mapping[DataPath, dict[str, object]]
) -> Any:
    """The operational tree of one read (``struct lyd_node **``; the caller frees it)."""
    tree = nodes.ffi.new("struct lyd_node **", config_part(ctx, running, request))
    try:
        for region, state in states.items():
            if state:
                add_state(ctx, tree, region, state)
    except Exception as exc:
        nodes.free_all(tree[0])
        if isinstance(exc, CatsError):
            raise
        raise operation_failed(f"state provider output refused: {exc}") from exc
    return tree


def annotate_origin(
    ctx: Any, tree: Any, request: ReadRequest, origins: Mapping[DataPath, str]
) -> None:
    """Put ``ietf-origin:origin`` on the read target and on each state subtree under it."""
    targets = (
        [request.path] if request.path else [nodes.path_of(n) for n in nodes.siblings(tree[0])]
    )
    for path in targets:
        node = nodes.find(ctx, tree[0], path)
        if node is not None:
            origin = next((o for r, o in origins.items() if datapath.is_within(path, r)), INTENDED)
            _set_origin(ctx, node, origin)
    for region, origin in origins.items():
        if request.path is None or datapath.is_within(region, request.path):
            for node in nodes.find_all(ctx, tree[0], region):
                _set_origin(ctx, node, origin)


def _set_origin(ctx: Any, node: Node, origin: str) -> None:
    nodes.lib.lyd_new_meta(
        ctx, node, nodes.ffi.NULL, b"ietf-origin:origin", origin.encode(), 0, nodes.ffi.NULL
    )
