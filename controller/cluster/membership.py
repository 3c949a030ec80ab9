"""A replica's place in the cluster: its commit log and its election, as ``catsctl serve``
wires them (``--cluster``, ``--node-id``; docs/cluster.md)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

from controller.cluster.confirmed import EtcdConfirmed
from controller.cluster.election import Election
from controller.cluster.etcd import Etcd, endpoints_of
from controller.cluster.kills import EtcdKills
from controller.cluster.locks import EtcdLocks, SessionIds
from controller.cluster.records import EtcdRecords
from controller.cluster.replication import DEFAULT_LOG_KEEP, EtcdReplication
from controller.cluster.startup import EtcdStartup

LOG = logging.getLogger("catsctl.serve")


class Membership:
    """The commit log (the core's Replication), the leader election and the lock of running
    of one replica."""

    def __init__(
        self,
        url: str,
        node_id: str | None,
        key: bytes,
        *,
        consistent_reads: bool = True,
        log_keep: int = DEFAULT_LOG_KEEP,
    ) -> None:
        """Join the cluster of the etcd members in ``url`` as ``node_id`` (default: the host
        name), with the secrets key ``key`` (checked against the cluster's); without
        ``consistent_reads`` (``--cluster-reads local``) reads make no quorum read; while
        this replica leads, it snapshots running every ``log_keep`` commits and trims the
        log (``--cluster-log-keep``)."""
        endpoints = endpoints_of(url)
        self._endpoints = endpoints
        self._records: list[EtcdRecords] = []
        self.node = node_id or socket.gethostname()
        LOG.info("joining the cluster %s as %s", url, self.node)
        self.replication = EtcdReplication(Etcd(endpoints), self.node, keep=log_keep)
        self.replication.check_key(key)
        self.replication.consistent_reads = consistent_reads
        self.election = Election(Etcd(endpoints), self.node)
        self.replication.leads = self.election.is_leader
        #: The lock of running, the cluster's (the core's SharedLock; commits are guarded on it)
        self.locks = EtcdLocks(Etcd(endpoints), self.node)
        self.locks.problem = self.replication.problem
        self.replication.locks = self.locks
        #: NETCONF session ids unique across the cluster (the lock's holder names one session)
        self.session_ids = SessionIds(self.replication.etcd)
        self.session_ids.prime()
        #: kill-session of a session of another replica (which follows these requests)
        self.kills = EtcdKills(self.records("netconf/kill"))
        #: The cluster's pending confirmed commit (any replica confirms it; the leader sweeps)
        self.confirmed = EtcdConfirmed(Etcd(endpoints), self.locks, self.election.is_leader)
        #: The lock of startup, the cluster's too (writes of startup are guarded on it)
        self.startup_locks = EtcdLocks(Etcd(endpoints), self.node, name="startup")
        self.startup_locks.problem = self.replication.problem
        #: The cluster's startup datastore (the core's SharedStartup: every replica applies it)
        self.startup = EtcdStartup(Etcd(endpoints), self.node, self.startup_locks)

    def records(self, name: str) -> EtcdRecords:
        """The values an application shares under ``/cats/NAME/`` (agent-sessions, say)."""
        records = EtcdRecords(Etcd(self._endpoints), f"/cats/{name}/")
        self._records.append(records)
        return records

    def leader(self) -> int | None:
        """This replica's term while it leads, None while another does."""
        state = self.election.state
        return state.term if state.leader else None

    def watch(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever this replica gains or loses the leadership."""
        self.election.on_change(lambda _: listener())

    def start(self) -> None:
        """Campaign (running is caught up: this replica may lead)."""
        self.election.start()

    def close(self) -> None:
        """Hand the leadership over at once, then stop following the log."""
        self.election.close()
        for records in self._records:
            records.close()
        self.kills.close()
        self.locks.close()  # a lock a session here holds is released at once
        self.startup_locks.close()
        self.startup.stop()  # its watch ends while the log's does
        self.replication.close()
        self.startup.close()
