"""CATS agents run as separate processes: SCI, C-SMA, C-NMA, forwarder and agent gateway."""
