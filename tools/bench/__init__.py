"""Benchmarks: measured costs that design decisions rest on."""
