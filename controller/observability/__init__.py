"""Observability of every process: Prometheus metrics, the management listener, logging."""
