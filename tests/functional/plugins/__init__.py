"""Plugins of ``catsctl serve --plugin`` used by the functional tests."""
