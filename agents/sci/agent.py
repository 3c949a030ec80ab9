"""The SCI process: configuration, the seven components, two HTTP interfaces (section 3).

The composition root of ``catsctl sci``: it validates the configuration, builds the runtime,
starts the client-facing interface (Dispatcher), the management interface (pushed metrics,
state) and the periodic collector, Health Monitor, Session Manager and Reporting Interface
threads, and stops them all in reverse order.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from agents.common.http import HttpServer
from agents.common.readiness import serving
from agents.common.sequence import SequenceStore
from agents.sci.config import Overrides, load_config
from agents.sci.dispatcher import Dispatcher, ForwardSettings
from agents.sci.errors import refused
from agents.sci.manage import Manage
from agents.sci.monitor import schedule
from agents.sci.reporter import Reporter
from agents.sci.runtime import Runtime
from agents.sci.sender import Credentials, RestconfSender
from controller.model import Schema

LOG = logging.getLogger("agents.sci")


@dataclass(frozen=True, slots=True)
class SciSettings:
    """What ``catsctl sci`` was given besides the configuration file."""

    config: Path
    state_dir: Path
    overrides: Overrides = field(default_factory=Overrides)
    credentials: Credentials | None = None
    manage: tuple[str, int] = ("127.0.0.1", 0)
    threads: int = 32
    report_timeout_s: float = 5.0
    forward: ForwardSettings = field(default_factory=ForwardSettings)


def run_sci(settings: SciSettings, stop: threading.Event) -> int:
    """Run the SCI until ``stop`` is set.

    Raises:
        SciError: when the configuration is malformed or names an unsupported transport.
    """
    with Schema() as schema:
        _, config = load_config(settings.config, schema, settings.overrides)
        if config.restconf_uri is None:
            raise refused(
                "the NETCONF transport to the C-SMA is not supported; use c-sma/restconf-uri",
                path="/ietf-cats-sci:sci/c-sma",
                tag="operation-not-supported",
            )
        runtime = Runtime(config, time.time())
        sender = RestconfSender(
            config.restconf_uri, settings.credentials, settings.report_timeout_s
        )
        sequence = SequenceStore(settings.state_dir)
        reporter = Reporter(runtime, sequence, sender.send, schema)
        client = HttpServer(
            Dispatcher(runtime, settings.forward),
            config.address,
            config.port,
            name="cats-sci",
            threads=settings.threads,
        )
        manage = HttpServer(
            Manage(runtime, reporter), *settings.manage, name="cats-sci-manage", threads=4
        )
        first = sequence.last + 1
        try:
            with client, manage, schedule(runtime, reporter):
                LOG.info(
                    "SCI %s (CS-ID %s) ready: client %s:%d, management port %d, "
                    "%d instances, reports to %s from sequence %d",
                    config.csci_id,
                    config.cs_id,
                    config.address,
                    config.port,
                    manage.port,
                    len(config.instances),
                    config.restconf_uri,
                    first,
                )
                serving()
                stop.wait()
        finally:
            sender.close()
    return 0
