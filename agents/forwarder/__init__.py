"""The CATS-Forwarder: steering configuration (ietf-cats-steering) and HTTP forwarding."""

from agents.forwarder.config import ForwarderConfig, load_config
from agents.forwarder.forwarding import Forwarding
from agents.forwarder.service import ForwarderService, installer

__all__ = ["ForwarderConfig", "ForwarderService", "Forwarding", "installer", "load_config"]
