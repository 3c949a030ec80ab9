"""The C-SMA: the site's metric agent (service-metrics-op 6.1, 8; agent-selection-mapping 9).

Nothing is re-exported here, so that ``catsctl`` can register ``csma`` without importing the
server; import from the modules (``agents.csma.config``, ``agents.csma.cache``, ...).
"""
