"""The seam through which an application keeps values that every replica of a cluster shares.

Without a cluster there is none (``Host.shared`` is None) and an application keeps its values
in memory as before. With one (``catsctl serve --cluster``), :mod:`controller.cluster.records`
keeps them in etcd under one prefix per application: one key per value, each change one etcd
transaction guarded on the revision of the key the replica last saw, so a replica never
overwrites a change it has not seen (its own is dropped instead and the newer one adopted).
Every replica follows the prefix and is told of the others' changes (docs/cluster.md,
"Agent sessions").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

#: Told of a value another replica put (its name and bytes), in the order etcd has them.
Changed = Callable[[str, bytes], None]


class SharedRecords(Protocol):
    """Named values the replicas of a cluster share (implemented by controller.cluster)."""

    def put(self, name: str, value: bytes) -> bool:
        """Make ``value`` the value of ``name`` unless another replica changed ``name`` since
        this replica last saw it: then the newer value is given to the ``changed`` callable of
        :meth:`follow` and False is returned. Raises a CatsError when the cluster is away."""
        ...

    def delete(self, name: str) -> None:
        """Forget ``name`` (an older value of it is never adopted again here)."""
        ...

    def follow(self, changed: Changed) -> None:
        """Give ``changed`` every value now held, then every value another replica puts, in
        order, on a thread of its own until :meth:`close`."""
        ...

    def close(self) -> None:
        """Stop following."""
        ...
