"""Source discounting: a source that is repeatedly wrong is discounted (Sections 13, 14).

Bookkeeping per source: how many of its values were later checked, how many were
contradicted (MSG-14 'value-contradicted', a claimed presence a transfer disproved), and how
many of its steps exceeded the advertised p95 by the tail detection factor. The discount is
the share of checked values that proved wrong beyond a tolerance, reached only after enough
evidence; :mod:`combination` moves a discounted value that share of the way to the worst
value of the field (0 none, 1 the values are ignored).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from controller.types import SourceId


@dataclass(frozen=True, slots=True)
class SourcePolicy:
    """How evidence becomes a discount: ``min_checks`` before any discount, ``tolerance`` the
    error share tolerated without discount."""

    min_checks: int = 10
    tolerance: float = 0.05


@dataclass(frozen=True, slots=True)
class SourceAccuracy:
    """The record of one source (candidate source-accuracy)."""

    source: SourceId
    checked: int = 0
    contradicted: int = 0
    tail_underreports: int = 0

    def observed(
        self, *, contradicted: bool = False, tail_underreport: bool = False
    ) -> SourceAccuracy:
        """The record after one more value of the source was checked."""
        return replace(
            self,
            checked=self.checked + 1,
            contradicted=self.contradicted + int(contradicted),
            tail_underreports=self.tail_underreports + int(tail_underreport),
        )

    def discount(self, policy: SourcePolicy = SourcePolicy()) -> float:
        """The discount in [0, 1]: 0 until ``min_checks``, then the wrong share beyond the
        tolerance, rescaled so that a source always wrong is fully discounted."""
        if self.checked < policy.min_checks:
            return 0.0
        wrong = min(self.contradicted + self.tail_underreports, self.checked) / self.checked
        if wrong <= policy.tolerance:
            return 0.0
        return min((wrong - policy.tolerance) / (1.0 - policy.tolerance), 1.0)
