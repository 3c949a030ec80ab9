"""libyang C functions that libyang-python 2.8.0's CFFI build does not declare.

``lyd_insert_before``/``after``/``sibling``, ``lyd_unlink_tree``, ``lyd_find_sibling_val``,
``lyd_find_sibling_first``,
``lyd_new_implicit_tree`` and ``lys_find_expr_atoms`` exist in Debian 12's libyang 2.1.30
(``/usr/include/libyang``) but not in the cdefs of the Python binding, so they are called
through :mod:`ctypes` on the very same ``libyang.so.2`` the binding is linked to. Pointers
cross as integer addresses: cffi pointers become ``uintptr_t`` and results are cast back, so
nothing else in the project sees ctypes.
"""

from __future__ import annotations

import ctypes
from typing import Any

from _libyang import ffi, lib

_SO = ctypes.CDLL("libyang.so.2")
_P = ctypes.c_void_p


def _bind(name: str, argtypes: list[Any], restype: Any) -> Any:
    func = getattr(_SO, name)
    func.argtypes = argtypes
    func.restype = restype
    return func


_INSERT_BEFORE = _bind("lyd_insert_before", [_P, _P], ctypes.c_int)
_INSERT_AFTER = _bind("lyd_insert_after", [_P, _P], ctypes.c_int)
_INSERT_SIBLING = _bind("lyd_insert_sibling", [_P, _P, ctypes.POINTER(_P)], ctypes.c_int)
_UNLINK = _bind("lyd_unlink_tree", [_P], None)
_FIND_SIBLING_VAL = _bind(
    "lyd_find_sibling_val",
    [_P, _P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_P)],
    ctypes.c_int,
)
_FIND_SIBLING_FIRST = _bind("lyd_find_sibling_first", [_P, _P, ctypes.POINTER(_P)], ctypes.c_int)
_IMPLICIT_TREE = _bind("lyd_new_implicit_tree", [_P, ctypes.c_uint32, _P], ctypes.c_int)
_DICT_REMOVE = _bind("lydict_remove", [_P, _P], None)
_CHANGE_TERM = _bind("lyd_change_term", [_P, ctypes.c_char_p], ctypes.c_int)
_OUT_PRINTED = _bind("ly_out_printed", [_P], ctypes.c_size_t)
_EXPR_ATOMS = _bind(
    "lys_find_expr_atoms", [_P, _P, _P, _P, ctypes.c_uint32, ctypes.POINTER(_P)], ctypes.c_int
)

#: ``LYD_IMPLICIT_NO_STATE`` of tree_data.h.
IMPLICIT_NO_STATE = 0x01


def library_file() -> str:
    """The file of the libyang this process runs (``libyang.so.2.29.2``: its version), read
    from the process's mappings; the soname when they cannot be read."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                if "/libyang.so" in line:
                    return line.rsplit("/", 1)[-1].strip()
    except OSError:
        pass
    return "libyang.so.2"


def address(pointer: Any) -> int | None:
    """The address of a cffi pointer (None for NULL), for a ctypes call."""
    if pointer == ffi.NULL:
        return None
    return int(ffi.cast("uintptr_t", pointer))


def insert_before(sibling: Any, node: Any) -> int:
    """``lyd_insert_before``: put ``node`` just before ``sibling``."""
    return int(_INSERT_BEFORE(address(sibling), address(node)))


def insert_after(sibling: Any, node: Any) -> int:
    """``lyd_insert_after``: put ``node`` just after ``sibling``."""
    return int(_INSERT_AFTER(address(sibling), address(node)))


def insert_sibling(sibling: Any, node: Any) -> tuple[int, Any]:
    """``lyd_insert_sibling``: add a top-level ``node``; returns (rc, new first sibling)."""
    first = _P()
    rc = int(_INSERT_SIBLING(address(sibling), address(node), ctypes.byref(first)))
    return rc, ffi.cast("struct lyd_node *", first.value or 0)


def unlink(node: Any) -> None:
    """``lyd_unlink_tree``: detach a subtree from its parent and siblings."""
    _UNLINK(address(node))


def has_instance(first: Any, snode: Any) -> bool:
    """``lyd_find_sibling_val`` without a value: whether any instance of ``snode`` is among the
    siblings starting at ``first`` (a hash lookup when they have a parent)."""
    if first == ffi.NULL or not first:
        return False
    match = _P()
    rc = int(_FIND_SIBLING_VAL(address(first), address(snode), None, 0, ctypes.byref(match)))
    return rc == lib.LY_SUCCESS and bool(match.value)


def first_instance(first: Any, snode: Any) -> Any:
    """``lyd_find_sibling_val`` without a value: the first instance of ``snode`` among the
    siblings starting at ``first`` (libyang hashes a list's or leaf-list's first instance by
    its schema node alone), or None."""
    if first == ffi.NULL or not first:
        return None
    match = _P()
    rc = int(_FIND_SIBLING_VAL(address(first), address(snode), None, 0, ctypes.byref(match)))
    if rc != lib.LY_SUCCESS or not match.value:
        return None
    return ffi.cast("struct lyd_node *", match.value)


def find_entry(first: Any, snode: Any, key: str) -> Any:
    """``lyd_find_sibling_val``: the instance of ``snode`` among ``first``'s siblings with the
    key predicates (``[k='v']...``) or leaf-list value ``key``, or None (a hash lookup when
    they have a parent)."""
    if first == ffi.NULL or not first:
        return None
    match = _P()
    raw = key.encode()
    rc = int(_FIND_SIBLING_VAL(address(first), address(snode), raw, len(raw), ctypes.byref(match)))
    if rc != lib.LY_SUCCESS or not match.value:
        return None
    return ffi.cast("struct lyd_node *", match.value)


def counterpart(first: Any, node: Any) -> Any:
    """``lyd_find_sibling_first``: the instance among ``first``'s siblings matching ``node``
    (same schema node and keys or value; a hash lookup when they have a parent), or None."""
    if first == ffi.NULL or not first:
        return None
    match = _P()
    rc = int(_FIND_SIBLING_FIRST(address(first), address(node), ctypes.byref(match)))
    if rc != lib.LY_SUCCESS or not match.value:
        return None
    return ffi.cast("struct lyd_node *", match.value)


def add_implicit(node: Any) -> int:
    """``lyd_new_implicit_tree``: add the default nodes of a config subtree."""
    return int(_IMPLICIT_TREE(address(node), IMPLICIT_NO_STATE, None))


def expression_atoms(ctx_node: Any, module: Any, expr: Any, prefixes: Any) -> list[Any] | None:
    """``lys_find_expr_atoms``: every schema node a compiled XPath expression may touch.

    None when libyang cannot tell (the caller must then assume the expression reads anything).
    """
    found = _P()
    rc = _EXPR_ATOMS(
        address(ctx_node), address(module), address(expr), address(prefixes), 0, ctypes.byref(found)
    )
    if rc != lib.LY_SUCCESS or not found.value:
        return None
    atoms = ffi.cast("struct ly_set *", found.value)
    nodes = [atoms.snodes[index] for index in range(int(atoms.count))]
    lib.ly_set_free(atoms, ffi.NULL)
    return nodes


def out_printed(out: Any) -> int:
    """``ly_out_printed``: how many bytes were printed into an output handle."""
    return int(_OUT_PRINTED(address(out)))


def dict_remove(ctx: Any, value: Any) -> None:
    """``lydict_remove``: drop one reference to a string of the context's dictionary."""
    _DICT_REMOVE(address(ctx), address(value))


def change_term(node: Any, value: str) -> None:
    """``lyd_change_term``: set the value of a leaf (raises when libyang refuses it)."""
    result = int(_CHANGE_TERM(address(node), value.encode()))
    if result not in (lib.LY_SUCCESS, lib.LY_EEXIST, lib.LY_ENOT):
        raise ValueError(f"lyd_change_term failed ({result})")
