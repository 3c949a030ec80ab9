"""The management port of each long-running command (a light module: the command line's
help names it without importing the listener)."""

#: The management port of each command when ``--metrics-address`` is not given.
DEFAULT_PORTS = {"serve": 9180, "sci": 9181, "csma": 9182, "cnma": 9183, "forwarder": 9184}
