"""The C-PS logs in to a forwarder with an SSH key instead of a password (southbound).

A real ``catsctl forwarder`` whose user has an authorized key and no password, and the
southbound's :class:`~controller.southbound.session.ConfigSession` logging in with the
private key file, as ``forwarders/forwarder/private-key-file`` makes the C-PS do. A key file
that others can read is refused before any connection, naming the fix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from controller.southbound.errors import SouthboundError
from controller.southbound.peer import Credentials, PeerSettings
from controller.southbound.session import ConfigSession
from tests.conftest import ROOT
from tests.functional.restconf_server import free_port
from tests.functional.test_sci import wait_for
from tools.bench.common import stop

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "cps_rsa"
    paramiko.RSAKey.generate(2048).write_private_key_file(str(path))
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def forwarder(tmp_path_factory: pytest.TempPathFactory, key_file: Path) -> Iterator[int]:
    """A forwarder whose only user, ``cps``, logs in with the key; its NETCONF port."""
    folder = tmp_path_factory.mktemp("forwarder-keys")
    key = paramiko.RSAKey.from_private_key_file(str(key_file))
    config = folder / "forwarder.json"
    user = {"name": "cps", "authorized-key": [f"{key.get_name()} {key.get_base64()} cps@test"]}
    config.write_text(json.dumps({"forwarder-id": "192.0.2.9", "users": [user]}))
    netconf = free_port()
    command = [
        *(sys.executable, "-m", "controller.cli", "forwarder", "--config", str(config)),
        *("--state-dir", str(folder / "state"), "--listen", f"127.0.0.1:{free_port()}"),
        *("--netconf-port", str(netconf), "--restconf-port", str(free_port())),
    ]
    with (folder / "forwarder.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    try:
        session = ConfigSession(("127.0.0.1", netconf), Credentials("cps", key_file=str(key_file)))
        wait_for("the forwarder's NETCONF", lambda: _reads(session), 60)
        session.close()
        yield netconf
    finally:
        stop(process, timeout=10)


def _reads(session: ConfigSession) -> bool:
    try:
        session.read()
    except SouthboundError:
        return False
    return True


def test_the_cps_logs_in_with_its_key_and_no_password(forwarder: int, key_file: Path) -> None:
    session = ConfigSession(("127.0.0.1", forwarder), Credentials("cps", key_file=str(key_file)))
    try:
        assert session.read() == {}  # logged in, read the (empty) steering configuration
    finally:
        session.close()
    with_password = ConfigSession(
        ("127.0.0.1", forwarder), Credentials("cps", "guess"), PeerSettings(timeout=10)
    )
    with pytest.raises(SouthboundError):
        with_password.read()  # the user has no password: only the key logs in
    with_password.close()


def test_a_key_file_others_can_read_is_refused_naming_the_fix(
    forwarder: int, key_file: Path, tmp_path: Path
) -> None:
    exposed = tmp_path / "exposed"
    exposed.write_bytes(key_file.read_bytes())
    exposed.chmod(0o644)
    session = ConfigSession(("127.0.0.1", forwarder), Credentials("cps", key_file=str(exposed)))
    with pytest.raises(SouthboundError) as caught:
        session.read()
    session.close()
    assert f"chmod 600 {exposed}" in str(caught.value)
