"""Reading a server's /metrics in tests, with prometheus_client's own parser."""

from __future__ import annotations

import requests
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(port: int) -> Samples:
    """Every sample of /metrics on loopback ``port``."""
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    """One sample (0 when absent: a counter not yet incremented)."""
    return found.get((name, tuple(sorted(labels.items()))), 0.0)
