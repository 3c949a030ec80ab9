"""What NACM needs of the compiled schema: the default-deny marks and the rule paths.

``nacm:default-deny-all`` and ``nacm:default-deny-write`` (RFC 8341 3.5.1.1, 3.5.1.2) apply
to the node that carries them and to all its descendants (RFC 8341 3.4.5 steps 9-10), in any
module the server loads, ``--yang-dir`` modules included. A rule's ``path`` (a
node-instance-identifier, RFC 8341 3.5.2) is resolved once per policy into the schema node of
each of its steps and the key predicates to compare, so matching a data node is a comparison
of schema node addresses and canonical values, never of path strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controller.datastore.schemawalk import array
from controller.model import native, nodes

ACM = "ietf-netconf-acm"
_LYS_DATA = (
    nodes.lib.LYS_CONTAINER
    | nodes.lib.LYS_LIST
    | nodes.lib.LYS_LEAF
    | nodes.lib.LYS_LEAFLIST
    | nodes.lib.LYS_ANYDATA
)

#: Schema nodes that hold secrets but whose modules carry no default-deny-all: treated as if
#: they did (RFC 7317 6 puts the password hashes of local users in ``authentication``, whose
#: module only says ``default-deny-write``). Applications add their own secret leaves.
SECRETS = ("/ietf-system:system/authentication/user/password",)


def address(pointer: Any) -> int:
    """A stable key for a libyang node (its address)."""
    return int(nodes.ffi.cast("uintptr_t", pointer))


@dataclass(frozen=True, slots=True)
class Marks:
    """The default-deny marks of one schema node, and what lies below it."""

    deny_all: bool  # default-deny-all on the node or an ancestor
    deny_write: bool  # default-deny-write (or -all) on the node or an ancestor
    deny_all_below: bool  # some descendant carries default-deny-all
    deny_write_below: bool  # some descendant carries either mark
    modules_below: frozenset[str]  # modules of the descendants (augments bring others)


def _own(snode: Any) -> tuple[bool, bool]:
    deny_all = deny_write = False
    for ext in array(snode.exts):
        definition = getattr(ext, "def")  # a Python keyword as a C field name
        if nodes.ffi.string(definition.module.name).decode() != ACM:
            continue
        name = nodes.ffi.string(definition.name).decode()
        deny_all |= name == "default-deny-all"
        deny_write |= name == "default-deny-write"
    return deny_all, deny_write


def module_of(snode: Any) -> str:
    """The name of the module that defines a schema node."""
    return str(nodes.ffi.string(snode.module.name).decode())


def _children(snode: Any) -> list[Any]:
    found = []
    child = nodes.lib.lysc_node_child(snode)
    while child:
        found.append(child)
        child = child.next
    return found


class SchemaMarks:
    """Marks per schema node, computed on first use and kept for the context's lifetime."""

    def __init__(self, ctx: Any, secrets: Iterable[str] = SECRETS) -> None:
        self._ctx = ctx
        self._marks: dict[int, Marks] = {}
        self._below: dict[int, tuple[bool, bool, frozenset[str]]] = {}
        self._secrets = {address(s) for s in map(self._find, secrets) if s is not None}

    def _find(self, path: str) -> Any:
        found = nodes.lib.lys_find_path(self._ctx, nodes.ffi.NULL, path.encode(), 0)
        nodes.clean_errors(self._ctx)
        return None if found == nodes.ffi.NULL else found

    def own(self, snode: Any) -> tuple[bool, bool]:
        """(default-deny-all, default-deny-write) carried by the node itself."""
        deny_all, deny_write = _own(snode)
        return deny_all or address(snode) in self._secrets, deny_write

    def of(self, snode: Any) -> Marks:
        """The marks of a schema node (data node, RPC, action or notification)."""
        key = address(snode)
        found = self._marks.get(key)
        if found is None:
            deny_all, deny_write = self.own(snode)
            parent = snode.parent
            if parent:
                above = self.of(parent)
                deny_all |= above.deny_all
                deny_write |= above.deny_write
            all_below, write_below, modules = self._descendants(snode)
            found = Marks(deny_all, deny_write or deny_all, all_below, write_below, modules)
            self._marks[key] = found
        return found

    def _descendants(self, snode: Any) -> tuple[bool, bool, frozenset[str]]:
        key = address(snode)
        found = self._below.get(key)
        if found is None:
            all_below = write_below = False
            modules: set[str] = set()
            for child in _children(snode):
                deny_all, deny_write = self.own(child)
                child_all, child_write, child_modules = self._descendants(child)
                all_below |= deny_all or child_all
                write_below |= deny_all or deny_write or child_write
                modules.add(module_of(child))
                modules |= child_modules
            found = (all_below, write_below, frozenset(modules))
            self._below[key] = found
        return found


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a rule path: the schema node, and the key values it requires."""

    schema: int  # address of the schema node
    keys: tuple[tuple[str, str], ...]  # (key leaf name or ".", canonical value)


_STEP = re.compile(r"(?:(?P<prefix>[A-Za-z_][\w.-]*):)?(?P<name>[A-Za-z_][\w.-]*)(?P<preds>.*)")
_PRED = re.compile(
    r"\[\s*(?:(?:[A-Za-z_][\w.-]*):)?(?P<key>[A-Za-z_][\w.-]*|\.)\s*=\s*"
    r"(?:'(?P<single>[^']*)'|\"(?P<double>[^\"]*)\")\s*\]"
)


def split_steps(path: str) -> list[str]:
    """The steps of an absolute path, split at the slashes outside predicates and quotes."""
    steps: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in path.strip():
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "/" and depth == 0:
            if current:
                steps.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        steps.append("".join(current))
    return steps


def compile_path(ctx: Any, path: str) -> tuple[Step, ...] | None:
    """The steps of a node-instance-identifier; None when it names no node of the schema
    (a rule that can then match nothing) or is not an absolute path of key predicates."""
    if not path.strip().startswith("/"):
        return None
    steps: list[Step] = []
    schema_path = ""
    module = ""
    for text in split_steps(path):
        match = _STEP.fullmatch(text.strip())
        if match is None:
            return None
        module = match.group("prefix") or module
        if not module:
            return None
        schema_path += f"/{module}:{match.group('name')}"
        snode = nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, schema_path.encode(), 0)
        if snode == nodes.ffi.NULL:
            nodes.clean_errors(ctx)
            return None
        keys = _keys(ctx, snode, match.group("preds"))
        if keys is None:
            return None
        steps.append(Step(address(snode), keys))
    return tuple(steps) if steps else None


def _keys(ctx: Any, snode: Any, predicates: str) -> tuple[tuple[str, str], ...] | None:
    keys: list[tuple[str, str]] = []
    rest = predicates.strip()
    while rest:
        match = _PRED.match(rest)
        if match is None:
            return None  # positional or malformed predicates match nothing
        key = match.group("key")
        value = (
            match.group("single") if match.group("single") is not None else match.group("double")
        )
        target = snode if key == "." else _child(snode, key)
        if target is None:
            return None
        canonical = canonical_value(ctx, target, value)
        if canonical is None:
            return None
        keys.append((key, canonical))
        rest = rest[match.end() :].strip()
    return tuple(keys)


def _child(snode: Any, name: str) -> Any:
    for child in _children(snode):
        if nodes.ffi.string(child.name).decode() == name:
            return child
    return None


def canonical_value(ctx: Any, snode: Any, value: str) -> str | None:
    """The canonical form of a value of a terminal schema node (``1.50`` and ``1.5`` are the
    same decimal64 key), or None when the value is not valid for it."""
    if not snode.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST):
        return None
    raw = value.encode()
    canonical = nodes.ffi.new("const char **")
    result = nodes.lib.lyd_value_validate(
        ctx, snode, raw, len(raw), nodes.ffi.NULL, nodes.ffi.NULL, canonical
    )
    if result not in (nodes.lib.LY_SUCCESS, nodes.lib.LY_EINCOMPLETE):
        nodes.clean_errors(ctx)  # not a valid value: the answer, not an error to report
        return None
    if canonical[0] == nodes.ffi.NULL:
        return value
    text = str(nodes.ffi.string(canonical[0]).decode())
    native.dict_remove(ctx, canonical[0])
    return text


def is_data(snode: Any) -> bool:
    """Whether a schema node has data instances (no choice or case)."""
    return bool(snode.nodetype & _LYS_DATA)
