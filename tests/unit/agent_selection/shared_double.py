"""An in-memory stand-in for the values a cluster's replicas share (controller.datastore.shared),
with etcd's rules: one revision counter, a put guarded on the revision the replica last saw,
every other follower told of a put at once (a watch without delay)."""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.datastore.shared import Changed


def _ignore(name: str, value: bytes) -> None:
    del name, value


@dataclass
class SharedDouble:
    """The store: ``values`` by name with the revision that made each."""

    revision: int = 0
    values: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    replicas: list[ReplicaRecords] = field(default_factory=list)

    def replica(self) -> ReplicaRecords:
        """The seam one replica uses."""
        made = ReplicaRecords(self)
        self.replicas.append(made)
        return made


@dataclass
class ReplicaRecords:
    """One replica's SharedRecords over the double."""

    store: SharedDouble
    seen: dict[str, int] = field(default_factory=dict)
    changed: Changed = _ignore
    puts: int = 0

    def put(self, name: str, value: bytes) -> bool:
        current = self.store.values.get(name)
        if (0 if current is None else current[0]) != self.seen.get(name, 0):
            assert current is not None
            self.seen[name] = current[0]
            self.changed(name, current[1])
            return False
        self.store.revision += 1
        self.store.values[name] = (self.store.revision, value)
        self.seen[name] = self.store.revision
        self.puts += 1
        for other in self.store.replicas:
            if other is not self:
                other.event(name)
        return True

    def delete(self, name: str) -> None:
        self.store.revision += 1
        self.store.values.pop(name, None)
        self.seen[name] = self.store.revision

    def follow(self, changed: Changed) -> None:
        self.changed = changed
        for name in list(self.store.values):
            self.event(name)

    def close(self) -> None:
        self.changed = _ignore

    def event(self, name: str) -> None:
        """The watch delivering the value of ``name`` as it is now."""
        revision, value = self.store.values[name]
        if revision > self.seen.get(name, 0):
            self.seen[name] = revision
            self.changed(name, value)
