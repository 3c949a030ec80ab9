"""Fixtures of the cluster's unit tests: the datastore tests' schema, compiled once."""

from tests.unit.datastore.conftest import test_schema

__all__ = ["test_schema"]
