"""What a demo stage is made of: steps that return their findings, and the run they share.

A :class:`Stage` is a titled list of step functions; a step does something to the running
system, asks for a decision and returns a :class:`Step` (what to print and what did not hold).
A stage without steps is a part of the system that is not built yet, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from controller.demo.bed import Bed
from controller.demo.expect import Decision, Expectation, judge
from controller.demo.table import decision_lines


@dataclass(frozen=True)
class Step:
    """The findings of one step: its id and title, lines to print, problems (empty: PASS)."""

    step_id: str
    title: str
    lines: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether everything expected happened."""
        return not self.problems


@dataclass
class Run:
    """The running system, the demo's options, what earlier steps measured, and what they
    found for later steps of their stage (``seen``, by name)."""

    bed: Bed
    congested_delay: str = "20"
    b_path_delay: str = "400"
    measured: dict[str, Decimal] = field(default_factory=dict)
    last: Decision | None = None
    seen: dict[str, Any] = field(default_factory=dict)


StepFn = Callable[[Run], Step]


@dataclass(frozen=True)
class Stage:
    """A part of the demo: its key, title and steps, or why it is not there yet."""

    key: str
    title: str
    steps: tuple[StepFn, ...] = ()
    not_yet: str | None = None


def decide(
    run: Run,
    step: tuple[str, str],
    expected: Expectation,
    requirement: dict[str, Any] | None = None,
    before: tuple[str, ...] = (),
) -> Step:
    """Ask for a decision, print it after ``before``, and check it against ``expected``."""
    decision = run.bed.select(requirement)
    run.last = decision
    problems, note = judge(decision, expected, run.bed.labels)
    lines = (*before, *decision_lines(decision, run.bed.labels), *([note] if note else []))
    return Step(step[0], step[1], lines, problems)
