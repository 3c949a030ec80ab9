"""The derived comparisons of 6.7 between resource quantities (M49, M50).

state_fits:     state_bytes <= hbm_free - weights_bytes
transfer_time:  state_bytes / bw + rtt
recompute_time: tokens_to_reprocess / prefill_rate
state_cost:     min(transfer_time, recompute_time)
tail_ok:        wait_p95 + step_latency_p95 <= objective
budget_ok:      session_cost + change_cost <= budget

Bytes, bytes/s, tokens, tokens/s and seconds. They are illustrative in the draft; here they are
what P4 and P5 compute, so that each comparison can be named in a reason.
"""

from __future__ import annotations


def state_fits(state_bytes: float, hbm_free: float, weights_bytes: float) -> bool:
    """state_fits of 6.7: the state that must be usable fits beside the weights."""
    return state_bytes <= hbm_free - weights_bytes


def transfer_time(state_bytes: float, bw: float, rtt: float) -> float:
    """transfer_time of 6.7 in seconds (bytes, bytes/s, seconds); M49."""
    return state_bytes / bw + rtt


def recompute_time(tokens_to_reprocess: float, prefill_rate: float) -> float:
    """recompute_time of 6.7 in seconds (tokens, tokens/s); M49."""
    return tokens_to_reprocess / prefill_rate


def state_cost(transfer: float | None, recompute: float | None) -> float | None:
    """state_cost of 6.7: the cheaper known alternative, None when neither is known (M5)."""
    if transfer is None:
        return recompute
    if recompute is None:
        return transfer
    return min(transfer, recompute)


def tail_ok(wait: float, step_latency: float, objective: float) -> bool:
    """tail_ok of 6.7: wait and comparable-step latency, both at the objective's percentile,
    within the objective (6.8 step 4; a mean never stands in, M34)."""
    return wait + step_latency <= objective


def budget_ok(session_cost: float, change_cost: float, budget: float) -> bool:
    """budget_ok of 6.7: the change is paid by the session budget it serves (6.8 step 4, M46)."""
    return session_cost + change_cost <= budget
