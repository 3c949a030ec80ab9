"""The operator console (``catsctl console``): a Flask application, a client of the C-PS's own
RESTCONF northbound, so everything it shows or does passes the C-PS's validation and access
control as the logged-in operator."""

from controller.console.app import create_app
from controller.console.settings import ConsoleSettings

__all__ = ["ConsoleSettings", "create_app"]
