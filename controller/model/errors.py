"""Errors of the model layer: schema loading and instance validation."""

from controller.errors import CatsError


class ModelError(CatsError):
    """An instance document or a schema operation failed; ``items`` say where and why."""
