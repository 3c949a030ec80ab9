"""A real headless browser for the console's tests: Debian's chromium through chromedriver.

``tools/bootstrap.sh`` installs ``chromium`` and ``chromium-driver``; where they are missing
and cannot be installed, :func:`require_browser` fails saying so. The browser runs with
a fresh profile, no network of its own (the machine's is closed) and, as root, no sandbox.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def require_browser() -> None:
    """Fail, saying why, when the browser is not installed (the suite's bootstrap installs it:
    a console never tested must not pass as one that was)."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"no browser for the console's tests ({', '.join(missing)} missing): install "
            "Debian's chromium and chromium-driver (tools/bootstrap.sh does, as root)"
        )


@contextlib.contextmanager
def chromium(
    width: int = 1280, height: int = 800, *, javascript: bool = True
) -> Iterator[webdriver.Chrome]:
    """A headless chromium at ``width`` x ``height``, with a fresh profile."""
    require_browser()
    profile = Path(tempfile.mkdtemp(prefix="console-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_page_load_timeout(120)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
