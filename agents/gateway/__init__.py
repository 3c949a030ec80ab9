"""The agent gateway: plays agent sessions against the C-PS from a JSON description
(agent-selection-mapping 8.1, 9.1)."""
