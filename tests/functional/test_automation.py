"""The automation examples of docs/automation/ against a real ``catsctl serve`` (issue 19).

The Python script runs over RESTCONF and over NETCONF as a user would run it (its own process)
and must print the decision of service-metrics-op 7.5; the Ansible playbook runs with
ansible-playbook and ansible.netcommon (the ``ansible`` extra and
``python -m tools.ansible_collections``, both installed by ``tools/bootstrap.sh test``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.functional.restconf_server import ADMIN, Server
from tools import ansible_collections

pytestmark = pytest.mark.functional

AUTOMATION = ROOT / "docs" / "automation"
PLAYBOOK_TIMEOUT_S = 300


def password_file(folder: Path) -> Path:
    path = folder / "admin.password"
    path.write_text(ADMIN[1] + "\n")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("protocol", ["restconf", "netconf"])
def test_the_python_script_configures_reports_and_prints_the_decision(
    server: Server, tmp_path: Path, protocol: str
) -> None:
    where = (
        ["--restconf", f"{server.root}/restconf"]
        if protocol == "restconf"
        else ["--netconf", f"127.0.0.1:{server.netconf_port}"]
    )
    result = subprocess.run(
        [
            sys.executable,
            str(AUTOMATION / "select_service.py"),
            *where,
            "--user",
            ADMIN[0],
            "--password-file",
            str(password_file(tmp_path)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "select-service ARS at 10.0.0.1: selected, fallback none"
    assert any(
        line.startswith("188.3.67.3:67") and "excluded price-above-maximum" in line
        for line in lines
    ), result.stdout
    assert any(line.startswith("188.3.67.4:69") and "rank 1" in line for line in lines)
    assert lines[-1] == "selected: 188.3.67.4:69 (egress 188.3.67.4)"
    assert ADMIN[1] not in result.stdout + result.stderr


def test_the_python_script_shows_a_refusal_with_its_tag_and_path(
    server: Server, tmp_path: Path
) -> None:
    """A price budget outside the type: the C-PS refuses, the script says why, exit 1."""
    result = subprocess.run(
        [
            sys.executable,
            str(AUTOMATION / "select_service.py"),
            "--restconf",
            f"{server.root}/restconf",
            "--user",
            ADMIN[0],
            "--password-file",
            str(password_file(tmp_path)),
            "--max-price",
            "-1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "max-price" in result.stderr


def ansible_playbook() -> str:
    """The ansible-playbook of this environment; the suite's bootstrap installs it."""
    found = Path(sys.executable).with_name("ansible-playbook")
    if not found.exists() or not ansible_collections.installed():
        message = (
            "Ansible is not installed: pip install -e '.[ansible]' && "
            "python -m tools.ansible_collections (tools/bootstrap.sh test does both)"
        )
        pytest.fail(message)  # the suite's bootstrap installs it: never a silent skip
    return str(found)


def test_the_ansible_playbook_runs_against_the_server(server: Server, tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yml"
    example = (AUTOMATION / "ansible" / "inventory.example.yml").read_text()
    inventory.write_text(
        example.replace("ansible_port: 8830", f"ansible_port: {server.netconf_port}")
        .replace("ansible_httpapi_port: 8080", f"ansible_httpapi_port: {server.port}")
        .replace("admin-secret", ADMIN[1])
    )
    env = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(ansible_collections.collections_path()),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_PERSISTENT_CONTROL_PATH_DIR": str(tmp_path / "ansible-pc"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    # Ansible templates a task's timestamp before it starts the module; on a loaded machine
    # that took more than the default max-clock-skew (10 s) before the report arrived.
    skew = {"ietf-cats-service-metrics:update-control": {"max-clock-skew": 600}}
    patched = server.request(
        "PATCH",
        "data/ietf-cats-service-metrics:update-control",
        json=skew,
        headers={"Content-Type": "application/yang-data+json"},
    )
    assert patched.status_code == 204, patched.text
    result = subprocess.run(
        [ansible_playbook(), "-i", str(inventory), str(AUTOMATION / "ansible" / "playbook.yml")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PLAYBOOK_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "ARS at 10.0.0.1 -> 188.3.67.4:69" in result.stdout
    assert "TASK [Remove it again" in result.stdout  # the RESTCONF writes ran, then the delete
    video = "data/ietf-cats-service-metrics:selection-policy/service-policy=VIDEO"
    assert server.request("GET", video).status_code == 404
    recap = [line for line in result.stdout.splitlines() if line.startswith(("cps ", "cps_"))]
    assert len(recap) == 2
    assert all("failed=0" in line and "unreachable=0" in line for line in recap), recap
    assert shutil.which("ansible-playbook", path=env["PATH"]) is not None
