"""One agent session as the bytes a cluster keeps of it (docs/cluster.md, "Agent sessions").

A :class:`~controller.agent_selection.sessions.Session` is one frozen value holding everything
a replica needs to go on with it: the descriptor, the commitments in force and past (each the
steering rule it stands for), the handoffs with their phase, the decision records with the
descriptor members and valuations they were taken on, the account and the rate windows. It
is kept whole, so a change is never half in the store: a handoff's commit and the commitment
it makes current are one value.

The encoding is the value's pickle (protocol 5), compressed with zlib: 2.7 kB for a session
with 11 decision records of three candidates, about 0.5 ms each way on an idle core. Read
back, it is the same value (compared field by field; the valuations' ``nan`` aside). Only the
project's dataclasses and enumerations (and the ``array`` the valuations are kept in) may be
named by what is read, so bytes that name anything else (a function, a foreign class) are
refused with :class:`DurableError`, not run.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
import io
import pickle
import types
import zlib
from collections.abc import Mapping
from typing import Any

from controller.agent_selection.sessions import Session
from controller.errors import CatsError, ErrorItem, ErrorType

PROTOCOL = 5
_ARRAY = frozenset({("array", "array"), ("array", "_array_reconstructor")})


class DurableError(CatsError):
    """Bytes that are not a session this version can read."""


def _unreadable(message: str) -> DurableError:
    return DurableError(ErrorItem(ErrorType.APPLICATION, "operation-failed", message))


def _frozen(items: dict[Any, Any]) -> Mapping[Any, Any]:
    """A read-only mapping again (what the session's values hold as ``MappingProxyType``)."""
    return types.MappingProxyType(items)


def _reduce_frozen(obj: Mapping[Any, Any]) -> tuple[Any, ...]:
    return _frozen, (dict(obj),)


#: Reductions of the types pickle cannot take itself (a table, not ``reducer_override``,
#: which would be called for every object and costs the pickle twice the time).
_REDUCTIONS: dict[type, Any] = {types.MappingProxyType: _reduce_frozen}


@functools.lru_cache(maxsize=512)
def _allowed(module: str, name: str) -> Any:
    """What a kept session may name: the project's dataclasses and enumerations, the array
    of the valuations, the read-only mapping; None for anything else."""
    if (module, name) in _ARRAY:
        return getattr(importlib.import_module(module), name)
    if (module, name) == (__name__, "_frozen"):
        return _frozen
    if module.startswith("controller.") and "." not in name:
        found = getattr(importlib.import_module(module), name, None)
        if isinstance(found, type) and (
            dataclasses.is_dataclass(found) or issubclass(found, enum.Enum)
        ):
            return found
    return None


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _allowed(module, name)
        if found is None:
            raise _unreadable(f"a kept session names {module}.{name}, which it may not")
        return found


def encode(session: Session) -> bytes:
    """The bytes kept of ``session``."""
    sink = io.BytesIO()
    pickler = pickle.Pickler(sink, protocol=PROTOCOL)
    pickler.dispatch_table = _REDUCTIONS
    pickler.dump(session)
    return zlib.compress(sink.getvalue(), 1)


def decode(data: bytes) -> Session:
    """The session of ``encode``'s bytes."""
    try:
        found = _Unpickler(io.BytesIO(zlib.decompress(data))).load()
    except DurableError:
        raise
    except (zlib.error, pickle.UnpicklingError, EOFError, AttributeError, TypeError) as exc:
        raise _unreadable(f"a kept session cannot be read: {exc}") from exc
    if not isinstance(found, Session):
        raise _unreadable(f"a kept session is a {type(found).__name__}, not a Session")
    return found
