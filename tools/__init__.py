"""Operator and developer tools: YANG checks, benchmarks, load and demo drivers."""
