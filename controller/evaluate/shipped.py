"""What ``catsctl evaluate`` ships and can run, by name: light enough for the command line,
which every ``catsctl`` process builds (the simulator and the policies load only when
``evaluate`` runs)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
DEFAULT_TRACE = DATA / "mooncake-synthetic.jsonl"
"""The trace shipped with the package: Mooncake's synthetic trace (Apache-2.0)."""
DEFAULT_TOPOLOGY = DATA / "three-regions.json"
RECOMMENDED = DATA / "cats-llm-policy.json"
"""The recommended C-PS configuration for LLM services (YANG instance data)."""

ALL = (
    "nearest",
    "round-robin",
    "least-loaded",
    "sglang",
    "llm-d",
    "dynamo",
    "gorgo",
    "cats-jsa",
    "cats",
    "oracle",
    "cats-steer",
)
"""Every policy that can be named, in the table's order (:mod:`controller.evaluate.policies`
builds each)."""
NAMES = tuple(n for n in ALL if n != "cats-steer")
"""Every policy of the default table (``cats-steer``, the forwarder steering path of the
closed-loop check, runs only when named)."""
