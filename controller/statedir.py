"""The state directory of a server: private, new or not, and what seeds it (``--init-data``,
``--read-only-group``)."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Sequence
from pathlib import Path

from controller import audit
from controller.auth.policy import read_only_rule_list
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    InsertWhere,
    ReadRequest,
    Revision,
)
from controller.datastore.core import Core
from controller.datastore.nacm import NACM_PATH
from controller.datastore.statelock import LOCK_NAME
from controller.errors import CatsError
from controller.model import Encoding
from controller.types import DataPath

LOG = logging.getLogger("catsctl.serve")


def private_state_dir(state_dir: Path) -> None:
    """Create the state directory readable by its owner only (0700), or make an existing one
    so: it holds the datastores, host keys and the secrets' key."""
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(state_dir.stat().st_mode)
    if mode & 0o077:
        state_dir.chmod(0o700)
        LOG.warning("state directory %s was mode %o; now 0700", state_dir, mode)


def is_new_state_dir(state_dir: Path) -> bool:
    """Whether a state directory holds nothing yet but its lock (``--init-data`` applies only
    then)."""
    return not state_dir.is_dir() or all(path.name == LOCK_NAME for path in state_dir.iterdir())


def ensure_read_only_groups(core: Core, groups: Sequence[str]) -> None:
    """``--read-only-group``: put the rule-list that denies every write to each group first in
    running's NACM rule-lists, when it is not there yet (logged when added)."""
    for group in groups:
        rule_list = read_only_rule_list(group)
        path = DataPath(f"{NACM_PATH}/rule-list[name='{rule_list['name']}']")
        if core.read(ReadRequest(DatastoreName.RUNNING, path), SYSTEM).document:
            continue
        document = json.dumps({"ietf-netconf-acm:rule-list": [rule_list]})
        edit = Edit(EditOperation.CREATE, path, document, Encoding.JSON, where=InsertWhere.FIRST)
        core.edit(DatastoreName.RUNNING, [edit], SYSTEM)
        LOG.info("nacm: added rule-list %s first: group %s may not write", path, group)


def seed_running(core: Core, init_data: Path) -> Revision | None:
    """Replace running with the ``--init-data`` document (JSON, or XML by its suffix); in a
    cluster only while the cluster holds no commit yet (one replica seeds it)."""
    if core.replication is not None and core.applied > 0:
        LOG.info("--init-data %s ignored: the cluster already holds a configuration", init_data)
        return None
    encoding = Encoding.XML if init_data.suffix.lower() == ".xml" else Encoding.JSON
    text = init_data.read_text(encoding="utf-8")
    LOG.info("seeding running from %s", init_data)
    edit = Edit(EditOperation.REPLACE, DataPath("/"), text, encoding)
    with audit.annotated(operation="init-data", comment=f"seeded from {init_data.name}"):
        try:
            return core.edit(DatastoreName.RUNNING, [edit], SYSTEM)
        except CatsError as exc:
            if core.replication is None or exc.items[0].tag != "in-use":
                raise
            LOG.info("--init-data %s ignored: another replica seeded the cluster", init_data)
            return None
