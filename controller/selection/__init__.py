"""Pure decision logic, no I/O and no clock (time is passed in).

- :mod:`controller.selection.joint`: the Joint Selection Algorithm of
  draft-zhangb-cats-service-metrics-op 6.2 (CST, NST, fallback levels), used by the
  service-metrics application :mod:`controller.service_metrics`.
- :mod:`controller.selection.mapping`: the agent selection mapping of
  draft-mo-cats-agent-selection-mapping (procedure P0-P11), used by the agent-selection
  application :mod:`controller.agent_selection`.
"""
