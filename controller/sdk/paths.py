"""Where a pyangbind object sits in its module: the steps from the top-level container down.

Any node can then be written or deleted where it is: as a RESTCONF data resource path
(RFC 8040 3.5.3, list keys percent-encoded and comma-separated, the module name on the first
step), as the nesting of an RFC 7951 document, or as the XML skeleton of an ``<edit-config>``
(RFC 6241 7.2: the ancestors with their list keys, the node last).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from lxml import etree

from controller.sdk import objects
from controller.sdk.objects import Binding
from controller.types import Element, Json


@dataclass(frozen=True, slots=True)
class Step:
    """One node on the way: its name, module, and its list keys (name, value) if an entry;
    ``identities`` names the keys whose values are identityrefs (``module:name``)."""

    name: str
    module: str
    keys: tuple[tuple[str, str], ...] = ()
    identities: frozenset[str] = frozenset()


def _key_value(value: Any) -> tuple[str, bool]:
    """A key's value as text, and whether it is an identityref (then module-qualified, RFC
    7951 6.8)."""
    found = getattr(value, "_enumeration_dict", None)
    if found is not None and value in found:
        return f"{found[value]['@module']}:{str(value).rsplit(':', 1)[-1]}", True
    return str(value), False


def steps(node: Binding) -> tuple[Step, ...]:
    """The steps from the top-level container to ``node`` (list entries with their keys).

    Raises:
        ValueError: ``node`` is a module's root object, not a node of data.
    """
    found: list[Step] = []
    current = node
    while hasattr(current, "_parent"):  # a module's root object has none
        parent = current._parent
        holder: Any = getattr(parent, objects.attr(current._yang_name), None)
        keys: list[tuple[str, str]] = []
        identities: set[str] = set()
        if getattr(holder, "_keyval", None):
            for key in str(holder._yang_keys).split(" "):
                value, identity = _key_value(getattr(current, objects.attr(key)))
                keys.append((key, value))
                if identity:
                    identities.add(key)
        module = objects.module_of(current)
        found.append(Step(current._yang_name, module, tuple(keys), frozenset(identities)))
        current = parent
    if not found:
        raise ValueError("a module's root object is not a node of data")
    return tuple(reversed(found))


def resource(path: tuple[Step, ...]) -> str:
    """The RESTCONF data resource path (``module:top/list=key1,key2/child``)."""
    parts = []
    for index, step in enumerate(path):
        name = f"{step.module}:{step.name}" if index == 0 else step.name
        if step.keys:
            name += "=" + ",".join(quote(value, safe="") for _, value in step.keys)
        parts.append(name)
    return "/".join(parts)


def nested(path: tuple[Step, ...], members: Json) -> Json:
    """The RFC 7951 document holding ``members`` at ``path`` (ancestors with their keys)."""
    inner: Any = members
    for step in reversed(path):
        if step.keys:
            inner = [{**dict(step.keys), **inner}]
        inner = {step.name: inner}
    first = path[0]
    return {f"{first.module}:{first.name}": inner[first.name]}


def skeleton(path: tuple[Step, ...], parent: Element) -> Element:
    """The ancestors of ``path``'s node under ``parent`` (with their keys); their innermost."""
    for step in path[:-1]:
        parent = _element(parent, step)
    return parent


def leaf_element(parent: Element, step: Step) -> Element:
    """The element of ``step`` itself under ``parent``, with its keys (for a delete)."""
    return _element(parent, step)


def _element(parent: Element, step: Step) -> Element:
    namespace = objects.namespace(step.module)
    element = etree.SubElement(parent, f"{{{namespace}}}{step.name}", nsmap={None: namespace})
    for key, value in step.keys:
        module, _, name = value.partition(":")
        if key not in step.identities:
            etree.SubElement(element, f"{{{namespace}}}{key}").text = value
        elif module == step.module:  # an identity of the leaf's own module: bare (9.10.3)
            etree.SubElement(element, f"{{{namespace}}}{key}").text = name
        else:  # of another module: its prefix declared on the leaf
            nsmap = {None: namespace, module: objects.namespace(module)}
            etree.SubElement(element, f"{{{namespace}}}{key}", nsmap=nsmap).text = value
    return element
