"""CATS agents run as separate processes: SCI, C-SMA, C-NMA, forwarder and agent gateway.

Each agent is a package of its own; what two of them need lives in :mod:`agents.common`.
"""
