"""NMDA datastores, transactions, locks, persistence, the access-check seam and the
notification bus: the server core both northbounds share."""
