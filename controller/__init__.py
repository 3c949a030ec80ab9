"""CATS controller: a YANG-modelled CATS Path Selector (C-PS)."""

__version__ = "0.1.0"
