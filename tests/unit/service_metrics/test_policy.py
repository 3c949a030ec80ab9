"""Configuration of ietf-cats-service-metrics as selection-core values."""

from __future__ import annotations

from decimal import Decimal

from controller.selection.joint import (
    LoadMethod,
    Metric,
    Objective,
    OverrideMode,
    RelaxationStep,
    TieBreak,
    from_ms,
)
from controller.service_metrics.policy import config, merge, requirement


def test_merge_containers_merge_and_lists_replace() -> None:
    base = {"hard-constraints": {"required-gas": 1, "max-price": 20}, "objective": ["a"]}
    override = {"hard-constraints": {"max-price": 8}, "objective": ["b", "c"]}
    assert merge(base, override) == {
        "hard-constraints": {"required-gas": 1, "max-price": 8},
        "objective": ["b", "c"],
    }
    assert base["hard-constraints"] == {"required-gas": 1, "max-price": 20}


def test_requirement_of_scenario_d() -> None:
    merged = requirement(
        {
            "hard-constraints": {"max-price": 8, "max-latency": "12.5"},
            "objective": [
                "ietf-cats-service-metrics:minimize-latency",
                "ietf-cats-service-metrics:maximize-gas",
            ],
            "tie-break": ["ietf-cats-service-metrics:lowest-price"],
        }
    )
    assert merged.hard.max_price == 8
    assert merged.hard.max_latency == 12_500
    assert merged.hard.required_gas == 1
    assert merged.hard.accept_degraded
    assert merged.objectives == (Objective.MINIMIZE_LATENCY, Objective.MAXIMIZE_GAS)
    assert merged.tie_breaks == (TieBreak.LOWEST_PRICE,)
    assert merged.weights.total_service_time == 1.0


def test_time_thresholds_and_bounds_are_in_microseconds() -> None:
    merged = requirement(
        {
            "soft-constraint": [
                {"metric": "ietf-cats-service-metrics:jitter", "threshold": "2", "penalty": "1"},
                {"metric": "ietf-cats-service-metrics:price", "threshold": "9", "penalty": "2"},
            ],
            "weighted-objective": {
                "weights": {"total-service-time": "0.5", "price": "0.5"},
                "normalization": [
                    {
                        "metric": "ietf-cats-service-metrics:total-service-time",
                        "min": "0",
                        "max": "100",
                    },
                ],
            },
            "policy-override": {
                "geo-fence": {"permitted-region": ["eu"], "mode": "restrict"},
                "load-distribution": {"tst-tolerance": "1", "method": "gas-weighted"},
            },
        }
    )
    jitter, price = merged.soft
    assert (jitter.metric, jitter.threshold) == (Metric.JITTER, 2000.0)
    assert (price.metric, price.threshold, price.penalty) == (Metric.PRICE, 9.0, 2.0)
    assert merged.weights.price == 0.5
    assert merged.normalization[Metric.TOTAL_SERVICE_TIME].high == 100_000.0
    assert merged.overrides.geo_fence.mode is OverrideMode.RESTRICT
    assert merged.overrides.geo_fence.permitted_regions == frozenset({"eu"})
    load = merged.overrides.load_distribution
    assert load is not None
    assert (load.tst_tolerance, load.method) == (from_ms(1), LoadMethod.GAS_WEIGHTED)


def test_config_defaults_when_nothing_is_configured() -> None:
    parsed = config({}, {}, {})
    assert parsed.update.lifetime == 180.0
    assert parsed.update.max_clock_skew == 10
    assert parsed.settings.time_sync_window == 30.0
    assert parsed.settings.network_entry_lifetime is None
    assert parsed.decision_retention == 1000
    assert len(parsed.settings.fallback.relaxation) == len(RelaxationStep)
    assert parsed.requirement_document("ARS", {}) == {}


def test_config_service_policy_and_attachments() -> None:
    policy = {
        "default-requirement": {"hard-constraints": {"max-price": 20}},
        "service-policy": [
            {
                "cs-id": "ARS",
                "requirement": {"hard-constraints": {"min-reputation": 3}},
                "fallback-egress": ["cf-9"],
            }
        ],
        "fallback": {
            "relaxation-step": [{"step": "ietf-cats-service-metrics:relax-price", "percent": "10"}],
            "default-route": False,
        },
        "random-seed": "7",
        "decision-retention": 2,
    }
    update = {"heartbeat-interval": 10, "expiry-multiplier": 2, "network-entry-lifetime": 40}
    attachments = {"attachment": [{"csci-id": "1.2.3.4:5", "egress": "cf-1", "region": "eu"}]}
    parsed = config(policy, update, attachments)
    assert parsed.update.lifetime == 20.0
    assert parsed.settings.network_entry_lifetime == 40.0
    assert parsed.settings.random_seed == 7
    assert not parsed.settings.fallback.default_route
    (step,) = parsed.settings.fallback.relaxation
    assert (step.step, step.amount) == (RelaxationStep.RELAX_PRICE, Decimal(10))
    assert parsed.decision_retention == 2
    assert parsed.attachments["1.2.3.4:5"].region == "eu"
    assert parsed.fallback_egresses("ARS") == ("cf-9",)
    assert parsed.requirement_document("ARS", {"hard-constraints": {"max-price": 8}}) == {
        "hard-constraints": {"max-price": 8, "min-reputation": 3}
    }
    assert parsed.requirement_document("VRS", {}) == {"hard-constraints": {"max-price": 20}}
