"""NMDA datastores, transactions, locks, persistence, the access-check seam and the
notification bus: the server core both northbounds share."""

from controller.datastore.core import Core, CoreSettings
from controller.datastore.errors import DatastoreError

__all__ = ["Core", "CoreSettings", "DatastoreError"]
