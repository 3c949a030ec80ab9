"""The operator console in a real browser (headless chromium) against a real demo bed.

The bed is the demo's: the C-PS, service instances, SCIs, C-SMAs, the C-NMA and three
forwarders on loopback, with ``catsctl console`` beside it as ``catsctl demo --keep`` starts
it. The tests log in with the C-PS's own users (one per group of the shipped policy), open
every page, read scenario A's decision (service-metrics-op 7.2), watch the TST chart follow a
change of network delay, roll back through the page and read the result over NETCONF, are
refused what the observer group may not do, and log out. Every page's screenshot goes to
``build/console-screenshots/`` (``CATS_CONSOLE_SCREENSHOTS`` to change it). Waits are on
conditions (WebDriverWait), never sleeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests
from ncclient import manager
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from controller.demo import records
from controller.demo import topology as t
from controller.demo.agent import episode_played
from controller.demo.bed import Bed, BedSettings, start_bed
from controller.demo.client import Restconf
from controller.demo.console import start_console
from controller.demo.episode import GATEWAY_USER, SESSION
from controller.demo.expect import Decision
from controller.demo.forwarders import ST, inventory
from controller.demo.launch import wait_until
from controller.demo.scenarios import PATH_MS
from controller.demo.steps import Run
from tests.conftest import ROOT
from tests.functional.browser import chromium, require_browser

pytestmark = pytest.mark.functional
WAIT_S = 90.0
SCREENSHOTS = Path(os.environ.get("CATS_CONSOLE_SCREENSHOTS", ROOT / "build/console-screenshots"))
SM = "ietf-cats-service-metrics"
AS = "ietf-cats-agent-selection"
PAGES = {
    "overview": "/",
    "cst": "/cst",
    "nst": "/nst",
    "decisions": "/decisions",
    "sessions": "/sessions",
    "plots": "/plots?cs-id=ARS&ingress=10.0.0.1",
    "config": "/config/",
}


class Console:
    """The bed, the console's URL and a logged-in browser."""

    def __init__(self, bed: Bed, url: str, driver: webdriver.Chrome) -> None:
        self.bed = bed
        self.url = url.rstrip("/")
        self.driver = driver

    def open(self, path: str) -> None:
        """Open a page of the console and wait for its heading."""
        self.driver.get(self.url + path)
        self.wait(lambda d: d.find_elements(By.TAG_NAME, "h1"))

    def wait(self, condition: Callable[[webdriver.Chrome], Any], timeout: float = WAIT_S) -> Any:
        """Wait until ``condition`` holds in the browser (live updates replace elements under
        the reader: a stale one is read again at the next poll)."""
        wait = WebDriverWait(
            self.driver,
            timeout,
            poll_frequency=0.2,
            ignored_exceptions=(StaleElementReferenceException,),
        )
        return wait.until(condition)

    def login(self, user: str, password: str) -> None:
        """Log in through the form."""
        self.driver.get(self.url + "/login")
        self.driver.find_element(By.ID, "username").send_keys(user)
        self.driver.find_element(By.ID, "password").send_keys(password)
        self.driver.find_element(By.ID, "login").click()
        self.wait(lambda d: d.find_elements(By.ID, "who"))
        assert self.driver.find_element(By.ID, "who").text == user

    def logout(self) -> None:
        """Log out through the header's button."""
        self.driver.find_element(By.ID, "logout").click()
        self.wait(lambda d: d.find_elements(By.ID, "username"))

    def shot(self, name: str) -> Path:
        """A screenshot of the page as it is."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        assert self.driver.save_screenshot(str(path))
        return path

    def text(self, element_id: str) -> str:
        """The text of an element."""
        found: str = self.driver.find_element(By.ID, element_id).text
        return found


def _measured(bed: Bed) -> None:
    """Both ARS instances (SCI-1, SCI-3) reported with a measured Computing Time."""
    ars = (bed.csci("SCI-1"), bed.csci("SCI-3"))

    def measured(cst: dict[str, dict[str, Any]]) -> bool:
        return all(
            c in cst and cst[c].get("gas") and cst[c].get("confidence", "").endswith("asserted")
            for c in ars
        )

    bed.wait_cst("SCI-1 and SCI-3 measured", measured, drive=("SCI-1", "SCI-3"), timeout=WAIT_S)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """The demo bed with forwarders and the agents' candidates (stage G's), the console beside
    it, a browser logged in as admin."""
    require_browser()
    folder = tmp_path_factory.mktemp("console")
    with start_bed(BedSettings(folder, forwarders=True, agents=True)) as bed:
        bed.set_paths(PATH_MS)
        _measured(bed)
        password = bed.settings.agent_password
        bed.cps.put(f"{ST}:forwarders", inventory(bed.forwarders, password, agents=False))
        url = start_console(bed)
        with chromium() as driver:
            running = Console(bed, url, driver)
            running.login("admin", bed.settings.admin_password)
            yield running


def test_every_page_opens_for_a_logged_in_operator(console: Console) -> None:
    bed = console.bed
    for name, path in PAGES.items():
        console.open(path)
        if name == "overview":  # the forwarders' sessions come up as the C-PS connects
            console.wait(lambda d: "connected" in d.find_element(By.ID, "table-forwarders").text)
        console.shot(name)
    console.open("/cst")
    shown = console.text("table-cst")
    for label in ("SCI-1", "SCI-3"):
        assert bed.csci(label) in shown
    console.open("/nst")
    assert t.CF3 in console.text("table-nst")
    console.open("/config/")
    assert "init-data" in console.text("history")  # the C-PS's first commit


def _scenario_a(bed: Bed) -> Decision:
    """select-service for ARS at 10.0.0.1 until the C-PS decides as the draft's 7.2 does
    (SCI-3: CT3 + 6 < CT1 + 8); requests keep the Computing Times measured meanwhile."""
    seen: list[object] = []

    def decided() -> Decision | None:
        bed.drive(("SCI-1", "SCI-3"), 3)
        decision = bed.select()
        seen[:] = [(c.csci_id, c.tst) for c in decision.candidates]
        return decision if decision.csci_id == bed.csci("SCI-3") else None

    return wait_until("the C-PS selects SCI-3 (7.2)", decided, timeout=WAIT_S, seen=lambda: seen)


def test_scenario_a_decision_shows_sci3_first_and_why_the_others_lost(console: Console) -> None:
    bed = console.bed
    decision = _scenario_a(bed)
    console.open(f"/decisions/{decision.decision_id}")
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#candidates tbody tr")
    first = rows[0].find_element(By.TAG_NAME, "th").text
    assert first == bed.csci("SCI-3")
    assert rows[0].find_element(By.CLASS_NAME, "outcome").text.startswith("rank 1")
    others = {r.find_element(By.TAG_NAME, "th").text: r for r in rows[1:]}
    sci1 = others[bed.csci("SCI-1")].find_element(By.CLASS_NAME, "outcome").text
    assert sci1.startswith("rank 2, score")  # feasible, ranked after SCI-3 by its TST
    assert console.text("fact-decided-by") == decision.decided_by  # score: no objective set
    assert console.text("fact-fallback-level") == "none"
    assert console.text("fact-requirement") == "-"  # no objective, no constraint: by score
    bars = {
        g.get_attribute("data-candidate"): g
        for g in console.driver.find_elements(By.CSS_SELECTOR, "#chart-candidates g")
    }
    network = bars[bed.csci("SCI-3")].find_element(By.CSS_SELECTOR, "rect[data-part=network]")
    assert Decimal(network.get_attribute("data-value") or "0") == Decimal(PATH_MS[t.CF3])
    computing = bars[bed.csci("SCI-1")].find_element(By.CSS_SELECTOR, "rect[data-part=computing]")
    assert Decimal(computing.get_attribute("data-value") or "0") > 0
    console.shot("decision")
    # the same request with max-price 8: SCI-1 (price 10) is excluded, and the page says why
    priced = bed.select({"hard-constraints": {"max-price": 8}})
    console.open(f"/decisions/{priced.decision_id}")
    excluded = console.driver.find_element(
        By.CSS_SELECTOR, f"#candidates tr[data-key='{bed.csci('SCI-1')}'] .outcome"
    )
    assert excluded.text.startswith("excluded: price-above-maximum")
    assert console.text("fact-requirement") == "max-price 8"  # the constraint it applied
    console.shot("decision-excluded")


def _tst_of(console: Console, csci_id: str) -> Decimal | None:
    paths = console.driver.find_elements(
        By.CSS_SELECTOR, f"#chart-tst path[data-series='{csci_id}']"
    )
    last = paths[0].get_attribute("data-last") if paths else None
    return Decimal(last) if last else None


def _now(driver: webdriver.Chrome) -> float:
    """The page's clock (``performance.now()``, ms since it started loading)."""
    moment: float = driver.execute_script("return performance.now()")
    return moment


def _layout_shifts(driver: webdriver.Chrome, since: float) -> dict[str, Any]:
    """The cumulative layout shift from ``since`` (the page's clock, ms) and what moved: each
    source's node and rectangles. What the page did while it loaded is not a live update."""
    shifts: dict[str, Any] = driver.execute_async_script(
        """const since = arguments[0], done = arguments[arguments.length - 1];
        const rect = (r) => r && [r.x, r.y, r.width, r.height].map(Math.round).join(",");
        const name = (n) => !n ? "?" : n.nodeType === 1
          ? n.tagName + (n.id ? "#" + n.id : "") + (n.className && n.className.baseVal === undefined
                                                     ? "." + n.className : "")
          : n.nodeName + " in " + name(n.parentNode);
        const report = (entries) => {
          const shifts = entries.filter(e => !e.hadRecentInput && e.startTime >= since);
          return {score: shifts.reduce((sum, e) => sum + e.value, 0),
                  sources: shifts.flatMap(e => (e.sources || []).map(s =>
                    `${e.value.toFixed(4)} at ${Math.round(e.startTime)} ms: ${name(s.node)} `
                    + `${rect(s.previousRect)} -> ${rect(s.currentRect)}`))};
        };
        new PerformanceObserver((list) => done(report(list.getEntries())))
          .observe({type: 'layout-shift', buffered: true});
        setTimeout(() => done({score: 0, sources: []}), 500);""",
        since,
    )
    return shifts


def test_tst_chart_moves_live_when_the_network_delay_changes(console: Console) -> None:
    bed, sci3 = console.bed, console.bed.csci("SCI-3")
    console.open("/plots?cs-id=ARS&ingress=10.0.0.1")
    console.wait(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live-open") == "yes"
    )
    live = _now(console.driver)
    before = console.wait(lambda d: _tst_of(console, sci3))
    assert before < 100  # CT3 + 6 ms
    updates = int(
        console.driver.find_element(By.TAG_NAME, "body").get_attribute("data-live-updates") or 0
    )
    bed.set_paths({t.CF3: "150"})  # CF-3's path congested far beyond any Computing Time
    moved = console.wait(lambda d: (v := _tst_of(console, sci3)) is not None and v > 150 and v)
    assert moved > before
    body = console.driver.find_element(By.TAG_NAME, "body")
    assert int(body.get_attribute("data-live-updates") or 0) > updates  # no reload: live
    console.shot("plots-congested")
    bed.set_paths({t.CF3: PATH_MS[t.CF3]})
    console.wait(lambda d: (v := _tst_of(console, sci3)) is not None and v < 100)
    shifts = _layout_shifts(console.driver, since=live)
    assert shifts["score"] == 0, shifts["sources"]


def test_live_cells_update_in_place_without_layout_shift(console: Console) -> None:
    console.open("/cst")
    console.wait(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live-open") == "yes"
    )

    def changed(driver: webdriver.Chrome) -> Any:
        console.bed.drive(("SCI-1",), 5)  # the slowed instances' response times: its new CT
        return driver.find_elements(By.CSS_SELECTOR, "#table-cst td.changed")

    # SCI-1 slowed by 300 ms: its Computing Time moves past any delta threshold of the C-SMA
    # (unslowed, the measured times may stay within them, and nothing is reported)
    live = _now(console.driver)
    console.bed.admin("SCI-1", slow_ms=300)
    try:
        console.wait(changed)
        shifts = _layout_shifts(console.driver, since=live)
        assert shifts["score"] == 0, shifts["sources"]
    finally:
        console.bed.admin("SCI-1", slow_ms=0)
        console.bed.drive(("SCI-1",), 20)  # back to its own times for the tests after this one


def test_tables_work_without_javascript(console: Console) -> None:
    with chromium(javascript=False) as driver:
        plain = Console(console.bed, console.url, driver)
        plain.login("observer", console.bed.settings.observer_password)
        plain.open("/cst?sort=gas&dir=desc")
        gas = [
            int(cell.text)
            for cell in driver.find_elements(By.CSS_SELECTOR, "#table-cst tbody td[id$='|gas']")
        ]
        assert len(gas) >= 2
        assert gas == sorted(gas, reverse=True)
        sci3 = console.bed.csci("SCI-3")
        plain.open(f"/cst?q={sci3}")
        rows = driver.find_elements(By.CSS_SELECTOR, "#table-cst tbody tr")
        assert [row.get_attribute("data-key") for row in rows] == [f"ARS/{sci3}"]
        driver.find_element(By.LINK_TEXT, "csci-id").click()  # sorting is a link
        plain.wait(lambda d: "sort=csci-id" in d.current_url)


def test_pages_fit_a_phone_width(console: Console) -> None:
    with chromium(390, 844) as driver:
        phone = Console(console.bed, console.url, driver)
        phone.login("observer", console.bed.settings.observer_password)
        for name in ("overview", "cst", "plots"):
            phone.open(PAGES[name])
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, name  # tables scroll inside their box; the page does not
            phone.shot(f"phone-{name}")


def _commit(bed: Bed, max_price: int) -> str:
    """A change of the selection policy as admin over RESTCONF; its commit id."""
    reply = requests.patch(
        f"{bed.cps.root}/data/{SM}:selection-policy",
        json={
            f"{SM}:selection-policy": {
                "default-requirement": {"hard-constraints": {"max-price": max_price}}
            }
        },
        headers={
            "Content-Type": "application/yang-data+json",
            "Cats-Commit-Label": "console-test",
        },
        auth=("admin", bed.settings.admin_password),
        timeout=30,
    )
    assert reply.status_code == 204, reply.text
    commits = bed.cps.get("cats-controller-admin:commits")["cats-controller-admin:commits"]
    return str(max(int(c["id"]) for c in commits["commit"]))


def _running_max_price(bed: Bed) -> str | None:
    """The policy's max-price in running, read over NETCONF (ncclient)."""
    subtree = f'<selection-policy xmlns="urn:ietf:params:xml:ns:yang:{SM}"/>'
    with manager.connect(
        host="127.0.0.1",
        port=bed.ports["netconf"],
        username="admin",
        password=bed.settings.admin_password,
        hostkey_verify=False,
        allow_agent=False,
        look_for_keys=False,
        timeout=30,
    ) as session:
        reply = session.get_config("running", filter=("subtree", subtree))
    found = reply.data_ele.xpath("//*[local-name()='max-price']")
    return str(found[0].text) if found else None


def test_rollback_through_the_page_read_back_over_netconf(console: Console) -> None:
    bed = console.bed
    console.logout()
    console.login("operator", bed.settings.operator_password)
    made = _commit(bed, 50)
    before = str(int(made) - 1)
    assert _running_max_price(bed) == "50"
    console.open("/config/")
    console.driver.find_element(By.ID, f"rollback-{before}").click()
    console.wait(lambda d: d.find_elements(By.ID, "confirm"))
    assert "will apply 1 change(s)" in console.text("changes")
    assert "max-price" in console.text("diff")
    console.shot("rollback-confirm")
    console.driver.find_element(By.ID, "comment").send_keys("undo the test's price cap")
    console.driver.find_element(By.ID, "confirm").click()
    console.wait(lambda d: d.find_elements(By.ID, "result"))
    assert console.text("result").startswith("Committed as commit ")
    assert _running_max_price(bed) is None  # back as before the change, over NETCONF
    console.logout()


def test_observer_is_refused_a_rollback(console: Console) -> None:
    bed = console.bed
    made = _commit(bed, 40)
    console.login("observer", bed.settings.observer_password)
    console.open(f"/config/compare?source={int(made) - 1}&target=running")
    assert "max-price" in console.text("diff")  # observers may compare (read-only)
    console.open(f"/config/rollback?to={int(made) - 1}")
    assert "access-denied" in console.text("problem")
    assert not console.driver.find_elements(By.ID, "confirm")
    console.shot("refused")
    assert _running_max_price(bed) == "40"  # nothing changed
    console.logout()
    console.login("admin", bed.settings.admin_password)
    console.open(f"/config/rollback?to={int(made) - 1}")
    console.driver.find_element(By.ID, "confirm").click()
    console.wait(lambda d: d.find_elements(By.ID, "result"))
    assert _running_max_price(bed) is None


def _record_facts(console: Console, point: str) -> dict[str, str]:
    """The facts of the session page's last decision record at ``point``."""
    sections = console.driver.find_elements(By.CSS_SELECTOR, "section.record")
    found = [s for s in sections if point in s.find_element(By.TAG_NAME, "h3").text]
    assert found, point
    names = [dt.text for dt in found[-1].find_elements(By.TAG_NAME, "dt")]
    values = [dd.text for dd in found[-1].find_elements(By.TAG_NAME, "dd")]
    return dict(zip(names, values, strict=True))


def test_an_agent_sessions_records_and_timeline(console: Console) -> None:
    """Stage G's step-30 episode played by ``catsctl gateway``; its session's page shows the
    decision records (valuation, state cost, stability rules, fallback rung) and the timeline
    of decisions, commitments and accounting (agent-selection-mapping 8.1-8.4)."""
    bed = console.bed
    played = episode_played(Run(bed))
    assert not played.problems, played.problems
    gateway = Restconf(bed.cps.root, GATEWAY_USER, bed.settings.agent_password)
    try:  # MSG-16: the step's consumption is accounted
        gateway.call(AS, "close-session", {"session-id": SESSION, "reason": "completed"})
    finally:
        gateway.close()
    console.open("/sessions")
    console.driver.find_element(By.LINK_TEXT, SESSION).click()
    console.wait(lambda d: d.find_elements(By.ID, "timeline"))
    assert console.driver.find_element(By.TAG_NAME, "h1").text == f"Agent session {SESSION}"
    kinds = {
        item.get_attribute("class")
        for item in console.driver.find_elements(By.CSS_SELECTOR, "#timeline li")
    }
    assert {"decision", "commitment", "accounting"} <= kinds
    accounted = console.driver.find_element(By.CSS_SELECTOR, "#timeline li.accounting").text
    assert "turn 1 step 30: " in accounted
    session = bed.cps.get(f"{AS}:agent-selection/sessions/session={SESSION}")[f"{AS}:session"][0]
    boundary = _record_facts(console, "t1-step-boundary")
    assert boundary["outcome"] == records.KEPT  # C kept: moving costs more than it gains
    assert boundary["selected"] == bed.locators["C"]
    assert boundary["stability rules"] == "applied yes, step-in-flight no"
    change = (records.record_at(session, "t1-step-boundary") or {})["change"]
    assert f"cost {change['cost']}" in boundary["change"]  # weighed against the gain
    assert f"gain {change['gain']}" in boundary["change"]
    tail = _record_facts(console, "t8-tail-event")
    kept = records.record_at(session, "t8-tail-event") or {}
    assert tail["fallback rung"] == (records.local(kept.get("fallback-rung")))
    assert records.TRUNCATED in tail["degradation applied"]  # the reduced retrieval set
    section = console.driver.find_element(By.CSS_SELECTOR, "section.record")
    headers = [th.text for th in section.find_elements(By.CSS_SELECTOR, "thead th")]
    assert {"state-cost", "transfer-time", "recompute-time"} <= set(headers)
    console.shot("session")


def test_logout_ends_the_session_on_the_server(console: Console) -> None:
    cookies = {c["name"]: c["value"] for c in console.driver.get_cookies()}
    assert set(cookies) == {"cats_console"}  # nothing in the browser but the session id
    assert console.driver.execute_script("return document.cookie") == ""  # HttpOnly
    with requests.Session() as stolen:
        stolen.cookies.set("cats_console", cookies["cats_console"])
        assert (
            stolen.get(console.url + "/cst", timeout=30, allow_redirects=False).status_code == 200
        )
        console.logout()
        after = stolen.get(console.url + "/cst", timeout=30, allow_redirects=False)
    assert after.status_code == 302
    assert "/login" in after.headers["Location"]
    console.driver.get(console.url + "/")
    console.wait(lambda d: d.find_elements(By.ID, "username"))
