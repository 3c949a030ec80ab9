"""XML values that name modules, in the JSON form data paths take (RFC 7950 9.10.3, 9.13.2).

An identityref or instance-identifier written in XML names its modules by XML prefixes bound
in the document (``<proto xmlns:t="urn:example:t">t:tcp</proto>``; without a prefix, the
default namespace). A data path (a list key or leaf-list value predicate) takes the RFC 7951
form instead, with module names: ``conform-test:tcp``, ``/conform-test:box/label``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from controller.errors import ErrorType
from controller.netconf.errors import netconf_error
from controller.netconf.messages import split_steps

#: A ``prefix:`` outside quotes (group 1 is a quoted string, kept as it is).
_PREFIX = re.compile(r"""('[^']*'|"[^"]*")|(?<![\w.-])([A-Za-z_][\w.-]*):(?=[A-Za-z_*])""")
_KEY_PREFIX = re.compile(r"^(\s*)([A-Za-z_][\w.-]*):(?=[A-Za-z_])")


def _module(
    prefix: str | None, nsmap: Mapping[str | None, str], module_of: Callable[[str], str | None]
) -> str:
    namespace = nsmap.get(prefix)
    module = module_of(namespace) if namespace else None
    if module is None:
        shown = f"prefix {prefix!r}" if prefix else "the default namespace"
        raise netconf_error(
            "invalid-value",
            f"{shown} names no module of this server",
            error_type=ErrorType.APPLICATION,
        )
    return module


def identity_value(
    text: str, nsmap: Mapping[str | None, str], module_of: Callable[[str], str | None]
) -> str:
    """``t:tcp`` (``t`` bound in ``nsmap``) as ``module:tcp``."""
    prefix, colon, name = text.strip().rpartition(":")
    return f"{_module(prefix if colon else None, nsmap, module_of)}:{name}"


def instance_value(
    text: str, nsmap: Mapping[str | None, str], module_of: Callable[[str], str | None]
) -> str:
    """``/t:box/t:port[t:proto='t:tcp']`` as ``/module:box/port[proto='t:tcp']``: module names
    replace prefixes, and a step or key names its module only where it changes (RFC 7951 6.11).
    Values in quotes are kept as written."""

    def rename(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1)
        return _module(match.group(2), nsmap, module_of) + ":"

    named = _PREFIX.sub(rename, text.strip())
    steps: list[str] = []
    current = ""
    for step in split_steps(named):
        head, bracket, rest = step.partition("[")
        module, colon, name = head.partition(":")
        if colon and module == current:
            head = name
        elif colon:
            current = module
        predicates = bracket + rest
        if current and predicates:
            predicates = "[".join(_own_key(part, current) for part in predicates.split("["))
        steps.append(head + predicates)
    return "/" + "/".join(steps)


def _own_key(predicate: str, module: str) -> str:
    """A predicate's key name without its module when it is the step's own."""
    found = _KEY_PREFIX.match(predicate)
    if found is None or found.group(2) != module:
        return predicate
    return found.group(1) + predicate[found.end() :]


def json_value(
    text: str,
    nsmap: Mapping[str | None, str],
    module_of: Callable[[str], str | None],
) -> str:
    """The JSON form of a value that names modules: an instance-identifier when it starts
    with ``/``, else an identityref."""
    if text.strip().startswith("/"):
        return instance_value(text, nsmap, module_of)
    return identity_value(text, nsmap, module_of)
