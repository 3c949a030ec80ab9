"""NACM, the Network Configuration Access Control Model (RFC 8341), in the server core."""

from controller.datastore.nacm import walk
from controller.datastore.nacm.engine import Counters, Nacm, UserAccess
from controller.datastore.nacm.policy import NACM_PATH, Op, Policy, parse_policy

__all__ = [
    "NACM_PATH",
    "Counters",
    "Nacm",
    "Op",
    "Policy",
    "UserAccess",
    "parse_policy",
    "walk",
]
