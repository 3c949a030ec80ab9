"""``catsctl console`` as a process with its TLS options: it serves HTTPS (``--tls-cert``,
``--tls-key``; the session cookie is then ``Secure``) and talks to an HTTPS C-PS that it
verifies against ``--cps-ca``; a C-PS whose certificate that CA did not sign is not asked for
a login. Plain HTTP clients (requests), no browser: the browser tests are in
test_console_browser.py."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from controller.demo.launch import listening, wait_until
from tests.conftest import ROOT
from tests.functional.restconf_server import (
    ADMIN,
    admin_users,
    free_port,
    running_server,
    write_init,
)
from tests.functional.test_restconf_tls import make_cert
from tools.bench.common import stop

pytestmark = pytest.mark.functional
START_TIMEOUT_S = 120.0


@contextlib.contextmanager
def console(folder: Path, cps_url: str, *extra: str) -> Iterator[str]:
    """``catsctl console`` on a free port; its URL once it listens."""
    port = free_port()
    log = folder / f"console-{port}.log"
    command = [
        *(sys.executable, "-m", "controller.cli", "console"),
        *("--listen", f"127.0.0.1:{port}", "--cps-url", cps_url),
        *extra,
    ]
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
    try:

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"catsctl console exited:\n{log.read_text()}")
            return listening(port)

        wait_until("the console", up, timeout=START_TIMEOUT_S)
        yield f"https://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            stop(process, timeout=10)


def _login(browser: requests.Session, url: str, verify: str) -> requests.Response:
    page = browser.get(f"{url}/login", verify=verify, timeout=30)
    assert page.status_code == 200
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token is not None
    form = {"csrf_token": token.group(1), "username": ADMIN[0], "password": ADMIN[1]}
    return browser.post(  # a browser sends the page's address (Referrer-Policy same-origin)
        f"{url}/login",
        data=form,
        headers={"Referer": f"{url}/login"},
        verify=verify,
        timeout=60,
        allow_redirects=False,
    )


def test_https_console_for_an_https_cps(tmp_path: Path) -> None:
    cps_cert, cps_key = make_cert(tmp_path, "cps")
    own_cert, own_key = make_cert(tmp_path, "console")
    init = write_init(tmp_path, admin_users())
    tls = ("--tls-cert", str(cps_cert), "--tls-key", str(cps_key))
    with running_server(tmp_path / "state", init, *tls, scheme="https") as cps:
        served = ("--tls-cert", str(own_cert), "--tls-key", str(own_key))
        with (
            console(tmp_path, f"{cps.root}/restconf", *served, "--cps-ca", str(cps_cert)) as url,
            requests.Session() as browser,
        ):
            reply = _login(browser, url, str(own_cert))
            assert reply.status_code == 302, reply.text
            cookie = next(c for c in browser.cookies if c.name == "cats_console")
            assert cookie.secure
            assert cookie.has_nonstandard_attr("HttpOnly")
            config = browser.get(f"{url}/config/", verify=str(own_cert), timeout=60)
            assert config.status_code == 200
            assert "init-data" in config.text  # the C-PS's first commit, read over HTTPS
        # the C-PS's certificate is not signed by the CA the console was given: no login
        with (
            console(tmp_path, f"{cps.root}/restconf", *served, "--cps-ca", str(own_cert)) as url,
            requests.Session() as browser,
        ):
            reply = _login(browser, url, str(own_cert))
            assert reply.status_code == 401
            assert "the C-PS could not be asked" in reply.text
            page = browser.get(
                f"{url}/config/", verify=str(own_cert), timeout=30, allow_redirects=False
            )
            assert page.status_code == 302  # not logged in
