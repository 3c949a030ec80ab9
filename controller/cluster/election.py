"""Leader election on etcd: one replica of the cluster acts on the network.

A replica campaigns with one etcd transaction: *if* the leader key does not exist (its
``create_revision`` is 0) *then* put it, bound to a lease of ``ttl`` seconds that the replica
keeps alive. The revision of that transaction is the leader's **term**: it grows with every new
leader, and every push to a forwarder carries it (fencing: a forwarder refuses a term lower
than the highest it has seen, so a deposed leader that was paused and resumed cannot overwrite
its successor). A leader that cannot refresh its lease (etcd unreachable, or the lease gone
because the process was stopped past its TTL) steps down at once; the others see the key gone
when the lease expires and campaign.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from controller.cluster.etcd import Etcd, Unavailable, encode, equal

LOG = logging.getLogger("catsctl.cluster")
DEFAULT_TTL_S = 2  # etcd's lower bound on loopback test settings (1.5 x election timeout)
POLL_S = 0.1  # how often a follower looks for a vacant leadership


@dataclass(frozen=True, slots=True)
class Leadership:
    """Who leads, as this replica knows it."""

    leader: bool = False
    term: int = 0
    since: float = 0.0  # wall-clock time this replica became leader (0: it is not)


class Election:
    """Campaign, lead, step down; ``on_change`` is called with each new :class:`Leadership`."""

    def __init__(
        self, etcd: Etcd, node: str, prefix: str = "/cats/", ttl: int = DEFAULT_TTL_S
    ) -> None:
        self.etcd = etcd
        self.node = node
        self.key = f"{prefix}leader"
        self.ttl = ttl
        self._state = Leadership()
        self._lease = 0
        self._listeners: list[Callable[[Leadership], None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> Leadership:
        """The current leadership (a value)."""
        with self._lock:
            return self._state

    def is_leader(self) -> bool:
        """Whether this replica leads now."""
        return self.state.leader

    def term(self) -> int:
        """This replica's term while it leads (0 otherwise)."""
        return self.state.term

    def on_change(self, listener: Callable[[Leadership], None]) -> None:
        """Call ``listener`` whenever this replica becomes leader or steps down."""
        self._listeners.append(listener)

    def start(self) -> None:
        """Start campaigning."""
        self._thread = threading.Thread(target=self._run, name="cluster-election", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop; a leader gives the leadership up at once (revokes its lease)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._lease:
            with contextlib.suppress(Unavailable):
                self.etcd.revoke(self._lease)
        self._set(Leadership())

    def _set(self, state: Leadership) -> None:
        with self._lock:
            before, self._state = self._state, state
        if before.leader != state.leader or before.term != state.term:
            if state.leader:
                LOG.info("cluster: %s leads, term %d", self.node, state.term)
            elif before.leader:
                LOG.warning("cluster: %s stepped down (term %d)", self.node, before.term)
            for listener in self._listeners:
                try:
                    listener(state)
                except Exception:
                    LOG.exception("a leadership listener failed")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.state.leader:
                    self._keep()
                    self._stop.wait(self.ttl / 4)
                else:
                    self._campaign()
                    self._stop.wait(POLL_S)
            except Unavailable as exc:
                if self.state.leader:
                    LOG.warning("cluster: cannot refresh the leader's lease: %s", exc)
                self._step_down()
                self._stop.wait(POLL_S)

    def _campaign(self) -> None:
        current = self.etcd.get(self.key)
        if current is not None:
            return  # someone leads (perhaps this replica's lost lease, until it expires)
        if not self._lease:
            self._lease = self.etcd.grant(self.ttl)
        vacant = equal(self.key, "CREATE", 0)
        put = {"key": encode(self.key), "value": encode(self.node), "lease": str(self._lease)}
        won, revision, _ = self.etcd.txn([vacant], [{"request_put": put}])
        if won:
            self._set(Leadership(leader=True, term=revision, since=time.time()))
        else:
            self._lease = 0  # another won: this lease expires unused

    def _keep(self) -> None:
        if self.etcd.keep_alive(self._lease) <= 0:
            LOG.warning("cluster: the leader's lease expired (was this process stopped?)")
            self._step_down()

    def _step_down(self) -> None:
        self._lease = 0
        self._set(Leadership())
