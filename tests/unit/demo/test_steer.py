"""Stage F's verdict on where client requests landed (controller.demo.steer, pure part)."""

from __future__ import annotations

from controller.demo.steer import Landing, judged_problems, landing_problems, landing_rows

ONE, THREE = "127.3.67.3:20067", "127.3.67.4:20069"
LABELS = {
    ONE: "SCI-1 188.3.67.3:67",
    "127.3.67.3:20068": "SCI-2 188.3.67.3:68",
    THREE: "SCI-3 188.3.67.4:69",
}
NOTHING = {"ars-1a": 0, "ars-1b": 0, "vrs-2a": 0, "ars-3a": 0, "ars-3b": 0}


def landing(served: dict[str, int], named: str = THREE, statuses: int = 200) -> Landing:
    return Landing((statuses,) * 4, (named,) * 4, NOTHING | served)


def test_requests_behind_the_selected_sci_pass() -> None:
    assert landing_problems(landing({"ars-3a": 2, "ars-3b": 2}), "SCI-3", THREE) == []


def test_a_request_behind_another_sci_fails() -> None:
    problems = landing_problems(landing({"ars-3a": 3, "ars-1a": 1}), "SCI-3", THREE)
    assert problems == [
        "3 of 4 requests reached SCI-3's instances",
        "requests landed behind another SCI: {'ars-1a': 1}",
    ]


def test_requests_all_elsewhere_fail_even_if_the_replies_name_the_decision() -> None:
    problems = landing_problems(landing({"ars-1a": 2, "ars-1b": 2}), "SCI-3", THREE)
    assert "0 of 4 requests reached SCI-3's instances" in problems


def test_replies_naming_another_csci_or_failing_fail() -> None:
    assert landing_problems(landing({"ars-3a": 4}, named=ONE), "SCI-3", THREE) == [
        f"the replies name ['{ONE}'], not {THREE}"
    ]
    problems = landing_problems(landing({}, statuses=503), "SCI-3", THREE)
    assert problems[0] == "0 of 4 answered 200 (statuses [503])"
    assert "0 of 4 requests reached SCI-3's instances" in problems


def test_rows_count_replies_and_instances_per_sci() -> None:
    rows = landing_rows(landing({"ars-3a": 1, "ars-3b": 3}), LABELS)
    assert rows == [
        ["SCI-1 188.3.67.3:67", "188.3.67.3", "0", "0 (ars-1a 0, ars-1b 0)"],
        ["SCI-2 188.3.67.3:68", "188.3.67.3", "0", "0 (vrs-2a 0)"],
        ["SCI-3 188.3.67.4:69", "188.3.67.4", "4", "4 (ars-3a 1, ars-3b 3)"],
    ]


def one(served: str, named: str) -> Landing:
    return Landing((200,), (named,), NOTHING | {served: 1})


SCIS = {ONE: "SCI-1", THREE: "SCI-3"}


def test_requests_judged_one_at_a_time_follow_the_entry_held_around_each() -> None:
    judged = [(THREE, one("ars-3a", THREE)), (ONE, one("ars-1b", ONE))] * 5
    assert judged_problems(judged, (ONE, THREE), SCIS, LABELS) == []


def test_a_request_judged_one_at_a_time_elsewhere_than_held_fails() -> None:
    judged = [(THREE, one("ars-3a", THREE))] * 9 + [(THREE, one("ars-1a", ONE))]
    assert judged_problems(judged, (ONE, THREE), SCIS, LABELS) == [
        "0 of 1 requests reached SCI-3's instances",
        "requests landed behind another SCI: {'ars-1a': 1}",
        f"the replies name ['{ONE}'], not {THREE}",
    ]


def test_too_few_steady_requests_or_an_infeasible_entry_fail() -> None:
    judged = [(ONE, one("ars-1a", ONE))] * 3
    assert judged_problems(judged, (THREE,), SCIS, LABELS) == [
        "only 3 of 50 requests saw a steady entry",
        f"the ingress held {LABELS[ONE]}, not feasible",
    ]
