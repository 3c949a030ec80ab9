"""The C-PS application of ietf-cats-service-metrics: metric reports into the CST and NST,
select-service with the Joint Selection core, decision records and report senders.

``controller.app`` registers it with the server core, so ``catsctl serve`` always serves it.
"""

from controller.service_metrics.policy import CpsConfig, config, merge, requirement
from controller.service_metrics.service import RunningConfig, ServiceMetrics, register

__all__ = [
    "CpsConfig",
    "RunningConfig",
    "ServiceMetrics",
    "config",
    "merge",
    "register",
    "requirement",
]
