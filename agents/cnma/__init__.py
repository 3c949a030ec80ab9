"""The C-NMA: NST generation, probes and reports to the C-PS (service-metrics-op 6.2.2, 8).

Nothing is re-exported here, so that ``catsctl`` can register ``cnma`` without importing
networkx; import from the modules (``agents.cnma.config``, ``agents.cnma.paths``, ...).
"""
