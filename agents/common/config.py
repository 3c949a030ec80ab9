"""An agent's configuration document: read, validated by libyang, every refusal naming file and key.

:func:`load_modelled` is how the C-SMA, the C-NMA and the forwarder read their files: the
TOML or JSON document is the top container of the agent's YANG module (``cats-csma-config``,
``cats-cnma-config``, ``cats-forwarder-config``), converted to RFC 7951 JSON
(controller.model.config_file), validated by libyang as configuration and returned with every
default of the module filled in; a refusal carries libyang's data path and reason, the file
named in the message. What the schema says is not checked again in Python.

:func:`load_document` reads a ``.toml`` or ``.json`` file. A :class:`Table` is one TOML table
(or JSON object) with the dotted key that leads to it, for documents without a YANG module
(the agent gateway's episode descriptions, command-line values); its readers convert and
range-check one key each and raise :class:`ConfigError` naming ``FILE: KEY``; ``allow``
refuses keys nobody reads.
"""

from __future__ import annotations

import ipaddress
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from enum import Enum
from pathlib import Path
from typing import Any, Final, TypeVar, overload

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import ModelError, Schema
from controller.model.config_file import to_rfc7951
from controller.types import Json

D = TypeVar("D")
_UINT32_MAX = 2**32 - 1
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/\-]*")  # cats-t:identifier
_IDENTIFIER_MAX = 128
_MAX_PORT = 65535


class _Missing(Enum):
    """The default of a required key: no default."""

    MISSING = 0


_MISSING: Final = _Missing.MISSING


class ConfigError(CatsError):
    """A configuration an agent refuses; each item's path is ``FILE: KEY`` or ``FILE:LINE``."""

    @classmethod
    def at(cls, where: str, message: str) -> ConfigError:
        """One invalid-value item at ``where``."""
        return cls(ErrorItem(ErrorType.APPLICATION, "invalid-value", message, where))


def load_document(path: Path, *, exact: bool = False) -> Mapping[str, Any]:
    """The top-level table of a ``.toml`` file, or of a ``.json`` file (any other suffix);
    ``exact`` reads fractions as :class:`~decimal.Decimal` (a decimal64 stays what was
    written)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError.at(str(path), f"cannot read: {exc.strerror}") from exc
    number = Decimal if exact else float
    try:
        document: Any = (
            tomllib.loads(text, parse_float=number)
            if path.suffix == ".toml"
            else json.loads(text, parse_float=number)
        )
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError.at(str(path), f"not TOML: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError.at(f"{path}:{exc.lineno}", f"not JSON: {exc.msg}") from exc
    if not isinstance(document, dict):
        raise ConfigError.at(str(path), "the document is not a table (JSON object)")
    return document


def load_modelled(path: Path, schema: Schema, top: str) -> Json:
    """The configuration of ``path`` as validated RFC 7951 JSON of ``top``, defaults filled in.

    ``top`` is the module-qualified top container (``cats-forwarder-config:forwarder``); the
    file holds its members. Raises :class:`ConfigError` whose items carry libyang's data path
    (``/cats-forwarder-config:forwarder/data-plane/threads``) and reason, the file named.
    """
    document = to_rfc7951(schema, top, load_document(path, exact=True))
    try:
        printed = schema.with_defaults(json.dumps(document, default=str))
    except ModelError as exc:
        items = (replace(item, message=f"{path}: {item.message}") for item in exc.items)
        raise ConfigError(*items) from exc
    validated: Json = json.loads(printed).get(top, {})
    return validated


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Table:
    """One table of the document and the dotted key that leads to it.

    A reader without a default refuses a missing key; with one, it returns the default
    (whatever its type, ``None`` included) when the key is absent.
    """

    values: Mapping[str, Any]
    file: str
    where: str = ""

    def key(self, name: str) -> str:
        """The dotted key of a member."""
        return f"{self.where}.{name}" if self.where else name

    def error(self, name: str, message: str) -> ConfigError:
        """A refusal of member ``name``."""
        return ConfigError.at(f"{self.file}: {self.key(name)}", message)

    def allow(self, *names: str) -> None:
        """Refuse members other than ``names``."""
        unknown = sorted(set(self.values) - set(names))
        if unknown:
            raise self.error(unknown[0], f"unknown key (allowed: {', '.join(sorted(names))})")

    def _get(self, name: str, default: object) -> Any:
        if name in self.values:
            return self.values[name]
        if default is _MISSING:
            raise self.error(name, "missing")
        return default

    @overload
    def text(self, name: str) -> str: ...
    @overload
    def text(self, name: str, default: D) -> str | D: ...
    def text(self, name: str, default: object = _MISSING) -> object:
        """A non-empty string."""
        value = self._get(name, default)
        if value is not default and (not isinstance(value, str) or not value):
            raise self.error(name, f"expected a non-empty string, got {value!r}")
        return value

    @overload
    def integer(self, name: str, *, maximum: int = ...) -> int: ...
    @overload
    def integer(self, name: str, default: D, maximum: int = ...) -> int | D: ...
    def integer(self, name: str, default: object = _MISSING, maximum: int = _UINT32_MAX) -> object:
        """An integer in 0..maximum."""
        value = self._get(name, default)
        if value is default:
            return value
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
            raise self.error(name, f"expected an integer 0..{maximum}, got {value!r}")
        return value

    @overload
    def decimal(self, name: str) -> Decimal: ...
    @overload
    def decimal(self, name: str, default: D) -> Decimal | D: ...
    def decimal(self, name: str, default: object = _MISSING) -> object:
        """A non-negative number (int, float or decimal string) as a Decimal."""
        value = self._get(name, default)
        if value is default:
            return value
        try:
            number = Decimal(str(value)) if _is_number(value) else None
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite() or number < 0:
            raise self.error(name, f"expected a non-negative number, got {value!r}")
        return number

    @overload
    def boolean(self, name: str) -> bool: ...
    @overload
    def boolean(self, name: str, default: D) -> bool | D: ...
    def boolean(self, name: str, default: object = _MISSING) -> object:
        """true or false."""
        value = self._get(name, default)
        if value is not default and not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {value!r}")
        return value

    def forwarder(self, name: str) -> str:
        """A cats-t:forwarder-id: an IP address or an identifier."""
        value = self.text(name)
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            if _IDENTIFIER.fullmatch(value) and len(value) <= _IDENTIFIER_MAX:
                return value
        raise self.error(name, f"not an IP address or identifier: {value!r}")

    def endpoint(self, name: str) -> tuple[str, int]:
        """``host:port`` (``[v6]:port`` for an IPv6 address)."""
        value = self.text(name)
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= _MAX_PORT:
            raise self.error(name, f"expected host:port, got {value!r}")
        return host.strip("[]"), int(port)

    def prefix(self, name: str) -> str:
        """An IP prefix (inet:ip-prefix), normalized (host bits must be zero)."""
        value = self.text(name)
        try:
            return str(ipaddress.ip_network(value, strict=True))
        except ValueError as exc:
            raise self.error(name, f"not an IP prefix: {exc}") from None

    def table(self, name: str, *, required: bool = False) -> Table:
        """A sub-table (empty when absent and not required)."""
        value = self._get(name, _MISSING if required else {})
        if not isinstance(value, Mapping):
            raise self.error(name, "expected a table")
        return Table(value, self.file, self.key(name))

    def tables(self, name: str, *, required: bool = False) -> list[Table]:
        """An array of tables."""
        value = self._get(name, _MISSING if required else [])
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            raise self.error(name, "expected an array of tables")
        return [Table(v, self.file, f"{self.key(name)}[{i}]") for i, v in enumerate(value)]
