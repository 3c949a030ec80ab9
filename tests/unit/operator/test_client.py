"""Where ``catsctl`` finds the server and the credentials: flags, environment, a 0600 file."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.operator.client import OperatorError, login


def test_a_config_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('url = "http://127.0.0.1:1"\nuser = "alice"\npassword = "s3cr3t"\n')
    config.chmod(0o644)
    with pytest.raises(OperatorError, match="chmod 600"):
        login(None, None, None, config)
    config.chmod(0o600)
    found = login(None, None, None, config)
    assert (found.url, found.user, found.password) == ("http://127.0.0.1:1", "alice", "s3cr3t")


def test_flags_win_over_the_environment_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('user = "file-user"\npassword = "file-password"\n')
    config.chmod(0o600)
    password = tmp_path / "password"
    password.write_text("flag-password\n")
    monkeypatch.setenv("CATSCTL_USER", "env-user")
    monkeypatch.setenv("CATSCTL_URL", "http://env:1")
    found = login(None, None, password, config)
    assert (found.url, found.user, found.password) == ("http://env:1", "env-user", "flag-password")
    found = login("http://flag:2", "flag-user", None, config)
    assert (found.url, found.user, found.password) == (
        "http://flag:2",
        "flag-user",
        "file-password",
    )


def test_a_missing_config_file_named_by_a_flag_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(OperatorError, match="no such file"):
        login(None, None, None, tmp_path / "absent.toml")
