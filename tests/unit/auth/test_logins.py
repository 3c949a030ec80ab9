"""controller.auth.logins and throttle: throttled per source and user, failures never
cached, unknown users checked like known ones, counted; the worker pool of hashing."""

from __future__ import annotations

import threading

import pytest
from passlib.hash import sha512_crypt

from controller.auth import Logins, LoginSettings, Outcome, ThrottleSettings, verify
from controller.auth.hashing import HashPool, PoolBusyError
from controller.auth.throttle import Throttle

CHEAP = sha512_crypt.using(rounds=1000)
RIGHT = "right password"


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A checker that records what it was asked to check."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, password: str, crypt_hash: str) -> bool:
        self.asked.append(crypt_hash)
        return verify(password, crypt_hash)


def _logins(clock: Clock, checker: Recorder, **throttle: float) -> Logins:
    users = {"admin": CHEAP.hash(RIGHT), "operator": CHEAP.hash("other")}
    settings = LoginSettings(ThrottleSettings(**throttle))  # type: ignore[arg-type]
    return Logins(lambda: users, settings, checker=checker, clock=clock)


def test_failures_past_the_free_ones_delay_exponentially_and_refuse_unchecked() -> None:
    clock, checker = Clock(), Recorder()
    logins = _logins(clock, checker, free_failures=3, delay=1.0, max_delay=8.0)
    for _ in range(3):
        assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.FAILED
    checks = len(checker.asked)
    assert logins.login("admin", RIGHT, "restconf", "192.0.2.1") is Outcome.THROTTLED
    assert len(checker.asked) == checks  # no check, so no cheap oracle while throttled
    assert logins.retry_after("admin", "192.0.2.1") == pytest.approx(1.0)
    clock.now += 1.0
    assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.FAILED
    clock.now += 1.5
    assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.THROTTLED
    assert logins.retry_after("admin", "192.0.2.1") == pytest.approx(0.5)
    for wait in (100.0, 4.0, 8.0):
        clock.now += wait
        assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.FAILED
    assert logins.retry_after("admin", "192.0.2.1") == pytest.approx(8.0)  # capped
    state = logins.state()["cats-controller-admin:logins"]
    assert isinstance(state, dict)
    restconf = state["transport"][0]
    assert restconf["failed"] == "7"
    assert restconf["throttled"] == "2"


def test_a_guesser_elsewhere_cannot_lock_a_user_out_of_where_it_logged_in() -> None:
    clock, checker = Clock(), Recorder()
    logins = _logins(clock, checker, free_failures=2)
    assert logins.login("admin", RIGHT, "netconf", "198.51.100.7") is Outcome.OK
    for source in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        logins.login("admin", "guess", "netconf", source)
    assert logins.login("admin", RIGHT, "netconf", "192.0.2.9") is Outcome.THROTTLED
    assert logins.login("admin", RIGHT, "netconf", "198.51.100.7") is Outcome.OK


def test_a_success_of_another_account_does_not_clear_the_source() -> None:
    clock, checker = Clock(), Recorder()
    logins = _logins(clock, checker, free_failures=3)
    for _ in range(2):
        assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.FAILED
        assert logins.login("operator", "other", "restconf", "192.0.2.1") is Outcome.OK
    assert logins.login("admin", "guess", "restconf", "192.0.2.1") is Outcome.FAILED
    assert logins.login("nobody", "guess", "restconf", "192.0.2.1") is Outcome.THROTTLED


def test_unknown_users_are_checked_against_a_dummy_of_the_same_cost() -> None:
    clock, checker = Clock(), Recorder()
    logins = _logins(clock, checker)
    assert logins.login("ghost", RIGHT, "restconf", "192.0.2.1") is Outcome.FAILED
    assert logins.login("admin", "wrong", "restconf", "192.0.2.2") is Outcome.FAILED
    dummy, real = checker.asked
    assert dummy.split("$")[:3] == real.split("$")[:3]  # scheme and rounds
    assert dummy != real


def test_failures_are_never_cached_successes_are() -> None:
    clock, checker = Clock(), Recorder()
    logins = _logins(clock, checker, free_failures=100)
    logins.login("admin", "wrong", "restconf", "192.0.2.1")
    logins.login("admin", "wrong", "restconf", "192.0.2.1")
    logins.login("ghost", "wrong", "restconf", "192.0.2.1")
    logins.login("ghost", "wrong", "restconf", "192.0.2.1")
    assert len(checker.asked) == 4  # a repeated failure costs the same, known user or not
    logins.login("admin", RIGHT, "restconf", "192.0.2.1")
    logins.login("admin", RIGHT, "restconf", "192.0.2.1")
    assert len(checker.asked) == 5
    assert logins.known_good("admin", RIGHT)
    assert not logins.known_good("admin", "wrong")


def test_parallel_guesses_at_a_user_cannot_all_slip_under_the_free_failures() -> None:
    throttle = Throttle(ThrottleSettings(free_failures=3, delay=1.0))
    admitted = 0
    for _ in range(10):  # ten checks started before any is known
        if throttle.wait("192.0.2.1", "admin", 0.0) == 0:
            throttle.admitted("admin", 0.0)
            admitted += 1
    assert admitted == 3


def test_the_pool_checks_in_worker_processes_and_refuses_past_its_queue() -> None:
    pool = HashPool(workers=1, queue_size=1)
    try:
        hashed = CHEAP.hash(RIGHT)
        assert pool.check(RIGHT, hashed)
        assert not pool.check("wrong", hashed)
        slow = sha512_crypt.using(rounds=400_000).hash("x")
        results: list[bool] = []
        busy: list[bool] = []

        def check() -> None:
            try:
                results.append(pool.check("y", slow))
            except PoolBusyError:
                busy.append(True)

        threads = [threading.Thread(target=check) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert busy  # one checking, one waiting: the others refused at once
        assert results
        assert not any(results)
    finally:
        pool.close()


def test_many_connections_at_once_with_one_credential_cost_one_check() -> None:
    release = threading.Event()
    asked: list[str] = []
    users = {"admin": CHEAP.hash(RIGHT)}

    def checker(password: str, crypt_hash: str) -> bool:
        asked.append(password)
        release.wait(30)
        return verify(password, crypt_hash)

    logins = Logins(
        lambda: users, LoginSettings(ThrottleSettings(free_failures=2)), checker=checker
    )
    outcomes: list[Outcome] = []
    threads = [
        threading.Thread(
            target=lambda: outcomes.append(logins.login("admin", RIGHT, "netconf", "192.0.2.1"))
        )
        for _ in range(12)
    ]
    for thread in threads:
        thread.start()
    while not asked:  # the first check is under way; the others join it
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join()
    assert outcomes == [Outcome.OK] * 12
    assert asked == [RIGHT]
