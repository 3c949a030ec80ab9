"""``catsctl demo --keep`` prints the console's URL and a login for each group it seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.demo.bed import BedSettings, cps_groups
from controller.demo.console import console_lines


def test_the_console_lines_name_its_url_and_a_login_per_group(tmp_path: Path) -> None:
    settings = BedSettings(tmp_path)
    lines = console_lines("http://127.0.0.1:8123/", settings)
    text = "\n".join(lines)
    assert "The operator console: http://127.0.0.1:8123/" in text
    for user, password in (
        ("admin", settings.admin_password),
        ("operator", settings.operator_password),
        ("observer", settings.observer_password),
    ):
        assert f"{user} / {password}" in text
    groups: dict[str, Any] = cps_groups(settings)
    assert groups["operator"] == ["operator"]
    assert groups["observer"] == ["observer"]
