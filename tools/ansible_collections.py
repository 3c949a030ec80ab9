"""Install the Ansible collections the automation playbook needs, from PyPI, without galaxy.

Usage: ``python -m tools.ansible_collections [--print-path]``. ``ansible-galaxy`` needs the
galaxy server; the ``ansible`` package on PyPI carries every collection but installs 575 MB in
about 4 minutes. This tool takes the one wheel of that package with ``pip download`` (54 MB,
about 10 s from PyPI) and extracts only ``ansible.netcommon`` and its dependency
``ansible.utils`` (about 4 MB) into ``<venv>/share/ansible/collections``, for
``ANSIBLE_COLLECTIONS_PATH``. ``ansible-core`` itself comes from the ``ansible`` extra of
pyproject.toml. Safe to run again: it does nothing when that release is already there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ANSIBLE_RELEASE = "12.3.0"
"""The ``ansible`` release whose collections are taken (its ansible-core is 2.19)."""
COLLECTIONS = ("ansible_collections/ansible/netcommon/", "ansible_collections/ansible/utils/")


def collections_path() -> Path:
    """``<prefix of this interpreter>/share/ansible/collections``."""
    return Path(sys.prefix) / "share" / "ansible" / "collections"


def _marker() -> Path:
    return collections_path() / "cats-controller-source.json"


def installed() -> bool:
    """Whether the collections of :data:`ANSIBLE_RELEASE` are in place."""
    marker = _marker()
    if not marker.exists():
        return False
    return bool(json.loads(marker.read_text())["ansible"] == ANSIBLE_RELEASE)


def extract(wheel: Path, target: Path) -> int:
    """Unpack the collections' files of ``wheel`` under ``target``; the number of files."""
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            if member.filename.startswith(COLLECTIONS) and not member.is_dir():
                archive.extract(member, target)
                count += 1
    return count


def install() -> int:
    """Download the ``ansible`` wheel, extract the collections; the number of files."""
    target = collections_path()
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "--dest",
                scratch,
                f"ansible=={ANSIBLE_RELEASE}",
            ],
            check=True,
        )
        (wheel,) = Path(scratch).glob("ansible-*.whl")
        count = extract(wheel, target)
    _marker().write_text(json.dumps({"ansible": ANSIBLE_RELEASE, "files": count}))
    return count


def main(argv: list[str] | None = None) -> int:
    """Install unless present; with ``--print-path`` only print the collections path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-path", action="store_true")
    args = parser.parse_args(argv)
    if args.print_path:
        print(collections_path())
        return 0
    if installed():
        return 0
    count = install()
    print(
        f"ansible_collections: {count} files of ansible {ANSIBLE_RELEASE} in {collections_path()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
