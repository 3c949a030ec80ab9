"""The policies an evaluation can run, by name."""

from __future__ import annotations

from collections.abc import Callable

from controller.evaluate.baselines import LeastLoaded, Nearest, Oracle, RoundRobin
from controller.evaluate.cps import Cats, CatsJsa, CatsSteer
from controller.evaluate.engine import Policy
from controller.evaluate.errors import invalid
from controller.evaluate.policyfile import CpsPolicy
from controller.evaluate.routers import Dynamo, Gorgo, LlmD, SGLang
from controller.evaluate.shipped import ALL, NAMES

__all__ = ["ALL", "NAMES", "REPORTED", "build"]

_BUILD: dict[str, Callable[[CpsPolicy], Policy]] = {
    "nearest": lambda _: Nearest(),
    "round-robin": lambda _: RoundRobin(),
    "least-loaded": lambda _: LeastLoaded(),
    "sglang": lambda _: SGLang(),
    "llm-d": lambda _: LlmD(),
    "dynamo": lambda _: Dynamo(),
    "gorgo": lambda _: Gorgo(),
    "cats-jsa": CatsJsa,
    "cats": Cats,
    "oracle": lambda _: Oracle(),
    "cats-steer": CatsSteer,
}

REPORTED = ("cats", "cats-jsa", "least-loaded")
"""The policies that decide on the report path's values (swept over the reporting interval)."""


def build(name: str, cps: CpsPolicy) -> Policy:
    """A fresh policy (policies keep state during a run)."""
    factory = _BUILD.get(name)
    if factory is None:
        raise invalid(f"unknown policy {name!r}; one of {', '.join(ALL)}", "--policies")
    return factory(cps)
