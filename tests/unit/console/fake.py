"""A C-PS at the console's seam (:class:`controller.console.cps.Cps`), for the flask test
client: users with passwords, data by RESTCONF path, operations by name, a list of events.
What it refuses it refuses as the C-PS does (401, 403 access-denied with an error-path)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from controller.console.cps import CpsError, Event
from controller.types import Json

Operation = Callable[[str, Json], Json]


@dataclass
class FakeEvents:
    """A finished subscription."""

    events: list[Event]
    closed: bool = False

    def __iter__(self) -> Iterator[Event]:
        yield from self.events

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeCps:
    """The C-PS as one user sees it."""

    user: str
    password: str
    users: dict[str, str]
    data: dict[str, Json]
    operations: dict[str, Operation]
    events_seen: list[Event] = field(default_factory=list)
    calls: list[tuple[str, str, Json]] = field(default_factory=list)

    def check_login(self) -> None:
        if self.users.get(self.user) != self.password:
            raise CpsError(401, "access-denied", "authentication failed")

    def close(self) -> None:
        pass

    def read_members(self, path: str, **params: str) -> Json:
        self.check_login()
        return self.data.get(path, {})

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        self.check_login()
        self.calls.append((self.user, f"{module}:{operation}", members))
        handler = self.operations.get(f"{module}:{operation}")
        if handler is None:
            raise CpsError(404, "invalid-value", f"no operation {module}:{operation}")
        return handler(self.user, members)

    def events(
        self,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
    ) -> FakeEvents:
        return FakeEvents([*self.events_seen, Event("", "", {}, replay_complete=True)])
