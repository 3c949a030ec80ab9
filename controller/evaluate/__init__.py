"""Trace-driven evaluation of selection policies (`catsctl evaluate`)."""
