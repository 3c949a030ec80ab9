"""Third-party NETCONF clients against a real ``catsctl serve``: netconf-console2 and yangcli.

netconf-console2 (Python, ncclient underneath) does hello, get-config, edit-config to
candidate and commit. yangcli (yuma123, libssh2) runs a script in ``--batch-mode``: it
connects (hello), edits candidate with ``create``, commits and reads back with
``xget-config``. yangcli loads bench-list from tests/yang (``--module``) because yuma123 2.13
does not fetch modules through a YANG library 1.1 server; its libssh2 needs the server's
ECDSA host key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.restconf_server import ADMIN, TEST_YANG, Server, admin_users

pytestmark = pytest.mark.functional
BL = "urn:example:bench-list"
CLIENT_TIMEOUT_S = 60
CONSOLE = Path(sys.executable).with_name("netconf-console2")


def seed() -> dict[str, object]:
    """The admin and an empty bench-list."""
    document = admin_users()
    document["bench-list:bench"] = {"target": [{"name": "t1"}]}
    return document


def console(
    server: Server, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run netconf-console2 against the server."""
    command = [
        str(CONSOLE),
        *("--host", "127.0.0.1", "--port", str(server.netconf_port)),
        *("-u", ADMIN[0], "-p", ADMIN[1]),
        *args,
    ]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, check=False
    )


def test_netconf_console2_hello_edit_commit_get_config(server: Server, tmp_path: Path) -> None:
    hello = console(server, "--hello")
    assert hello.returncode == 0, hello.stderr
    assert "urn:ietf:params:netconf:capability:candidate:1.0" in hello.stdout
    edit = tmp_path / "edit.xml"
    edit.write_text(f'<bench xmlns="{BL}"><entry><id>5</id><name>console</name></entry></bench>')
    done = console(server, "--db", "candidate", "--edit-config", str(edit), "--commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("<ok ") == 2
    read = console(server, "--get-config", "-x", "/bench/entry[id=5]")
    assert read.returncode == 0, read.stderr
    assert "<name>console</name>" in read.stdout
    edit.write_text(f'<bench xmlns="{BL}"><nothing/></bench>')
    refused = console(server, "--edit-config", str(edit))
    assert refused.returncode != 0
    assert "<error-tag>unknown-element</error-tag>" in refused.stdout


def test_yangcli_batch_script_create_commit_xget_config(server: Server, tmp_path: Path) -> None:
    script = tmp_path / "edit.yangcli"
    script.write_text(
        "create /bench/entry -- id=7 name=yangcli\n"
        "commit\n"
        "xget-config source=running /bench/entry[id=7]\n"
    )
    command = [
        "yangcli",
        "--server=127.0.0.1",
        f"--ncport={server.netconf_port}",
        f"--user={ADMIN[0]}",
        f"--password={ADMIN[1]}",
        "--batch-mode",
        "--autoload=false",
        f"--modpath={TEST_YANG}",
        "--module=bench-list",
        f"--run-script={script}",
    ]
    env = {**os.environ, "HOME": str(tmp_path)}  # yangcli keeps its history in ~/.yuma
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    output = done.stdout + done.stderr
    assert "Server Protocol Capabilities" in output  # the hello was read
    assert "candidate:1.0" in output
    assert "RPC OK Reply 1" in output  # create (edit-config on candidate)
    assert "RPC OK Reply 2" in output  # commit
    assert "RPC Data Reply 3" in output  # xget-config
    assert "name yangcli" in output, output
    assert "Error" not in output, output
