"""How an edit-config's operation points reach the core: error-option (RFC 6241 7.2, 8.5).

The whole edit is tried as one transaction first: when it succeeds every option gives that
result (the points applied in order with no error). When it fails,

- ``rollback-on-error`` answers its errors: the transaction changed nothing;
- ``stop-on-error`` applies the points in order, each its own transaction, and stops at the
  first that fails, keeping those applied before it;
- ``continue-on-error`` applies every point it can and reports the error of each other one.

Under default-operation ``none`` an operation point whose ancestor does not exist is
``data-missing`` (7.2: "the data model ... does not exist"), checked before anything is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from controller.datastore.api import (
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    ReadRequest,
    ServerCore,
)
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.netconf.errors import netconf_error
from controller.netconf.messages import split_steps
from controller.types import DataPath

_CREATING = (EditOperation.MERGE, EditOperation.REPLACE, EditOperation.CREATE)


class ErrorOption(StrEnum):
    """The ``error-option`` of edit-config (RFC 6241 7.2)."""

    STOP = "stop-on-error"
    CONTINUE = "continue-on-error"
    ROLLBACK = "rollback-on-error"


def parent_path(path: DataPath) -> DataPath | None:
    """The data path of a node's parent; None for a top-level node."""
    steps = split_steps(path)
    return DataPath("/" + "/".join(steps[:-1])) if len(steps) > 1 else None


def missing_ancestors(
    core: ServerCore,
    target: DatastoreName,
    edits: Sequence[Edit],
    principal: Principal,
    levels: Sequence[DataPath] = (),
) -> None:
    """default-operation none: ``data-missing`` for a level the ``<config>`` names (a list
    entry, a presence container) or a parent of an operation point that is not there."""
    wanted: list[DataPath] = list(levels)
    for edit in edits:
        parent = parent_path(edit.path)
        if edit.operation in _CREATING and parent is not None:
            wanted.append(parent)
    seen: set[DataPath] = set()
    for path in wanted:
        if path in seen:
            continue
        request = ReadRequest(target, path, content=Content.CONFIG, depth=1)
        if core.read(request, principal).document is None:
            raise netconf_error(
                "data-missing",
                f"{path} does not exist and default-operation is none",
                error_type=ErrorType.APPLICATION,
                path=path,
            )
        seen.add(path)


def apply_edits(  # noqa: PLR0913 - the parameters of one edit-config
    core: ServerCore,
    target: DatastoreName,
    edits: Sequence[Edit],
    principal: Principal,
    *,
    session: str,
    on_error: ErrorOption,
    test_only: bool = False,
) -> None:
    """Apply the points of one edit-config as ``on_error`` says.

    Raises:
        CatsError: every error (one for stop-on-error and rollback-on-error).
    """
    try:
        core.edit(target, edits, principal, session=session, test_only=test_only)
    except CatsError:
        if on_error is ErrorOption.ROLLBACK or test_only or len(edits) == 1:
            raise
    else:
        return
    failures: list[ErrorItem] = []
    for edit in edits:
        try:
            core.edit(target, [edit], principal, session=session)
        except CatsError as exc:
            if on_error is ErrorOption.STOP:
                raise
            failures.extend(exc.items)
    if failures:
        raise CatsError(*failures)
