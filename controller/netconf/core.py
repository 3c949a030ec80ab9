"""What the NETCONF layer asks of the server core besides api.ServerCore (datastore.Core)."""

from __future__ import annotations

from typing import Protocol

from controller.datastore.api import DatastoreName, Principal, Revision
from controller.netconf.confirmed import CommitCore


class NetconfCore(CommitCore, Protocol):
    """The core's candidate and whole-datastore operations (RFC 6241 7.3, 8.3, 8.6)."""

    def discard_changes(self, *, session: str | None = None) -> None:
        """Revert candidate to running."""
        ...

    def validate(self, datastore: DatastoreName) -> None:
        """Validate a whole datastore, changing nothing."""
        ...

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Replace a datastore with another's content."""
        ...
