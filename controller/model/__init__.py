"""YANG schema context, instance validation and codecs (libyang's one boundary)."""

from controller.model.errors import ModelError
from controller.model.schema import (
    CATS_MODULES,
    Encoding,
    InstanceKind,
    Schema,
    project_yang_dir,
    standard_yang_dirs,
)

__all__ = [
    "CATS_MODULES",
    "Encoding",
    "InstanceKind",
    "ModelError",
    "Schema",
    "project_yang_dir",
    "standard_yang_dirs",
]
