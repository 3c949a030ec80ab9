"""HTTPS with a configured certificate, required client certificates (``--tls-client-ca``),
and connections that never start TLS."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import requests

from controller.sdk import Controller, SdkError
from tests.functional.restconf_server import ADMIN, admin_users, running_server, write_init
from tools.bench.attackers import HalfOpen

pytestmark = pytest.mark.functional


def make_cert(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (the ``openssl`` command, which
    tools/bootstrap.sh installs)."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.mark.parametrize("workers", ["0", "2"])
def test_https_with_client_certificates(tmp_path: Path, workers: str) -> None:
    """In the server process and in RESTCONF worker processes alike."""
    cert, key = make_cert(tmp_path, "server")
    client_cert, client_key = make_cert(tmp_path, "client")
    init = write_init(tmp_path, admin_users())
    extra = (
        *("--tls-cert", str(cert), "--tls-key", str(key), "--tls-client-ca", str(client_cert)),
        *("--restconf-workers", workers),
    )
    with running_server(tmp_path / "state", init, *extra, scheme="https") as server:
        url = server.url("yang-library-version")
        client = (str(client_cert), str(client_key))
        reply = server.session.get(url, verify=str(cert), cert=client, timeout=10)
        assert reply.status_code == 200
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(url, verify=str(cert), auth=server.session.auth, timeout=10)
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(url.replace("https:", "http:"), timeout=10)


def test_idle_connections_that_never_start_tls_stall_nobody(tmp_path: Path) -> None:
    """The TLS handshake is no longer done on the acceptor: connections that never send a
    byte hold nothing, HTTPS is served meanwhile, and they are closed at the header timeout."""
    cert, key = make_cert(tmp_path, "server")
    init = write_init(tmp_path, admin_users())
    extra = ("--tls-cert", str(cert), "--tls-key", str(key), "--restconf-header-timeout", "3")
    with running_server(tmp_path / "state", init, *extra, scheme="https") as server:
        session = requests.Session()
        session.trust_env = False  # REQUESTS_CA_BUNDLE would win over verify
        session.verify = str(cert)
        session.auth = ADMIN
        url = server.url("data/ietf-system:system")
        assert session.get(url, timeout=30).status_code == 200
        idle = HalfOpen(server.port, 20, silent=True)
        idle.start()
        try:
            for _ in range(10):  # each on a new connection: a new handshake every time
                fresh = requests.Session()
                fresh.trust_env = False
                assert fresh.get(url, verify=str(cert), auth=ADMIN, timeout=30).status_code == 200
                fresh.close()
                assert session.get(url, timeout=30).status_code == 200
            deadline = time.monotonic() + 60
            while idle.tally.get("closed by the server") < 20:
                assert time.monotonic() < deadline, "idle connections were never closed"
                time.sleep(0.1)
        finally:
            idle.stop()


def test_the_sdk_verifies_with_its_own_ca_whatever_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Controller.restconf(verify=CA)`` checks the server with CA even when
    REQUESTS_CA_BUNDLE names another bundle (a requests session's own verify loses to it)."""
    cert, key = make_cert(tmp_path, "server")
    other, _ = make_cert(tmp_path, "other")
    init = write_init(tmp_path, admin_users())
    extra = ("--tls-cert", str(cert), "--tls-key", str(key))
    with running_server(tmp_path / "state", init, *extra, scheme="https") as server:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(other))
        url = server.url("/restconf")
        with Controller.restconf(url, *ADMIN, verify=str(cert)) as cps:
            assert cps.computing_service_table() is not None
        with (
            Controller.restconf(url, *ADMIN, verify=str(other)) as wrong,
            pytest.raises(SdkError),
        ):
            wrong.computing_service_table()
