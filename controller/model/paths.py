"""RESTCONF resource paths (RFC 8040 3.5.3) to libyang data paths, resolved against the schema.

``/restconf/data/bench-list:bench/entry=5`` names the node whose libyang data path is
``/bench-list:bench/entry[id='5']``: each step is ``[module:]name[=key1,key2]``, the module is
inherited from the parent step, key values are percent-encoded and given in the order of the
list's ``key`` statement (a leaf-list entry gives its value). Resolution asks the compiled schema
(libyang) once per distinct schema path and caches the answer, so a request costs a dict lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote, unquote

import libyang
from _libyang import ffi, lib

from controller.errors import ErrorItem, ErrorType
from controller.model import native
from controller.model.errors import ModelError
from controller.types import DataPath, SchemaPath

#: A data path in libyang's form: ``/module:node/list[key='v']``; ``/`` for the datastore root.

ROOT = DataPath("/")
# RFC 3986 unreserved characters plus ':' stay as they are in a key value of a URI.
_KEY_SAFE = ":@!$&'()*+;"


class NodeKind(StrEnum):
    """The YANG statement that defines a schema node (the kinds a resource path can name)."""

    CONTAINER = "container"
    LIST = "list"
    LEAF = "leaf"
    LEAF_LIST = "leaf-list"
    ANYDATA = "anydata"
    ANYXML = "anyxml"
    RPC = "rpc"
    ACTION = "action"
    NOTIFICATION = "notification"


_KIND_OF = {
    libyang.SNode.CONTAINER: NodeKind.CONTAINER,
    libyang.SNode.LIST: NodeKind.LIST,
    libyang.SNode.LEAF: NodeKind.LEAF,
    libyang.SNode.LEAFLIST: NodeKind.LEAF_LIST,
    libyang.SNode.ANYDATA: NodeKind.ANYDATA,
    libyang.SNode.ANYXML: NodeKind.ANYXML,
    libyang.SNode.RPC: NodeKind.RPC,
    libyang.SNode.ACTION: NodeKind.ACTION,
    libyang.SNode.NOTIF: NodeKind.NOTIFICATION,
}


@dataclass(frozen=True, slots=True)
class SchemaNode:
    """What the protocols need to know of one schema node."""

    module: str
    name: str
    kind: NodeKind
    namespace: str
    schema_path: SchemaPath  # JSON form: /mod:a/b/mod2:c
    keys: tuple[str, ...] = ()
    config: bool = True
    ordered_by_user: bool = False
    #: A leaf or leaf-list whose values name modules: an identityref or an
    #: instance-identifier (also through a leafref or a union), RFC 7950 9.10.3, 9.13.2.
    qualified_values: bool = False
    presence: bool = False  # a presence container (RFC 7950 7.5.1)

    @property
    def qualified_name(self) -> str:
        """``module:name``, the RFC 7951 member name of the node at the top level."""
        return f"{self.module}:{self.name}"

    @property
    def is_operation(self) -> bool:
        """Whether the node is an RPC or an action (RFC 8040 3.6)."""
        return self.kind in (NodeKind.RPC, NodeKind.ACTION)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a resource path: the node, and the key values when it names an entry."""

    node: SchemaNode
    values: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A resolved resource path: its steps (none for the datastore root) and data path."""

    steps: tuple[Step, ...]
    data_path: DataPath

    @property
    def node(self) -> SchemaNode | None:
        """The target's schema node; None for the datastore root."""
        return self.steps[-1].node if self.steps else None

    @property
    def values(self) -> tuple[str, ...] | None:
        """The key values (or leaf-list value) of the target, when it names an entry."""
        return self.steps[-1].values if self.steps else None

    @property
    def api_path(self) -> str:
        """The resource path in RFC 8040 3.5.3 form, without a leading ``/``."""
        return format_api_path(self.steps)


def _error(tag: str, message: str, path: str | None = None) -> ModelError:
    return ModelError(ErrorItem(ErrorType.PROTOCOL, tag, message, path=path))


def _predicate(name: str, value: str) -> str:
    """A libyang key predicate ``[name='value']``; libyang 2.1 has no quote escaping."""
    if "'" not in value:
        return f"[{name}='{value}']"
    if '"' not in value:
        return f'[{name}="{value}"]'
    raise _error("invalid-value", f"a key value cannot hold both quote characters: {value!r}")


def step_data_path(node: SchemaNode, values: tuple[str, ...] | None, *, qualify: bool) -> str:
    """The libyang data path step for a node and its key values."""
    step = node.qualified_name if qualify else node.name
    if values is None:
        return step
    if node.kind is NodeKind.LEAF_LIST:
        return step + _predicate(".", values[0])
    return step + "".join(_predicate(k, v) for k, v in zip(node.keys, values, strict=True))


def build_data_path(steps: tuple[Step, ...]) -> DataPath:
    """The libyang data path of a sequence of steps (module named where it changes)."""
    if not steps:
        return ROOT
    parts: list[str] = []
    module = None
    for step in steps:
        parts.append(step_data_path(step.node, step.values, qualify=step.node.module != module))
        module = step.node.module
    return DataPath("/" + "/".join(parts))


def format_api_path(steps: tuple[Step, ...]) -> str:
    """Steps in RFC 8040 3.5.3 form, key values percent-encoded (for a Location header)."""
    parts: list[str] = []
    module = None
    for step in steps:
        name = step.node.qualified_name if step.node.module != module else step.node.name
        module = step.node.module
        if step.values is not None:
            name += "=" + ",".join(quote(value, safe=_KEY_SAFE) for value in step.values)
        parts.append(name)
    return "/".join(parts)


def split_api_path(raw: str) -> Iterator[tuple[str | None, str, tuple[str, ...] | None]]:
    """Split a percent-encoded api-path into (module, name, key values) per step.

    The split happens before decoding, so ``%2F`` and ``%2C`` stay inside a key value.
    """
    for segment in raw.strip("/").split("/"):
        if not segment:
            raise _error("invalid-value", "empty step in the resource path")
        identifier, sep, keys = segment.partition("=")
        identifier = unquote(identifier)
        module, colon, name = identifier.rpartition(":")
        if not name or (colon and not module):
            raise _error("invalid-value", f"malformed step {identifier!r}")
        values = tuple(unquote(value) for value in keys.split(",")) if sep else None
        yield (module or None), name, values


class PathResolver:
    """Resolves resource paths against one compiled schema; thread-safe, cached."""

    def __init__(self, context: libyang.Context) -> None:
        self._ctx = context
        self._nodes: dict[SchemaPath, SchemaNode | None] = {}
        self._lock = threading.Lock()
        self._modules: dict[str, str] | None = None
        self._prefixes: dict[str, str] | None = None

    def schema_node(self, schema_path: SchemaPath) -> SchemaNode | None:
        """The node at a JSON-form schema path (``/mod:a/b``), or None if there is none."""
        try:
            return self._nodes[schema_path]
        except KeyError:
            pass
        with self._lock:
            found = self._ctx.find_jsonpath(schema_path)
            if found is None:
                lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
            node = _describe(found, schema_path) if found is not None else None
            self._nodes[schema_path] = node
        return node

    def child(self, parent: SchemaNode | None, module: str, name: str) -> SchemaNode | None:
        """The child ``module:name`` of a node (or a top-level node when parent is None)."""
        prefix = parent.schema_path if parent is not None else ""
        return self.schema_node(SchemaPath(f"{prefix}/{module}:{name}"))

    def resolve(self, raw: str) -> ResolvedPath:
        """Resolve a percent-encoded api-path (the part after ``/restconf/data``).

        Raises:
            ModelError: ``invalid-value`` for a malformed path or wrong key count,
                ``unknown-element`` for a node the schema does not have.
        """
        if raw.strip("/") == "":
            return ResolvedPath((), ROOT)
        steps: list[Step] = []
        parent: SchemaNode | None = None
        parsed = list(split_api_path(raw))
        for index, (module, name, values) in enumerate(parsed):
            if module is None and parent is None:
                raise _error("invalid-value", f"the first step {name!r} must name its module")
            if parent is not None and parent.is_operation:
                raise _error("unknown-element", f"{parent.name} is an operation, not data")
            node = self.child(parent, module or (parent.module if parent else ""), name)
            if node is None or node.kind is NodeKind.NOTIFICATION:
                shown = f"{module}:{name}" if module else name
                raise _error("unknown-element", f"no schema node {shown!r}")
            last = index == len(parsed) - 1
            steps.append(Step(node, _check_values(node, values, last=last)))
            parent = node
        resolved = tuple(steps)
        return ResolvedPath(resolved, build_data_path(resolved))

    def resolve_child(self, target: ResolvedPath, member: str) -> SchemaNode:
        """The child a POST body names (``module:name``, or ``name`` in the parent's module)."""
        module, _, name = member.rpartition(":")
        parent = target.node
        if not module and parent is None:
            raise _error("invalid-value", f"top-level member {member!r} must name its module")
        node = self.child(parent, module or (parent.module if parent else ""), name)
        if node is None or node.is_operation or node.kind is NodeKind.NOTIFICATION:
            raise _error("unknown-element", f"no child {member!r} here", target.data_path)
        return node

    def canonical(self, node: SchemaNode, values: tuple[str, ...]) -> tuple[str, ...]:
        """Key values (a leaf-list value) of ``node`` in their canonical form (RFC 7950 9.3.2:
        ``1.50`` and ``1.5`` are one decimal64); a value the type refuses stays as it is."""
        if node.kind is NodeKind.LEAF_LIST:
            leaves = [node.schema_path]
        else:
            leaves = [SchemaPath(f"{node.schema_path}/{node.module}:{key}") for key in node.keys]
        return tuple(
            self._canonical(leaf, value) for leaf, value in zip(leaves, values, strict=False)
        )

    def _canonical(self, leaf: SchemaPath, value: str) -> str:
        with self._lock:
            found = self._ctx.find_jsonpath(leaf)
            if found is None:
                lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
                return value
            raw = value.encode()
            out = ffi.new("const char **")
            result = lib.lyd_value_validate(
                self._ctx.cdata, found.cdata, raw, len(raw), ffi.NULL, ffi.NULL, out
            )
            if result not in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE) or out[0] == ffi.NULL:
                lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
                return value
            text = str(ffi.string(out[0]).decode())
            native.dict_remove(self._ctx.cdata, out[0])
            return text

    def namespace(self, module: str) -> str | None:
        """The XML namespace of an implemented module, or None."""
        return self._namespaces().get(module)

    def module_of(self, namespace: str) -> str | None:
        """The implemented module of an XML namespace, or None."""
        for module, known in self._namespaces().items():
            if known == namespace:
                return module
        return None

    def prefix_of(self, namespace: str) -> str | None:
        """The YANG prefix of the module of an XML namespace (RFC 7950 7.1.4), or None."""
        if self._prefixes is None:
            with self._lock:
                self._prefixes = {
                    ffi.string(module.cdata.ns).decode(): module.prefix() for module in self._ctx
                }
        return self._prefixes.get(namespace)

    def _namespaces(self) -> dict[str, str]:
        if self._modules is None:
            with self._lock:
                self._modules = {
                    module.name(): ffi.string(module.cdata.ns).decode()
                    for module in self._ctx
                    if module.implemented()
                }
        return self._modules

    def operations(self) -> list[str]:
        """``module:rpc`` of every RPC of every implemented module (RFC 8040 3.3.2)."""
        found: list[str] = []
        for module in self._ctx:
            if module.implemented():
                found += [f"{module.name()}:{rpc.name()}" for rpc in module.children((_RPC,))]
        return sorted(found)


_RPC = libyang.SNode.RPC
_QUALIFIED = (libyang.Type.IDENT, libyang.Type.INST)
_TYPE_DEPTH = 8  # leafrefs and unions followed before giving up


def _names_modules(kind: libyang.Type, depth: int = 0) -> bool:
    """Whether values of a type carry module prefixes (identityref, instance-identifier)."""
    base = kind.base()
    if base in _QUALIFIED:
        return True
    if depth > _TYPE_DEPTH:
        return False
    if base == libyang.Type.LEAFREF:
        target = kind.leafref_type()
        return target is not None and _names_modules(target, depth + 1)
    if base == libyang.Type.UNION:
        return any(_names_modules(member, depth + 1) for member in kind.union_types())
    return False


def _check_values(
    node: SchemaNode, values: tuple[str, ...] | None, *, last: bool
) -> tuple[str, ...] | None:
    """Key values must match the list's keys; only the target may be a whole list."""
    if node.kind is NodeKind.LIST:
        if values is None and not last:
            raise _error("invalid-value", f"list {node.name!r} needs key values here")
        if values is not None and len(values) != len(node.keys):
            raise _error(
                "invalid-value",
                f"list {node.name!r} has {len(node.keys)} key(s), the path gives {len(values)}",
            )
    elif node.kind is NodeKind.LEAF_LIST:
        if values is not None and len(values) != 1:
            raise _error("invalid-value", f"leaf-list {node.name!r} takes one value")
    elif values is not None:
        raise _error("invalid-value", f"{node.name!r} is not a list and takes no key values")
    return values


def _describe(found: libyang.SNode, schema_path: SchemaPath) -> SchemaNode | None:
    kind = _KIND_OF.get(found.nodetype())
    if kind is None:
        return None
    module = found.module()
    keys: tuple[str, ...] = ()
    ordered = False
    if isinstance(found, libyang.SList):
        keys = tuple(key.name() for key in found.keys())  # noqa: SIM118 - not a dict
        ordered = bool(found.ordered())
    elif isinstance(found, libyang.SLeafList):
        ordered = bool(found.ordered())
    qualified = False
    presence = isinstance(found, libyang.SContainer) and found.presence() is not None
    if isinstance(found, libyang.SLeaf | libyang.SLeafList):
        qualified = _names_modules(found.type())
    return SchemaNode(
        qualified_values=qualified,
        presence=presence,
        module=module.name(),
        name=found.name(),
        kind=kind,
        namespace=ffi.string(module.cdata.ns).decode(),
        schema_path=schema_path,
        keys=keys,
        config=not found.config_false(),
        ordered_by_user=ordered,
    )
