"""The libyang schema context: which modules are loaded, from where, and instance validation.

This is the one place that talks to libyang's C library for parsing and validation, so that
libyang's structured error items (message, data path, app-tag, validation code) reach the
protocols as :class:`~controller.errors.ErrorItem` instead of one flattened string.
"""

from __future__ import annotations

import json
import re
import sysconfig
from collections.abc import Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any

import libyang
from _libyang import ffi, lib

from controller.errors import ErrorItem, ErrorType
from controller.model.errors import ModelError
from controller.types import SchemaPath

# Keep libyang's error locations: with logging on, each stored error carries its data path.
libyang.configure_logging(enable_py_logger=True)
_LOCATION = re.compile(r'(?:Data|Schema) location "([^"]*)"')

#: The five modules of the public contract (docs/architecture.md), in import order.
CATS_MODULES: tuple[str, ...] = (
    "ietf-cats-types",
    "ietf-cats-service-metrics",
    "ietf-cats-sci",
    "ietf-cats-agent-selection",
    "ietf-cats-steering",
)


#: The standard modules a server built on the core implements besides its own (RFC 8525,
#: 8342, 8341, 7317, 6243, 8040, 8072, 6470), all found in pyang's or libyang's bundled modules.
STANDARD_MODULES: tuple[str, ...] = (
    "ietf-yang-library",
    "ietf-datastores",
    "ietf-netconf-acm",
    "ietf-system",
    "ietf-origin",
    "ietf-netconf-with-defaults",
    "ietf-restconf",
    "ietf-restconf-monitoring",
    "ietf-yang-patch",
    "ietf-netconf-notifications",
)

#: The product's own modules (not CATS proposals: their own namespace,
#: ``urn:cats-controller:yang:MODULE``): commit history, rollback, compare, audit, provenance
#: and login counters (docs/architecture.md).
PRODUCT_MODULES: tuple[str, ...] = ("cats-controller-admin",)

#: The agents' configuration modules (product modules too, never in a server's schema): each
#: agent validates its configuration file against its own (agents.common.config).
AGENT_MODULES: tuple[str, ...] = (
    "cats-csma-config",
    "cats-cnma-config",
    "cats-forwarder-config",
)

#: Everything ``catsctl serve`` implements before any ``--yang-dir``.
SERVER_MODULES: tuple[str, ...] = CATS_MODULES + PRODUCT_MODULES + STANDARD_MODULES

#: The features to enable, by module; a module not named has none (RFC 7950 7.20.1).
Features = Mapping[str, Sequence[str]]

#: The features a server enables by default: ietf-system's local users with crypt-hash
#: passwords (RFC 7317 3.2), which RESTCONF basic authentication checks against.
SERVER_FEATURES: dict[str, tuple[str, ...]] = {"ietf-system": ("authentication", "local-users")}

_MODULE_FILE = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*?)(?:@\d{4}-\d{2}-\d{2})?\.yang$")


def modules_in(folder: Path) -> list[str]:
    """Names of the modules (not submodules) whose ``.yang`` files are in a folder."""
    names: list[str] = []
    for path in sorted(folder.glob("*.yang")):
        match = _MODULE_FILE.match(path.name)
        head = path.read_text(errors="replace").lstrip()
        if match and not head.startswith("submodule") and match["name"] not in names:
            names.append(match["name"])
    return names


class InstanceKind(StrEnum):
    """What an instance document is, as yanglint's ``-t`` names it."""

    DATA = "data"  # a complete datastore, config and state
    CONFIG = "config"  # configuration only: state nodes are refused
    RPC = "rpc"  # an RPC or action input
    NOTIF = "notif"  # a notification


class Encoding(StrEnum):
    """Instance encodings: RFC 7951 JSON and XML."""

    JSON = "json"
    XML = "xml"


def project_yang_dir() -> Path:
    """The folder of the CATS modules: ``yang/`` of the source tree, else the installed copy."""
    source = Path(__file__).resolve().parents[2] / "yang"
    if source.is_dir():
        return source
    return Path(sysconfig.get_path("data")) / "share" / "cats-controller" / "yang"


def standard_yang_dirs() -> list[Path]:
    """Folders of the standard IETF and IANA modules that pyang installs alongside itself."""
    share = Path(sysconfig.get_path("data")) / "share" / "yang" / "modules"
    return [path for path in (share / "ietf", share / "iana") if path.is_dir()]


# RFC 7950 section 15 app-tags that libyang reports, and the error-tag each goes with.
_APP_TAG_TO_TAG = {
    "data-not-unique": "operation-failed",
    "too-many-elements": "operation-failed",
    "too-few-elements": "operation-failed",
    "must-violation": "operation-failed",
    "instance-required": "data-missing",
    "missing-choice": "data-missing",
    "missing-instance": "bad-attribute",
}


# libyang 2.1 reports a missing key, a missing mandatory node and a bad value all as LYVE_DATA
# with no app-tag; only the message template tells them apart. These are libyang's templates
# (LY_VCODE_NOKEY, LY_VCODE_NOMAND), kept in one table so that a libyang upgrade that changes
# them breaks tests/unit/model/test_schema.py rather than an error-tag silently.
_DATA_TEMPLATE_TO_TAG = (
    ("List instance is missing its key", "missing-element"),
    ("Mandatory node", "missing-element"),
)


def _error_tag(vecode: int, app_tag: str | None, message: str) -> str:
    """Map one libyang validation error to the RFC 6241 Appendix A error-tag."""
    if app_tag is not None:
        return _APP_TAG_TO_TAG.get(app_tag, "operation-failed")
    if vecode in (lib.LYVE_SYNTAX_JSON, lib.LYVE_SYNTAX_XML, lib.LYVE_SYNTAX):
        return "malformed-message"
    if vecode == lib.LYVE_REFERENCE:  # a node or module the schema does not have
        return "unknown-element"
    for template, tag in _DATA_TEMPLATE_TO_TAG:
        if message.startswith(template):
            return tag
    return "invalid-value"


#: libyang's LY_VCODE_NOUNIQ: the unique's leaves, then the two entries.
_NOT_UNIQUE = re.compile(
    r'^Unique data leaf\(s\) "([^"]*)" not satisfied in "([^"]*)" and "([^"]*)"'
)
_MISSING_CHOICE = re.compile(r'^Mandatory choice "([^"]*)"')
#: The error-info names of RFC 7950 15.1 and 15.6, in the YANG namespace (module ``yang``).
NON_UNIQUE = "yang:non-unique"
MISSING_CHOICE = "yang:missing-choice"


def _details(
    app_tag: str | None, message: str, path: str | None
) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The error-path and error-info RFC 7950 15 gives an app-tag, from libyang's message.

    ``data-not-unique`` (15.1): one ``non-unique`` instance-identifier per leaf of the
    constraint, in the entry that breaks it. ``missing-choice`` (15.6): the error-path is the
    parent of the choice (libyang names the choice itself) and ``missing-choice`` its name.
    """
    if app_tag == "data-not-unique":
        found = _NOT_UNIQUE.match(message)
        if found is not None:
            entry = path or found.group(3)
            leaves = found.group(1).split()
            return entry, tuple((NON_UNIQUE, f"{entry}/{leaf}") for leaf in leaves)
    if app_tag == "missing-choice":
        found = _MISSING_CHOICE.match(message)
        if found is not None and path:
            parent, _, last = path.rpartition("/")
            if last.split(":")[-1] == found.group(1):
                path = parent or "/"
            return path, ((MISSING_CHOICE, found.group(1)),)
    return path, ()


def _take_errors(ctx: libyang.Context) -> tuple[ErrorItem, ...]:
    """Collect and clear the errors libyang stored in the context."""
    return take_errors(ctx.cdata)


def take_errors(ctx: Any) -> tuple[ErrorItem, ...]:
    """Collect and clear the errors libyang stored in a ``struct ly_ctx *``."""
    items: list[ErrorItem] = []
    err = lib.ly_err_first(ctx)
    while err:
        message = ffi.string(err.msg).decode() if err.msg else "validation failed"
        location = _LOCATION.search(ffi.string(err.path).decode()) if err.path else None
        path = location.group(1) if location else None
        app_tag = ffi.string(err.apptag).decode() if err.apptag else None
        if err.level == lib.LY_LLERR:
            path, info = _details(app_tag, message, path)
            items.append(
                ErrorItem(
                    type=ErrorType.APPLICATION,
                    tag=_error_tag(err.vecode, app_tag, message),
                    message=message,
                    path=path,
                    app_tag=app_tag,
                    info=info,
                )
            )
        err = err.next
    lib.ly_err_clean(ctx, ffi.NULL)
    if not items:
        items.append(ErrorItem(ErrorType.APPLICATION, "operation-failed", "validation failed"))
    return tuple(items)


def _check_json_syntax(document: str) -> None:
    """Refuse what is not JSON at all: libyang accepts some truncated documents."""
    try:
        json.loads(document)
    except ValueError as exc:
        raise ModelError(
            ErrorItem(ErrorType.PROTOCOL, "malformed-message", f"malformed JSON: {exc}")
        ) from exc


def _load_error(message: str) -> ModelError:
    return ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", message))


def _load(ctx: libyang.Context, name: str, features: Sequence[str]) -> None:
    """Load and implement one module with exactly ``features`` enabled (``ly_ctx_load_module``).

    libyang fixes a module's features when it is implemented, so they are given here, at
    load time, rather than changed afterwards.
    """
    names = [ffi.new("char[]", feature.encode()) for feature in features]
    array = ffi.new(f"char *[{len(names) + 1}]", [*names, ffi.NULL])
    module = lib.ly_ctx_load_module(ctx.cdata, name.encode(), ffi.NULL, array)
    if module == ffi.NULL:
        details = "; ".join(item.message for item in take_errors(ctx.cdata))
        shown = f"{name} with features {list(features)}" if features else name
        raise _load_error(f"cannot load module {shown}: {details}")


class Schema:
    """A compiled set of YANG modules and the validation of instance documents against it."""

    def __init__(
        self,
        search_dirs: Sequence[Path] | None = None,
        modules: Sequence[str] = CATS_MODULES,
        features: Features | None = None,
    ) -> None:
        """Compile ``modules`` from ``search_dirs``, each with the ``features`` named for it.

        Raises:
            ModelError: ``operation-failed`` when a module cannot be found or compiled, or a
                feature is unknown, or a module is given features and not loaded.
        """
        dirs = list(search_dirs) if search_dirs is not None else [project_yang_dir()]
        dirs += [path for path in standard_yang_dirs() if path not in dirs]
        self._recipe = (tuple(dirs), tuple(modules), dict(features or {}))
        features = dict(features or {})
        self._ctx = libyang.Context(":".join(str(path) for path in dirs))
        try:
            for name in modules:
                _load(self._ctx, name, features.pop(name, ()))
            if features:
                raise _load_error(f"features given for modules not loaded: {sorted(features)}")
        except BaseException:
            self._ctx.destroy()  # type: ignore[no-untyped-call]
            raise

    @classmethod
    def for_server(
        cls, extra_dirs: Sequence[Path] = (), features: Features | None = None
    ) -> Schema:
        """The server's schema: CATS, the standard modules, and every module in ``extra_dirs``.

        ``features`` are enabled besides :data:`SERVER_FEATURES` (a module named in both gets
        the features of both).
        """
        extra = [name for folder in extra_dirs for name in modules_in(folder)]
        dirs = [project_yang_dir(), *extra_dirs]
        modules = list(SERVER_MODULES) + [name for name in extra if name not in SERVER_MODULES]
        enabled = {name: list(names) for name, names in SERVER_FEATURES.items()}
        for name, names in (features or {}).items():
            enabled.setdefault(name, []).extend(f for f in names if f not in enabled[name])
        return cls(dirs, modules, enabled)

    def twin(self) -> Schema:
        """A second, independent compilation of the same modules with the same features.

        Each libyang context serializes the string interning of every parse behind one
        dictionary lock, so threads that parse and validate against one context hardly run in
        parallel; a twin per thread does (a server schema compiles in about 20 ms and holds
        about 2 MB). Data trees of a twin belong to it: free them there, never mix them.
        """
        dirs, modules, features = self._recipe
        return Schema(dirs, modules, {name: list(names) for name, names in features.items()})

    def __enter__(self) -> Schema:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Free the libyang context."""
        self._ctx.destroy()  # type: ignore[no-untyped-call]

    @property
    def context(self) -> libyang.Context:
        """The libyang context, for the model and datastore layers only (one C boundary)."""
        return self._ctx

    def implemented_modules(self) -> Iterator[tuple[str, str | None]]:
        """Name and revision of every implemented module."""
        for module in self._ctx:
            if module.implemented():
                revision = next(iter(module.revisions()), None)
                yield module.name(), revision.date() if revision is not None else None

    def has_schema_path(self, path: SchemaPath) -> bool:
        """Whether a schema path (no predicates) names a node of the schema.

        Operation nodes may be written with ``input`` or ``output`` after the operation, as in
        ``/ietf-cats-service-metrics:select-service/output/candidate``; choice and case names
        are left out, as in libyang data paths.
        """
        steps = path.split("/")
        output = "output" in steps
        xpath = "/".join(step for step in steps if step not in ("input", "output"))
        flags = lib.LYS_FIND_XP_OUTPUT if output else 0
        found = ffi.new("struct ly_set **")
        ret = lib.lys_find_xpath(self._ctx.cdata, ffi.NULL, xpath.encode(), flags, found)
        lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
        if ret != lib.LY_SUCCESS:
            return False
        count = int(found[0].count)
        lib.ly_set_free(found[0], ffi.NULL)
        return count > 0

    def validate(
        self,
        document: str,
        kind: InstanceKind,
        encoding: Encoding = Encoding.JSON,
    ) -> None:
        """Parse and fully validate an instance document; raise :class:`ModelError` if invalid.

        Parsing is strict (unknown nodes are errors) and, for data, checks that every present
        module's constraints hold (RFC 7950 8).
        """
        if encoding is Encoding.JSON:
            _check_json_syntax(document)
        tree = self._parse(document, kind, encoding)
        lib.lyd_free_all(tree)

    def with_defaults(self, document: str) -> str:
        """A configuration document (RFC 7951 JSON) validated and printed with every default
        the modules give (RFC 6243 report-all): what a server reads from running."""
        _check_json_syntax(document)
        tree = self._parse(document, InstanceKind.CONFIG, Encoding.JSON)
        if tree == ffi.NULL:
            return "{}"
        out = ffi.new("char **")
        options = lib.LYD_PRINT_WITHSIBLINGS | lib.LYD_PRINT_WD_ALL
        try:
            if lib.lyd_print_mem(out, tree, lib.LYD_JSON, options) != lib.LY_SUCCESS:
                raise ModelError(*_take_errors(self._ctx))
            printed = ffi.string(out[0]).decode() if out[0] != ffi.NULL else "{}"
        finally:
            lib.lyd_free_all(tree)
            if out[0] != ffi.NULL:
                lib.free(out[0])
        return printed

    def _parse(self, document: str, kind: InstanceKind, encoding: Encoding) -> Any:
        fmt = lib.LYD_JSON if encoding is Encoding.JSON else lib.LYD_XML
        source = ffi.new("char[]", document.encode())
        stream = ffi.new("struct ly_in **")
        if lib.ly_in_new_memory(source, stream) != lib.LY_SUCCESS:
            raise ModelError(*_take_errors(self._ctx))
        tree = ffi.new("struct lyd_node **", ffi.NULL)
        try:
            if kind in (InstanceKind.DATA, InstanceKind.CONFIG):
                parse_opts = lib.LYD_PARSE_STRICT
                validate_opts = lib.LYD_VALIDATE_PRESENT
                if kind is InstanceKind.CONFIG:
                    parse_opts |= lib.LYD_PARSE_NO_STATE
                    validate_opts |= lib.LYD_VALIDATE_NO_STATE
                ret = lib.lyd_parse_data(
                    self._ctx.cdata, ffi.NULL, stream[0], fmt, parse_opts, validate_opts, tree
                )
            else:
                op_type = (
                    lib.LYD_TYPE_RPC_YANG if kind is InstanceKind.RPC else (lib.LYD_TYPE_NOTIF_YANG)
                )
                op = ffi.new("struct lyd_node **", ffi.NULL)
                ret = lib.lyd_parse_op(self._ctx.cdata, ffi.NULL, stream[0], fmt, op_type, tree, op)
                if ret == lib.LY_SUCCESS:
                    ret = lib.lyd_validate_op(tree[0], ffi.NULL, op_type, ffi.NULL)
        finally:
            lib.ly_in_free(stream[0], 0)
        if ret != lib.LY_SUCCESS:
            lib.lyd_free_all(tree[0])
            raise ModelError(*_take_errors(self._ctx))
        return tree[0]
