"""Data paths in libyang's form (``/mod:node/list[key='v']/leaf``) cut into steps without libyang.

One tokenizer for every layer: the datastore keys revisions and units by these strings, NACM
matches rule paths step by step, NETCONF builds edits from them. A ``/`` inside a predicate (or
a quoted key value) does not separate steps; a schema path (no predicates) splits the same way.
"""

from __future__ import annotations


def steps(path: str) -> list[str]:
    """The steps of an absolute data path (``[]`` for the root)."""
    result: list[str] = []
    current: list[str] = []
    quote: str | None = None
    depth = 0
    for char in path:
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
            continue
        if char in "'\"" and depth:
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "/" and not depth:
            if current:
                result.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        result.append("".join(current))
    return result
