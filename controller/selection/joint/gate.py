"""A allocation-free feasibility test for the fast path: exactly Steps 1-5 of service-metrics-op
6.2.3 and the restricting overrides of 6.2.4, answered as a boolean.

``screening.screen`` says why a candidate is excluded; this says only whether, so the fast
path can look for a runner-up without building reports. Both must agree; the tests compare
them on randomized entries.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.selection.joint.requirement import PolicyOverride, Requirement, SelectionSettings
from controller.selection.joint.tables import CstEntry, NstEntry
from controller.selection.joint.vocabulary import Health, OverrideMode
from controller.selection.units import Timestamp


@dataclass(frozen=True, slots=True)
class Gate:
    """The thresholds of one request, bound once per decision."""

    requirement: Requirement
    now: Timestamp
    settings: SelectionSettings

    def passes(self, entry: CstEntry, path: NstEntry | None) -> bool:
        """Whether the candidate survives Steps 1-5 and the restricting overrides."""
        if path is None or not self._computing(entry):
            return False
        return self._network(entry, path) and self._allowed(entry, self.requirement.overrides)

    def _computing(self, entry: CstEntry) -> bool:
        hard = self.requirement.hard
        if self.now >= entry.expiry or entry.gas < max(1, hard.required_gas):
            return False
        health = entry.health
        if health is not Health.HEALTHY and (
            health is not Health.DEGRADED or not hard.accept_degraded
        ):
            return False
        if hard.min_security_level is not None and (
            entry.security_level is None
            or entry.security_level < hard.min_security_level
            or (hard.require_validated_security_level and not entry.security_level_validated)
        ):
            return False
        if hard.min_reputation is not None and (
            entry.reputation is None or entry.reputation < hard.min_reputation
        ):
            return False
        return hard.max_price is None or (entry.price is not None and entry.price <= hard.max_price)

    def _network(self, entry: CstEntry, path: NstEntry) -> bool:
        if entry.last_updated - path.last_updated > self.settings.time_sync_window:
            return False
        hard = self.requirement.hard
        return self.path_usable(path) and (
            hard.max_latency is None
            or entry.computing_time + path.network_delay <= hard.max_latency
        )

    def path_usable(self, path: NstEntry) -> bool:
        """The checks that depend on the path alone: lifetime, bandwidth, jitter, loss."""
        hard = self.requirement.hard
        lifetime = self.settings.network_entry_lifetime
        if lifetime is not None and self.now - path.last_updated > lifetime:
            return False
        if hard.min_bandwidth is not None and (
            path.bandwidth is None or path.bandwidth < hard.min_bandwidth
        ):
            return False
        if hard.max_jitter is not None and (path.jitter is None or path.jitter > hard.max_jitter):
            return False
        return hard.max_loss_rate is None or (
            path.loss_rate is not None and path.loss_rate <= hard.max_loss_rate
        )

    @staticmethod
    def _allowed(entry: CstEntry, overrides: PolicyOverride) -> bool:
        if overrides.avoid_maintenance and entry.under_maintenance:
            return False
        geo, pref = overrides.geo_fence, overrides.provider_preference
        if (
            geo.mode is OverrideMode.RESTRICT
            and geo.permitted_regions
            and entry.region not in geo.permitted_regions
        ):
            return False
        return not (
            pref.mode is OverrideMode.RESTRICT
            and pref.preferred_providers
            and entry.provider not in pref.preferred_providers
        )
