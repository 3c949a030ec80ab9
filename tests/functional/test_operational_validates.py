"""Every read of the operational datastore validates against the server's own module set.

The whole operational datastore is read over both northbounds (RESTCONF ``GET /restconf/data``
in JSON and XML and ``/ds/ietf-datastores:operational``; NETCONF ``<get>`` and ``<get-data>``)
from a ``catsctl serve`` with configuration in several modules, a plugin's state, open
NETCONF sessions and a held lock, so every provider's output is there. Each document is then
validated as a complete datastore (RFC 7950 8: every mandatory node, every constraint):

- with libyang, in a context built from the yang-library the server reports (the modules and
  the features it lists), and
- with Debian's ``yanglint -t data``, its context made from the same yang-library document
  (``-Y``, which itself needs RFC 7895 ``modules-state``, issue 15 defect 4).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from controller.model import Encoding, InstanceKind, Schema, project_yang_dir, standard_yang_dirs
from controller.netconf.messages import NC
from tests.functional.netconf_client import admin_session, ok, on_datastore, operation
from tests.functional.restconf_server import JSON, TEST_YANG, XML, Server, admin_users

pytestmark = pytest.mark.functional
SERVE_ARGS = (
    *("--plugin", "tests.functional.plugins.rc_test_plugin"),
    *("--feature", "conform-test:fancy"),
)
RESTCONF_NS = "urn:ietf:params:xml:ns:yang:ietf-restconf"
NMDA_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
DATASTORES_NS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
LINT_TIMEOUT_S = 120


def seed() -> dict[str, object]:
    """Configuration in several modules, defaults and a feature's node among it."""
    document = admin_users()
    document["conform-test:box"] = {
        "label": "l",
        "port": [{"proto": "conform-test:tcp", "number": 80}],
        "entry": [{"id": 1}],
        "marker": {},
        "fancy": {"level": 1},
    }
    document["rc-test:top"] = {"link": [{"from": "a", "to": "b", "speed": 10}]}
    document["bench-list:bench"] = {"target": [{"name": "t1"}]}
    return document


@pytest.fixture(scope="module")
def reads(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each whole read of operational, by name: (encoding, document), and the yang-library."""
    found: dict[str, Any] = {}
    with admin_session(server) as holder, admin_session(server) as reader:
        ok(holder.rpc(on_datastore(operation("lock"), "target", "candidate")))
        ok(reader.rpc(operation("get", ping="")))  # counters of a session that did something
        for name, accept in (("restconf-json", JSON), ("restconf-xml", XML)):
            reply = server.request("GET", "data", headers={"Accept": accept})
            assert reply.status_code == 200, reply.text
            found[name] = _unwrap(reply.text, accept)
        reply = server.request("GET", "ds/ietf-datastores:operational", headers={"Accept": JSON})
        assert reply.status_code == 200, reply.text
        found["restconf-ds-operational"] = _unwrap(reply.text, JSON)
        found["netconf-get"] = _children(ok(reader.rpc(operation("get"))), NC + "data")
        get_data = etree.fromstring(
            f'<get-data xmlns="{NMDA_NS}" xmlns:ds="{DATASTORES_NS}">'
            "<datastore>ds:operational</datastore></get-data>"
        )
        found["netconf-get-data"] = _children(ok(reader.rpc(get_data)), f"{{{NMDA_NS}}}data")
    library = server.get_json("data/ietf-yang-library:yang-library")
    library.update(server.get_json("data/ietf-yang-library:modules-state"))
    folder = tmp_path_factory.mktemp("operational")
    (folder / "yang-library.json").write_text(json.dumps(library))
    return {"documents": found, "library": library, "folder": folder}


def _unwrap(text: str, accept: str) -> tuple[Encoding, str]:
    if accept == JSON:
        return Encoding.JSON, json.dumps(json.loads(text)["ietf-restconf:data"])
    root = etree.fromstring(text.encode())
    assert root.tag == f"{{{RESTCONF_NS}}}data"
    return Encoding.XML, "".join(etree.tostring(child, encoding="unicode") for child in root)


def _children(reply: Any, holder: str) -> tuple[Encoding, str]:
    data = reply.find(holder)
    assert data is not None
    return Encoding.XML, "".join(etree.tostring(child, encoding="unicode") for child in data)


def _search_dirs() -> list[Path]:
    return [project_yang_dir(), TEST_YANG, *standard_yang_dirs()]


def _schema(library: dict[str, Any]) -> Schema:
    """A libyang context with exactly the modules and features the server reports."""
    module_set = library["ietf-yang-library:yang-library"]["module-set"][0]
    modules = [entry["name"] for entry in module_set["module"]]
    features = {e["name"]: e["feature"] for e in module_set["module"] if e.get("feature")}
    internal = {"yang", "ietf-yang-schema-mount", "ietf-yang-metadata", "ietf-inet-types"}
    wanted = [name for name in modules if name not in internal]
    return Schema(_search_dirs(), wanted, {n: f for n, f in features.items() if n in wanted})


NAMES = (
    "restconf-json",
    "restconf-xml",
    "restconf-ds-operational",
    "netconf-get",
    "netconf-get-data",
)


@pytest.mark.parametrize("name", NAMES)
def test_every_operational_read_validates_with_libyang(reads: dict[str, Any], name: str) -> None:
    encoding, document = reads["documents"][name]
    for present in ("ietf-netconf-monitoring", "ietf-netconf-acm", "rc-test", "modules-state"):
        assert present in document, (name, present)
    with _schema(reads["library"]) as schema:
        schema.validate(document, InstanceKind.DATA, encoding)


@pytest.mark.skipif(shutil.which("yanglint") is None, reason="yanglint (libyang2-tools) missing")
@pytest.mark.parametrize("name", NAMES)
def test_every_operational_read_validates_with_yanglint(reads: dict[str, Any], name: str) -> None:
    encoding, document = reads["documents"][name]
    folder: Path = reads["folder"]
    path = folder / f"{name}.{encoding.value}"
    path.write_text(document)
    command = ["yanglint", "-Y", str(folder / "yang-library.json")]
    for directory in _search_dirs():
        command += ["-p", str(directory)]
    command += ["-t", "data", str(path)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=LINT_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "err" not in done.stderr.lower(), done.stderr
