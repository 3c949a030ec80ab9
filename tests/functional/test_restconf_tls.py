"""HTTPS with a configured certificate, and required client certificates (``--tls-client-ca``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import requests

from tests.functional.restconf_server import admin_users, running_server, write_init

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


def test_https_with_client_certificates(tmp_path: Path) -> None:
    cert, key = make_cert(tmp_path, "server")
    client_cert, client_key = make_cert(tmp_path, "client")
    init = write_init(tmp_path, admin_users())
    extra = ("--tls-cert", str(cert), "--tls-key", str(key), "--tls-client-ca", str(client_cert))
    with running_server(tmp_path / "state", init, *extra, scheme="https") as server:
        url = server.url("yang-library-version")
        client = (str(client_cert), str(client_key))
        reply = server.session.get(url, verify=str(cert), cert=client, timeout=10)
        assert reply.status_code == 200
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(url, verify=str(cert), auth=server.session.auth, timeout=10)
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(url.replace("https:", "http:"), timeout=10)
