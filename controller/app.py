"""The one place that wires the C-PS application: schema, server core and RESTCONF (DESIGN.md).

``catsctl serve`` calls :func:`serve`; tests and tools use :class:`Application` with ``with``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    Registrations,
    Revision,
)
from controller.datastore.core import Core
from controller.model import Encoding, Schema
from controller.model.codec import NotificationCodec
from controller.model.paths import PathResolver
from controller.plugins import apply_plugins
from controller.restconf.auth import Authenticator
from controller.restconf.resources import Restconf, ServerInfo
from controller.restconf.server import ListenSettings, RestconfServer
from controller.restconf.streams import MONITORING, monitoring_state
from controller.restconf.users import LocalUsers
from controller.restconf.wsgi import create_app

LOG = logging.getLogger("catsctl.serve")


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """Everything ``catsctl serve`` is told."""

    state_dir: Path = Path("state")
    yang_dirs: tuple[Path, ...] = ()
    init_data: Path | None = None
    listen: ListenSettings = field(default_factory=ListenSettings)
    plugins: tuple[str, ...] = ()  # importable modules with register(registrations)


def _yang_library_version(schema: Schema) -> str:
    for name, revision in schema.implemented_modules():
        if name == "ietf-yang-library" and revision is not None:
            return revision
    return "2019-01-04"


def _schema_id(schema: Schema) -> str:
    return ",".join(
        f"{name}@{revision}" for name, revision in sorted(schema.implemented_modules(), key=str)
    )


def is_new_state_dir(state_dir: Path) -> bool:
    """Whether a state directory holds nothing yet (``--init-data`` applies only then)."""
    return not state_dir.is_dir() or not any(state_dir.iterdir())


def seed_running(core: Core, init_data: Path) -> Revision:
    """Replace running with the ``--init-data`` document (JSON, or XML by its suffix)."""
    encoding = Encoding.XML if init_data.suffix.lower() == ".xml" else Encoding.JSON
    text = init_data.read_text(encoding="utf-8")
    LOG.info("seeding running from %s", init_data)
    return core.edit(
        DatastoreName.RUNNING, [Edit(EditOperation.REPLACE, "/", text, encoding)], SYSTEM
    )


class Application:
    """The running C-PS: schema, core and RESTCONF server; ``with`` owns them all."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.schema = Schema.for_server(settings.yang_dirs)
        listen = settings.listen
        registrations = Registrations()
        registrations.state[f"/{MONITORING}"] = lambda: monitoring_state(
            self.core.streams(), listen.base_url
        )
        fresh = is_new_state_dir(settings.state_dir)
        try:
            apply_plugins(settings.plugins, registrations)
            self.core = Core(self.schema, settings.state_dir, registrations)
        except BaseException:
            self.schema.close()
            raise
        if fresh and settings.init_data is not None:
            seed_running(self.core, settings.init_data)
        resolver = PathResolver(self.schema.context)
        started = datetime.now(UTC)
        info = ServerInfo(_yang_library_version(self.schema), _schema_id(self.schema), started)
        users = LocalUsers(self.core)
        authenticator = Authenticator(users.users)
        app = create_app(
            Restconf(self.core, resolver, info, NotificationCodec(self.schema.context).to_xml),
            authenticator.authenticate,
            users.groups,
            max_body_size=listen.max_body_size,
        )
        self.server = RestconfServer(app, listen)
        if not users.users():
            LOG.warning(
                "no users in ietf-system:system/authentication: every request gets 401; "
                "seed one with --init-data (see catsctl hash-password)"
            )

    def __enter__(self) -> Application:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.core.end_subscriptions()  # streams end, so their workers are free to stop
        self.server.stop()
        self.core.close()
        self.schema.close()


def serve(settings: ServeSettings, stop: threading.Event | None = None) -> int:
    """Run the C-PS until ``stop`` is set (or forever); returns the exit code."""
    with Application(settings):
        LOG.info("serving; state in %s", settings.state_dir)
        (stop or threading.Event()).wait()
    return 0
