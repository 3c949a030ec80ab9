"""Bounds of the core that ``catsctl serve``'s options default to (a light module: building
the command line imports no more of the core)."""

MAX_EDIT_NODES = 2_000_000  # about 300k list entries of a few leaves each
