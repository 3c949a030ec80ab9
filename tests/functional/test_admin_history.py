"""Commit history, rollback and compare (cats-controller-admin) on a real ``catsctl serve``.

Every write path of both northbounds leaves one commit with its user, transport, session and
operation; a rollback restores running exactly and is itself rolled back; compare answers adds,
deletes and moves of an ordered-by user list as a YANG Patch and a unified diff, hides what the
requester may not read, and a dry run changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from lxml import etree

from controller.netconf.messages import NC
from tests.conftest import ROOT
from tests.functional.admin_client import (
    HEADERS,
    LENA,
    OLGA,
    commits,
    edits,
    output,
    rpc,
    top,
    users_and_top,
)
from tests.functional.netconf_client import RawSession, admin_session, ok, on_datastore, operation
from tests.functional.restconf_server import ADMIN, Server, admin_policy

pytestmark = pytest.mark.functional
RCT = "urn:example:rc-test"
NMDA = "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
DS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
CC = "urn:cats-controller:yang:cats-controller-admin"
PATCH = {"Content-Type": "application/yang-patch+json", "Accept": HEADERS["Accept"]}


def seed() -> dict[str, Any]:
    """:func:`users_and_top` under the shipped policy; lena may not read top's name."""
    document = users_and_top()
    policy = admin_policy(limited=[LENA[0]])
    rule = {
        "name": "hide-name",
        "module-name": "rc-test",
        "path": "/rc-test:top/name",
        "access-operations": "read",
        "action": "deny",
    }
    policy["ietf-netconf-acm:nacm"]["rule-list"].append(
        {"name": "limited", "group": ["limited"], "rule": [rule]}
    )
    return {**document, **policy}


def newest(server: Server, before: int) -> dict[str, Any]:
    """The one commit made since there were ``before``; asserts there is exactly one."""
    found = commits(server)
    assert len(found) == before + 1, found[: len(found) - before]
    return found[0]


#: Each write done, with the operation and the fields its commit must show.
Writes = list[tuple[str, dict[str, str]]]


def restconf_writes(server: Server) -> Writes:
    """Each RESTCONF write path once; the operation each commit must name."""
    done: Writes = []
    name = json.dumps({"rc-test:name": "b"})
    headers = {**HEADERS, "Cats-Commit-Comment": "rename to b", "Cats-Commit-Label": "put-b"}
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=headers).ok
    done.append(("PUT", {"comment": "rename to b", "label": "put-b"}))
    hop = json.dumps({"rc-test:hop": [{"name": "h4"}]})
    assert server.request("POST", "data/rc-test:top", data=hop, headers=HEADERS).ok
    done.append(("POST", {}))
    merge = json.dumps({"rc-test:top": {"mtu": 1400}})
    assert server.request("PATCH", "data/rc-test:top", data=merge, headers=HEADERS).ok
    done.append(("PATCH", {}))
    move = {"edit-id": "1", "operation": "move", "target": "/hop=h4", "where": "first"}
    patch = json.dumps({"ietf-yang-patch:yang-patch": {"patch-id": "p", "edit": [move]}})
    assert server.request("PATCH", "data/rc-test:top", data=patch, headers=PATCH).ok
    done.append(("PATCH", {}))
    assert server.request("DELETE", "data/rc-test:top/hop=h4").ok
    done.append(("DELETE", {}))
    return done


def top_edit(target: str, name: str) -> etree._Element:
    """An edit-config of top's name on a datastore."""
    edit = on_datastore(operation("edit-config"), "target", target)
    config = etree.SubElement(edit, NC + "config")
    element = etree.SubElement(config, f"{{{RCT}}}top", nsmap={None: RCT})
    etree.SubElement(element, f"{{{RCT}}}name").text = name
    return edit


def edit_data(name: str) -> etree._Element:
    """An NMDA edit-data of top's name on running."""
    edit = operation("edit-data", NMDA)
    etree.SubElement(edit, f"{{{NMDA}}}datastore", nsmap={"ds": DS}).text = "ds:running"
    config = etree.SubElement(edit, f"{{{NMDA}}}config")
    element = etree.SubElement(config, f"{{{RCT}}}top", nsmap={None: RCT})
    etree.SubElement(element, f"{{{RCT}}}name").text = name
    return edit


def netconf_writes(session: RawSession) -> Writes:
    """Each NETCONF write path once (a confirmed commit cancelled is two commits)."""
    done: Writes = []
    ok(session.rpc(top_edit("running", "c")))
    done.append(("edit-config", {}))
    ok(session.rpc(edit_data("d")))
    done.append(("edit-data", {}))
    ok(session.rpc(top_edit("candidate", "e")))
    ok(session.rpc(operation("commit")))
    done.append(("commit", {}))
    ok(session.rpc(top_edit("candidate", "e2")))
    copy = on_datastore(
        on_datastore(operation("copy-config"), "target", "running"), "source", "candidate"
    )
    ok(session.rpc(copy))
    ok(session.rpc(operation("discard-changes")))
    done.append(("copy-config", {}))
    ok(session.rpc(top_edit("candidate", "f")))
    confirmed = operation("commit")
    etree.SubElement(confirmed, NC + "confirmed")
    ok(session.rpc(confirmed))
    done.append(("commit", {}))
    ok(session.rpc(operation("cancel-commit")))
    # the server puts running back itself (RFC 6241 8.4), at the session's cancel-commit
    cancelled = {"comment": "confirmed commit cancelled: rolled back", "user": "system"}
    done.append(("confirmed-commit-cancel", cancelled))
    ok(session.rpc(top_edit("candidate", "g")))
    commit = etree.Element(f"{{{CC}}}commit", nsmap={None: CC})
    etree.SubElement(commit, f"{{{CC}}}comment").text = "via cc:commit"
    etree.SubElement(commit, f"{{{CC}}}label").text = "nc-g"
    ok(session.rpc(commit))
    done.append(("commit", {"comment": "via cc:commit", "label": "nc-g"}))
    back = etree.Element(f"{{{CC}}}rollback", nsmap={None: CC})
    etree.SubElement(back, f"{{{CC}}}back").text = "1"
    ok(session.rpc(back))
    done.append(("rollback", {"comment": "rollback to commit"}))
    return done


def _check(made: list[dict[str, Any]], expected: Writes, transport: str) -> None:
    assert [c["operation"] for c in made] == [operation for operation, _ in expected]
    for commit, (_, fields) in zip(made, expected, strict=True):
        assert commit["transport"] == transport
        assert commit["source-address"] == "127.0.0.1"
        assert commit["user"] == fields.get("user", "admin")
        for name, value in fields.items():
            assert commit[name].startswith(value), (commit, name)


def test_every_write_path_of_both_northbounds_is_one_commit(server: Server) -> None:
    before = len(commits(server))
    expected = restconf_writes(server)
    made = list(reversed(commits(server)[: len(commits(server)) - before]))
    _check(made, expected, "restconf")
    assert made[0]["changed"] == ["/rc-test:top/name"]
    assert all("session-id" not in c for c in made)
    before = len(commits(server))
    with admin_session(server) as session:
        expected = netconf_writes(session)
        session_id = str(session.session_id)
    made = list(reversed(commits(server)[: len(commits(server)) - before]))
    _check(made, expected, "netconf")
    assert {c["session-id"] for c in made} == {session_id}


def test_a_rollback_restores_running_exactly_and_is_itself_rolled_back(server: Server) -> None:
    start = top(server)
    count = len(commits(server))
    name = json.dumps({"rc-test:name": "renamed"})
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=HEADERS).ok
    hop = json.dumps({"rc-test:hop": [{"name": "h7", "cost": 7}]})
    assert server.request("POST", "data/rc-test:top", data=hop, headers=HEADERS).ok
    move = {"edit-id": "1", "operation": "move", "target": "/hop=h7", "where": "first"}
    patch = json.dumps({"ietf-yang-patch:yang-patch": {"patch-id": "p", "edit": [move]}})
    assert server.request("PATCH", "data/rc-test:top", data=patch, headers=PATCH).ok
    changed = top(server)
    assert changed != start
    result = output(rpc(server, "rollback", {"back": 3, "comment": "undo three"}))
    assert top(server) == start  # order of the ordered-by user list included
    rollback = newest(server, count + 3)
    assert rollback["id"] == result["commit-id"]
    assert (rollback["operation"], rollback["comment"]) == ("rollback", "undo three")
    output(rpc(server, "rollback", {"back": 1}))
    assert top(server) == changed
    before_writes = int(rollback["id"]) - 4  # the rollback followed the three writes
    output(rpc(server, "rollback", {"commit-id": str(before_writes)}))
    assert top(server) == start


def test_compare_answers_adds_deletes_and_moves_as_yang_patch_and_diff(server: Server) -> None:
    base = commits(server)[0]["id"]
    hop = json.dumps({"rc-test:hop": [{"name": "h9", "cost": 9}]})
    assert server.request("POST", "data/rc-test:top", data=hop, headers=HEADERS).ok
    assert server.request("DELETE", "data/rc-test:top/hop=h2").ok
    move = {"edit-id": "1", "operation": "move", "target": "/hop=h3", "where": "first"}
    patch = json.dumps({"ietf-yang-patch:yang-patch": {"patch-id": "p", "edit": [move]}})
    assert server.request("PATCH", "data/rc-test:top", data=patch, headers=PATCH).ok
    result = output(rpc(server, "compare", {"source": base}))
    found = {(e["operation"], e["target"]) for e in edits(result)}
    assert found == {
        ("create", "/rc-test:top/hop[name='h9']"),
        ("delete", "/rc-test:top/hop[name='h2']"),
        ("move", "/rc-test:top/hop[name='h3']"),
    }
    by_target = {e["target"]: e for e in edits(result)}
    moved = by_target["/rc-test:top/hop[name='h3']"]
    assert (moved["where"], moved["point"]) == ("before", "/rc-test:top/hop[name='h1']")
    created = by_target["/rc-test:top/hop[name='h9']"]
    assert json.loads(created["value"]) == {"rc-test:hop": [{"name": "h9", "cost": 9}]}
    diff = result["unified-diff"]
    assert f"--- {base} /rc-test:top/hop[name='h2']" in diff
    assert '-      "name": "h2"' in diff or '-  "rc-test:hop": [' in diff
    assert "@@ moved before /rc-test:top/hop[name='h1'] @@" in diff
    backwards = output(rpc(server, "compare", {"source": "running", "target": base}))
    assert {(e["operation"], e["target"]) for e in edits(backwards)} >= {
        ("delete", "/rc-test:top/hop[name='h9']"),
        ("create", "/rc-test:top/hop[name='h2']"),
    }
    same = output(rpc(server, "compare", {"source": "running", "target": "running"}))
    assert same["changes"] == 0
    output(rpc(server, "rollback", {"commit-id": base}))


def test_dry_runs_change_nothing(server: Server) -> None:
    name = json.dumps({"rc-test:name": "dry"})
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=HEADERS).ok
    before, count = top(server), len(commits(server))
    result = output(rpc(server, "rollback", {"back": 1, "dry-run": [None]}))
    assert result["changes"] == 1
    assert "commit-id" not in result
    assert edits(result)[0]["target"] == "/rc-test:top/name"
    assert (top(server), len(commits(server))) == (before, count)
    candidate = "ds/ietf-datastores:candidate/rc-test:top/name"
    wet = json.dumps({"rc-test:name": "wet"})
    assert server.request("PUT", candidate, data=wet, headers=HEADERS).ok
    result = output(rpc(server, "commit", {"dry-run": [None]}))
    assert [e["target"] for e in edits(result)] == ["/rc-test:top/name"]
    assert (top(server), len(commits(server))) == (before, count)
    assert server.get_json(candidate)["rc-test:name"] == "wet"  # the candidate keeps its edit
    made = output(rpc(server, "commit", {"comment": "wet now", "label": "wet"}))
    assert top(server)["name"] == "wet"
    assert [e["target"] for e in edits(made)] == ["/rc-test:top/name"]  # what it committed
    assert '+  "rc-test:name": "wet"' in made["unified-diff"]
    entry = newest(server, count)
    assert (entry["id"], entry["comment"], entry["label"]) == (made["commit-id"], "wet now", "wet")


def test_rollback_runs_as_the_requester_and_compare_hides_what_it_may_not_read(
    server: Server,
) -> None:
    name = json.dumps({"rc-test:name": "secretive"})
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=HEADERS).ok
    before, count = top(server), len(commits(server))
    refused = rpc(server, "rollback", {"back": 1}, auth=OLGA)
    assert refused.status_code == 403, refused.text
    error = refused.json()["ietf-restconf:errors"]["error"][0]
    assert error["error-tag"] == "access-denied"
    assert (top(server), len(commits(server))) == (before, count)
    base = str(int(commits(server)[0]["id"]) - 1)
    assert output(rpc(server, "compare", {"source": base}))["changes"] == 1
    hidden = output(rpc(server, "compare", {"source": base}, auth=LENA))
    assert hidden["changes"] == 0
    assert "secretive" not in json.dumps(hidden)
    startup = output(rpc(server, "compare", {"source": "startup"}, auth=LENA))
    assert all(e["target"] != "/rc-test:top/name" for e in edits(startup))
    assert "secretive" not in json.dumps(startup)


def test_a_rollback_to_an_unknown_label_says_so(server: Server) -> None:
    count = len(commits(server))
    unknown = rpc(server, "rollback", {"label": "no-such-label"})
    assert unknown.status_code == 400
    assert "no-such-label" in unknown.text
    assert len(commits(server)) == count


def test_admin_rpcs_over_netconf_answer_the_compare(server: Server) -> None:
    base = commits(server)[0]["id"]
    name = json.dumps({"rc-test:name": "nc-compare"})
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=HEADERS).ok
    compare = etree.Element(f"{{{CC}}}compare", nsmap={None: CC})
    etree.SubElement(compare, f"{{{CC}}}source").text = base
    with admin_session(server) as session:
        reply = ok(session.rpc(compare))
    assert reply.findtext(f".//{{{CC}}}changes") == "1"
    assert reply.findtext(f".//{{{CC}}}edit/{{{CC}}}target") == "/rc-test:top/name"
    assert "nc-compare" in (reply.findtext(f".//{{{CC}}}unified-diff") or "")


def test_a_confirmed_commit_not_confirmed_is_rolled_back_into_the_history(server: Server) -> None:
    before = top(server)
    candidate = "ds/ietf-datastores:candidate/rc-test:top/name"
    assert server.request(
        "PUT", candidate, data=json.dumps({"rc-test:name": "tentative"}), headers=HEADERS
    ).ok
    made = output(rpc(server, "commit", {"comment": "try it", "confirm-timeout": 1}))
    # Not read back before the timeout: on a loaded machine the second may already be over.
    deadline = time.monotonic() + 30
    while top(server) != before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert top(server) == before
    newest_two = commits(server)[:2]
    assert newest_two[1]["id"] == made["commit-id"]
    assert newest_two[1]["comment"] == "try it"
    assert newest_two[1]["changed"] == ["/rc-test:top/name"]
    assert newest_two[0]["operation"] == "confirmed-commit-timeout"
    assert newest_two[0]["user"] == "system"
    assert "not confirmed in time" in newest_two[0]["comment"]


def catsctl(server: Server, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``catsctl ARGUMENTS`` as the admin, the login from the environment."""
    login = {"CATSCTL_URL": server.root, "CATSCTL_USER": ADMIN[0], "CATSCTL_PASSWORD": ADMIN[1]}
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, **login},
        timeout=120,
    )


def test_catsctl_config_shows_compares_and_rolls_back(server: Server) -> None:
    before = top(server)
    name = json.dumps({"rc-test:name": "via-catsctl"})
    headers = {**HEADERS, "Cats-Commit-Comment": "try catsctl"}
    assert server.request("PUT", "data/rc-test:top/name", data=name, headers=headers).ok
    made = commits(server)[0]
    history = catsctl(server, "config", "history")
    assert history.returncode == 0, history.stderr
    newest_row = history.stdout.splitlines()[2]
    assert newest_row.startswith(f"{made['id']} ")
    assert " PUT " in newest_row
    assert "try catsctl" in newest_row
    compared = catsctl(server, "config", "compare", str(int(made["id"]) - 1))
    assert '+  "rc-test:name": "via-catsctl"' in compared.stdout
    assert compared.stdout.splitlines()[-1] == "1 change(s)"
    dry = catsctl(server, "config", "rollback", "--back", "1", "--dry-run")
    assert dry.stdout.splitlines()[-1] == "1 change(s) (nothing committed)"
    assert top(server)["name"] == "via-catsctl"
    undone = catsctl(server, "config", "rollback", "--back", "1", "--comment", "undo it")
    assert undone.returncode == 0, undone.stderr
    rollback = commits(server)[0]
    assert undone.stdout.splitlines()[-1] == f"1 change(s); commit {rollback['id']}"
    assert (rollback["operation"], rollback["comment"]) == ("rollback", "undo it")
    assert top(server) == before
    audit = catsctl(server, "audit", "--event", "rollback")
    assert any("undo it" in line for line in audit.stdout.splitlines()[2:]), audit.stdout
