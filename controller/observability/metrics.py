"""The Prometheus metrics of every process (prometheus_client's default registry).

Names follow ``cats_<component>_<what>_<unit>``, counters end in ``_total``, times are in
seconds, and labels are bounded sets (operation names of a fixed list or of the schema,
results, reasons, forwarder names of the inventory), never user ids or free text. One process
runs one server, so the metrics are module-level, as prometheus_client intends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

#: Latency buckets from 100 us to 10 s.
LATENCY = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

# -- northbounds ---------------------------------------------------------------------------------

RESTCONF_REQUESTS = Counter(
    "cats_restconf_requests_total",
    "RESTCONF requests by method, resource kind and status class",
    ["method", "resource", "status"],
)
RESTCONF_LATENCY = Histogram(
    "cats_restconf_request_duration_seconds",
    "RESTCONF request server time",
    ["method", "resource"],
    buckets=LATENCY,
)
RESTCONF_WORKER_MESSAGES = Counter(
    "cats_restconf_worker_messages_total",
    "What RESTCONF worker processes handed the core (--restconf-workers): requests "
    "forwarded whole, invocations whose input a worker validated, credential checks",
    ["kind"],
)
NETCONF_RPCS = Counter(
    "cats_netconf_rpcs_total", "NETCONF operations by name and result", ["operation", "result"]
)
NETCONF_LATENCY = Histogram(
    "cats_netconf_rpc_duration_seconds",
    "NETCONF operation server time",
    ["operation"],
    buckets=LATENCY,
)
NETCONF_SESSIONS = Gauge("cats_netconf_sessions", "Open NETCONF sessions")
NETCONF_LOGINS_FAILED = Counter(
    "cats_northbound_logins_failed_total", "Failed logins by transport", ["transport"]
)

# -- datastore -----------------------------------------------------------------------------------

COMMITS = Counter("cats_datastore_commits_total", "Transactions on running by result", ["result"])
COMMIT_LATENCY = Histogram(
    "cats_datastore_commit_duration_seconds",
    "Server time of a transaction on running (apply, validate, persist)",
    buckets=LATENCY,
)
CLUSTER_STALE = Counter(
    "cats_cluster_stale_commits_total",
    "Commits another replica overtook (cluster): run again on the newer state, or in-use",
    ["outcome"],
)
CLUSTER_APPLIED = Counter(
    "cats_cluster_applied_commits_total", "Commits of other replicas applied here (cluster)"
)
CLUSTER_READS = Counter(
    "cats_cluster_consistent_reads_total",
    "Client reads of running on a replica (cluster) by how they were made consistent: "
    "current, caught-up (missing commits read first), local (no quorum: this replica's copy)",
    ["outcome"],
)
JOURNAL_FSYNC = Histogram(
    "cats_datastore_journal_fsync_duration_seconds",
    "Time to append and fsync one journal record",
    buckets=LATENCY,
)
HISTORY_FAILURES = Counter(
    "cats_datastore_history_failures_total", "Commits the history could not keep"
)
AUDIT_RECORDS = Counter("cats_audit_records_total", "Audit records kept by event", ["event"])

# -- C-PS ----------------------------------------------------------------------------------------

REPORTS = Counter(
    "cats_cps_reports_total",
    "Metric reports by kind and result (accepted, or the refusal reason)",
    ["kind", "result"],
)
CST_ENTRIES = Gauge("cats_cps_cst_entries", "Entries of the Computing Service Table")
NST_ENTRIES = Gauge("cats_cps_nst_entries", "Entries of the Network Service Table")
DECISIONS = Counter(
    "cats_cps_decisions_total",
    "Selection decisions by result and fallback level",
    ["result", "fallback_level", "trigger"],
)
SELECT_LATENCY = Histogram(
    "cats_cps_select_service_duration_seconds",
    "Server time of select-service's selection",
    buckets=LATENCY,
)
PUSH_LATENCY = Histogram(
    "cats_southbound_push_duration_seconds",
    "Time of one steering write to a forwarder",
    ["forwarder"],
    buckets=LATENCY,
)
PUSH_FAILURES = Counter(
    "cats_southbound_push_failures_total", "Failed steering writes per forwarder", ["forwarder"]
)
HANDOFFS = Counter(
    "cats_agent_selection_handoffs_total", "Handoffs of agent sessions by state", ["state"]
)
SESSIONS_KEPT = Counter(
    "cats_agent_selection_sessions_kept_total",
    "Agent session changes put in the cluster (kept, deleted), overtaken by another replica's,"
    " or not taken by etcd (failed: put again later)",
    ["result"],
)


def status_class(status: int) -> str:
    """``2xx``, ``4xx``, ...: a bounded label for an HTTP status."""
    return f"{status // 100}xx"


class LabelledGauge(Collector):
    """A gauge whose labelled values a function gives at each scrape (sessions by state)."""

    def __init__(self, name: str, documentation: str, label: str) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.source: Callable[[], dict[str, float]] = dict

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The family with one sample per label value."""
        family = GaugeMetricFamily(self.name, self.documentation, labels=[self.label])
        for value, number in sorted(self.source().items()):
            family.add_metric([value], number)
        yield family


AGENT_SESSIONS = LabelledGauge(
    "cats_agent_selection_sessions", "Agent sessions the C-PS holds by state", "state"
)
REGISTRY.register(AGENT_SESSIONS)
