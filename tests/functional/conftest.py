"""The ``server`` fixture of the functional tests: one ``catsctl serve`` per module.

A module shapes its server with optional names: ``seed()``, the document running starts
with (default: the admin only); ``SERVE_ARGS``, more ``catsctl serve`` options; and
``RESTCONF_WORKERS``, the ``--restconf-workers`` counts to run each of its tests against
(default: the one-process server only), so that the same assertions hold whether RESTCONF is
read in the server process or in worker processes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.functional.restconf_server import Server, admin_users, seeded_server


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a module's tests once per count of its ``RESTCONF_WORKERS``."""
    counts = getattr(metafunc.module, "RESTCONF_WORKERS", None)
    if counts and "server" in metafunc.fixturenames:
        ids = [f"workers-{count}" for count in counts]
        metafunc.parametrize("server", counts, indirect=True, scope="module", ids=ids)


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One ``catsctl serve`` for the module, seeded with its ``seed()``."""
    module = request.module
    document: dict[str, object] = getattr(module, "seed", admin_users)()
    folder = tmp_path_factory.mktemp(module.__name__.rpartition(".")[2])
    extra: tuple[str, ...] = getattr(module, "SERVE_ARGS", ())
    workers = getattr(request, "param", 0)
    if workers:
        extra = (*extra, "--restconf-workers", str(workers))
    with seeded_server(folder, document, *extra) as running:
        yield running
