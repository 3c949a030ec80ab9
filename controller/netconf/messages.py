"""Build and parse NETCONF messages (RFC 6241 4, 8.1): hello, rpc, rpc-reply, rpc-error.

Pure functions over bytes and lxml trees with explicit namespaces. Parsing never resolves
entities or reaches the network and never recovers from malformed XML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lxml import etree

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model.limits import (
    DocumentLimits,
    LimitError,
    check_xml_markup,
    parse_bounded_xml,
)
from controller.netconf.errors import NetconfError, bad_element, netconf_error
from controller.types import Element

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
BASE_10 = "urn:ietf:params:netconf:base:1.0"
BASE_11 = "urn:ietf:params:netconf:base:1.1"
XML_NS = "http://www.w3.org/XML/1998/namespace"
YANG_NS = "urn:ietf:params:xml:ns:yang:1"
NC = f"{{{BASE_NS}}}"
DEFAULT_LIMITS = DocumentLimits()

#: The XML namespace of an implemented module, or None (model.paths.PathResolver.namespace).
NamespaceOf = Callable[[str], str | None]

_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True
)
_STEP_PREFIX = re.compile(r"(?<![\w.:-])([A-Za-z_][\w.-]*):(?=[A-Za-z_])")
#: The key name at the start of a predicate that has no prefix (``[k='v']``, not ``[m:k='v']``).
_KEY_NAME = re.compile(r"^(\s*)([A-Za-z_][\w.-]*)(?=\s*=)")


#: The bounds of a message's shape (``catsctl serve --max-xml-*``).
XmlLimits = DocumentLimits
_FIRST_TAG = re.compile(rb"<(?![?!])[^<>]*>")


def parse_xml(data: bytes, limits: XmlLimits = DEFAULT_LIMITS) -> Element:
    """Parse one message within ``limits``: ``too-big`` past a bound (found before the
    parser runs, so it costs nothing), ``malformed-message`` if it is not well-formed XML."""
    try:
        root = parse_bounded_xml(data, _PARSER, limits)
    except LimitError as exc:
        raise netconf_error("too-big", f"the message has {exc}", error_type=ErrorType.RPC) from None
    except etree.XMLSyntaxError as exc:
        raise netconf_error(
            "malformed-message", f"not well-formed XML: {exc}", error_type=ErrorType.RPC
        ) from exc
    if root is None:
        raise netconf_error("malformed-message", "empty message", error_type=ErrorType.RPC)
    return root


def root_attributes(data: bytes, limits: XmlLimits = DEFAULT_LIMITS) -> tuple[tuple[str, str], ...]:
    """The attributes of a message's root element (its ``message-id``), for the reply to a
    message that could not be parsed whole; none when even its start tag is past a bound."""
    found = _FIRST_TAG.search(data)
    if found is None:
        return ()
    tag = found.group(0)
    try:
        check_xml_markup(tag, limits)
        element = etree.fromstring(tag[:-1].rstrip(b"/") + b"/>", _PARSER)
    except (LimitError, etree.XMLSyntaxError):
        return ()
    return tuple((str(k), str(v)) for k, v in element.attrib.items())


_PREFIX_DECLARATION = re.compile(r'\sxmlns:([A-Za-z_][\w.-]*)="([^"]*)"')


def parse_fragment(document: str) -> list[Element]:
    """The top-level elements of a document printed by the core (zero or more siblings).

    libyang declares the prefix of an identityref value (RFC 7950 9.10.3) on the element
    holding it. When an element moves into a reply, lxml drops such a declaration if an
    ancestor binds the same URI as the default namespace, and the value's prefix would be
    left unbound; so every top-level element also declares every prefix the document uses.
    """
    if not document.strip():
        return []
    holder = etree.fromstring(b"<fragment>" + document.encode() + b"</fragment>", _PARSER)
    prefixes = dict(_PREFIX_DECLARATION.findall(document))
    if not prefixes:
        return list(holder)
    return [_declaring(element, prefixes) for element in holder]


def parse_output(document: str, prefix_of: NamespaceOf | None = None) -> list[Element]:
    """The children of the ``<output>`` the core prints for an RPC or action: the elements
    of an rpc-reply (RFC 6241 4.2), each declaring the prefixes the output uses.

    With ``prefix_of`` (namespace to the module's YANG prefix) every namespace of an element
    is declared with its module's prefix on the top element (``<rct:echo xmlns:rct=...>``);
    without it lxml would invent ``ns0`` once the element moves into the reply.
    """
    if not document.strip():
        return []
    holder = etree.fromstring(b"<fragment>" + document.encode() + b"</fragment>", _PARSER)
    prefixes = dict(_PREFIX_DECLARATION.findall(document))
    children = [child for top in holder for child in top]
    if prefix_of is not None:
        return [_prefixed(child, prefixes, prefix_of) for child in children]
    return [_declaring(child, prefixes) for child in children] if prefixes else children


def _prefixed(element: Element, prefixes: dict[str, str], prefix_of: NamespaceOf) -> Element:
    """A copy of ``element`` declaring each namespace it uses with its module's prefix."""
    nsmap: dict[str, str] = dict(prefixes)
    for node in element.iter():
        if not isinstance(node.tag, str):
            continue
        namespace = etree.QName(node).namespace
        if namespace is None or namespace in nsmap.values():
            continue
        prefix = prefix_of(namespace)
        if prefix and prefix not in nsmap:
            nsmap[prefix] = namespace
    return _declaring(element, nsmap, keep=False)


def _declaring(element: Element, prefixes: dict[str, str], *, keep: bool = True) -> Element:
    """A copy of a top-level element that also declares ``prefixes``; children move over.

    ``keep`` False leaves out the default namespace the element inherited (its tag then
    takes a declared prefix)."""
    inherited = {p: u for p, u in element.nsmap.items() if keep or p is not None}
    nsmap = {**inherited, **{p: u for p, u in prefixes.items() if p not in inherited}}
    top = etree.Element(element.tag, attrib=dict(element.attrib), nsmap=nsmap)
    top.text = element.text
    top.extend(list(element))
    return top


def to_bytes(element: Element) -> bytes:
    """Serialize a message with an XML declaration (RFC 6241 examples)."""
    return bytes(etree.tostring(element, encoding="UTF-8", xml_declaration=True))


# ---------------------------------------------------------------------------- hello


def build_hello(capabilities: Iterable[str], session_id: int) -> bytes:
    """The server's hello (RFC 6241 8.1)."""
    hello = etree.Element(NC + "hello", nsmap={None: BASE_NS})
    caps = etree.SubElement(hello, NC + "capabilities")
    for uri in capabilities:
        etree.SubElement(caps, NC + "capability").text = uri
    etree.SubElement(hello, NC + "session-id").text = str(session_id)
    return to_bytes(hello)


def parse_hello(data: bytes, limits: XmlLimits = DEFAULT_LIMITS) -> tuple[str, ...]:
    """The capabilities of a client's hello; a client hello with a session-id is an error."""
    return hello_capabilities(parse_xml(data, limits))


def hello_capabilities(root: Element) -> tuple[str, ...]:
    """The capabilities of a parsed client hello (see :func:`parse_hello`)."""
    if root.tag != NC + "hello":
        raise bad_element("unknown-element", etree.QName(root).localname, "expected a hello")
    if root.find(NC + "session-id") is not None:
        raise bad_element("unknown-element", "session-id", "a client hello has no session-id")
    found = root.findall(f"{NC}capabilities/{NC}capability")
    capabilities = tuple((cap.text or "").strip() for cap in found)
    if BASE_10 not in capabilities and BASE_11 not in capabilities:
        raise netconf_error("operation-failed", "the hello names no base capability")
    return capabilities


# ---------------------------------------------------------------------------- rpc


@dataclass(frozen=True, slots=True)
class Rpc:
    """One ``<rpc>``: its attributes (echoed in the reply) and its operation element."""

    attributes: tuple[tuple[str, str], ...]
    operation: Element
    message_id: str


def parse_rpc(root: Element) -> Rpc:
    """Check an ``<rpc>`` envelope (RFC 6241 4.1) and find its single operation."""
    attributes = tuple((str(k), str(v)) for k, v in root.attrib.items())
    if root.tag != NC + "rpc":
        raise bad_element("unknown-element", etree.QName(root).localname, "expected an rpc")
    message_id = root.get("message-id")
    if message_id is None:
        raise netconf_error(
            "missing-attribute",
            "an rpc needs a message-id",
            error_type=ErrorType.RPC,
            info=(("bad-attribute", "message-id"), ("bad-element", "rpc")),
        )
    children = [child for child in root if isinstance(child.tag, str)]
    if len(children) != 1:
        raise NetconfError(
            ErrorItem(
                ErrorType.PROTOCOL,  # RFC 6241 Appendix A: these tags are protocol or application
                "missing-element" if not children else "bad-element",
                "an rpc holds exactly one operation",
                info=(("bad-element", "rpc"),),
            )
        )
    return Rpc(attributes, children[0], message_id)


def reply(attributes: Sequence[tuple[str, str]], children: Iterable[Element] = ()) -> Element:
    """An ``<rpc-reply>`` echoing the rpc's attributes; ``<ok/>`` when it has no children."""
    root = etree.Element(NC + "rpc-reply", nsmap={None: BASE_NS})
    for key, value in attributes:
        root.set(key, value)
    added = False
    for child in children:
        root.append(child)
        added = True
    if not added:
        etree.SubElement(root, NC + "ok")
    return root


def error_reply(
    attributes: Sequence[tuple[str, str]], items: Sequence[ErrorItem], namespace_of: NamespaceOf
) -> Element:
    """An ``<rpc-reply>`` of ``<rpc-error>`` elements (RFC 6241 4.3)."""
    root = etree.Element(NC + "rpc-reply", nsmap={None: BASE_NS})
    for key, value in attributes:
        root.set(key, value)
    for item in items:
        root.append(error_element(item, namespace_of))
    return root


def error_element(item: ErrorItem, namespace_of: NamespaceOf) -> Element:
    """One ``<rpc-error>``; the error-path becomes an XPath with its prefixes declared."""
    error = etree.Element(NC + "rpc-error", nsmap={None: BASE_NS})
    etree.SubElement(error, NC + "error-type").text = item.type.value
    etree.SubElement(error, NC + "error-tag").text = item.tag
    etree.SubElement(error, NC + "error-severity").text = "error"
    if item.app_tag:
        etree.SubElement(error, NC + "error-app-tag").text = item.app_tag
    if item.path:
        error.append(error_path(item.path, namespace_of))
    message = etree.SubElement(error, NC + "error-message")
    message.set(f"{{{XML_NS}}}lang", "en")
    message.text = item.message
    if item.info:
        info = etree.SubElement(error, NC + "error-info")
        for name, value in item.info:
            info.append(_info_element(name, value, namespace_of))
    return error


def _info_element(name: str, value: str, namespace_of: NamespaceOf) -> Element:
    """One error-info child: in the base namespace, or ``yang:NAME`` in the YANG namespace
    (RFC 7950 15: ``non-unique``, an instance-identifier with its prefixes declared, and
    ``missing-choice``)."""
    module, colon, local = name.partition(":")
    if not colon:
        element = etree.Element(NC + name)
        element.text = value
        return element
    namespace = YANG_NS if module == "yang" else namespace_of(module) or f"urn:unknown:{module}"
    if value.startswith("/"):
        path = error_path(value, namespace_of)
        element = etree.Element(f"{{{namespace}}}{local}", nsmap={**path.nsmap, module: namespace})
        element.text = path.text
        return element
    element = etree.Element(f"{{{namespace}}}{local}", nsmap={module: namespace})
    element.text = value
    return element


def error_path(path: str, namespace_of: NamespaceOf) -> Element:
    """``/mod:a/b[k='v']`` (libyang form) as an XPath whose every name has a prefix.

    RFC 6241 4.3 ``error-path`` is an absolute XPath whose prefixes the element declares: each
    step and each key name of a predicate (``[mod:k='v']``) gets the module of its step
    (RFC 7950 9.13 and 7951 6.11 leave it out where the module does not change). Values,
    ``.`` (a leaf-list value) and positions are kept as they are.
    """
    modules: dict[str, str] = {}
    steps: list[str] = []
    module = ""
    for step in split_steps(path):
        found = _STEP_PREFIX.match(step)
        if found:
            module = found.group(1)
        name, predicates = _split_predicates(step)
        if not found and module and name and not name.startswith((".", "*")):
            name = f"{module}:{name}"
        if module:
            modules[module] = namespace_of(module) or f"urn:unknown:{module}"
            predicates = [_KEY_NAME.sub(rf"\g<1>{module}:\g<2>", p) for p in predicates]
        steps.append(name + "".join(f"[{p}]" for p in predicates))
    nsmap = {prefix: uri for prefix, uri in modules.items() if prefix not in ("xml", "xmlns")}
    element = etree.Element(NC + "error-path", nsmap=nsmap)
    element.text = "/" + "/".join(steps) if steps else path
    return element


def _split_predicates(step: str) -> tuple[str, list[str]]:
    """A step's node name and the insides of its predicates, split outside quotes."""
    name, bracket, rest = step.partition("[")
    if not bracket:
        return step, []
    predicates: list[str] = []
    current: list[str] = []
    quote = ""
    for char in rest:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "]":
            predicates.append("".join(current))
            current = []
            continue
        elif char == "[" and not current:
            continue
        current.append(char)
    return name, predicates


def split_steps(path: str) -> list[str]:
    """The steps of a data path, split on ``/`` outside predicates and quotes."""
    steps: list[str] = []
    current: list[str] = []
    depth = 0
    quote = ""
    for char in path.lstrip("/"):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "/" and depth == 0:
            steps.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        steps.append("".join(current))
    return steps


def items_of(exc: CatsError) -> tuple[ErrorItem, ...]:
    """The items of any project error."""
    return exc.items
