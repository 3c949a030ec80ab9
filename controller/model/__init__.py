"""YANG schema context, instance validation, codecs and the data-tree primitives on libyang.

The protocol layers reach libyang only through this package. The datastore's hot paths also
call libyang's C API directly, through :mod:`controller.model.nodes` and the bindings' cffi
handle, where a Python walk of the tree would cost several times more (docs/architecture.md).
"""

from controller.model.errors import ModelError
from controller.model.schema import (
    AGENT_MODULES,
    CATS_MODULES,
    PRODUCT_MODULES,
    Encoding,
    InstanceKind,
    Schema,
    project_yang_dir,
    standard_yang_dirs,
)

__all__ = [
    "AGENT_MODULES",
    "CATS_MODULES",
    "PRODUCT_MODULES",
    "Encoding",
    "InstanceKind",
    "ModelError",
    "Schema",
    "project_yang_dir",
    "standard_yang_dirs",
]
