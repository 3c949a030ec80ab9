"""The ``server`` fixture of the functional tests: one ``catsctl serve`` per module.

A module shapes its server with two optional names: ``seed()``, the document running starts
with (default: the admin only), and ``SERVE_ARGS``, more ``catsctl serve`` options.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.functional.restconf_server import Server, admin_users, seeded_server


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One ``catsctl serve`` for the module, seeded with its ``seed()``."""
    module = request.module
    document: dict[str, object] = getattr(module, "seed", admin_users)()
    folder = tmp_path_factory.mktemp(module.__name__.rpartition(".")[2])
    with seeded_server(folder, document, *getattr(module, "SERVE_ARGS", ())) as running:
        yield running
