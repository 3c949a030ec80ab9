"""controller.model.library: RFC 8525 records and the yang-library document."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.model import Schema
from controller.model.library import module_records, yang_library


@pytest.fixture(scope="module")
def server_schema() -> Iterator[Schema]:
    """The schema ``catsctl serve`` compiles."""
    with Schema.for_server() as compiled:
        yield compiled


def test_records_carry_the_enabled_features(server_schema: Schema) -> None:
    records = {record.name: record for record in module_records(server_schema)}
    assert records["ietf-system"].features == ("authentication", "local-users")
    assert records["ietf-system"].implemented
    assert records["ietf-cats-types"].features == ()


def test_yang_library_lists_the_features_of_implemented_modules(server_schema: Schema) -> None:
    library = yang_library(module_records(server_schema), ("ietf-datastores:running",))
    content = library["ietf-yang-library:yang-library"]
    assert isinstance(content, dict)
    modules = {entry["name"]: entry for entry in content["module-set"][0]["module"]}
    assert modules["ietf-system"]["feature"] == ["authentication", "local-users"]
    assert "feature" not in modules["ietf-cats-types"]
