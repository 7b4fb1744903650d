"""The console of a hall in a real headless Chromium: 500 tables, 2,000 names, ten access points
of 50 tables (the last one down), the real head service and console server.

What a guest at the door sees on a phone (find my table, by part of her name, whatever its case
and accents; the board a page of tables at a time, patched as scores change), without
JavaScript (the Pi's /find and /board pages, the projector's pages going round), the host's
desk (filter by number or name, sort by the tables that hold the round or are offline, the
access points), and the printable table cards. Screenshots at a phone's size go to
docs/console/hall-*.png (BUNCO_DOCS_SHOTS=1). How fast: benchmarks/bench_console_hall.py.
"""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path

import pytest

from bunco_pi.console.pages import ADVANCE, PAGE
from bunco_pi.rules.table_round import Bell, Pass, Tally
from tests.browser import LAPTOP, PHONE, chrome, resize, sticking_out
from tests.hall_head import PASSWORD, Hall
from tests.test_console_browser import SHOTS, click, text_of, wait_page

pytestmark = pytest.mark.slow

TABLES = 500
GROUPS = [{"name": f"Access point {i + 1}", "tables": list(range(i * 50 + 1, i * 50 + 51))}
          for i in range(10)]


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    # 1,999 names: one ghost's seat, for a late arrival
    hall = Hall(Path(tmp_path_factory.mktemp("hall")), TABLES, 1999, groups=GROUPS).start()
    hall.online(list(range(1, 501)))
    hall.online(list(range(451, 501)), online=False)  # the tenth access point drops
    hall.start_night()
    yield hall
    hall.stop()


@pytest.fixture(scope="module")
def browser():
    with chrome(PHONE) as b:
        yield b


def shoot(browser, name: str, size: tuple[int, int] = PHONE) -> None:
    resize(browser, size)
    time.sleep(0.3)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"hall-{name}-{'phone' if size == PHONE else 'laptop'}.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 1000, shot


def cards(browser) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll('#tables .table')].map((e) => e.id)")


def find(browser, text: str) -> list[str]:
    field = browser.find_element("id", "find-name")
    field.clear()
    field.send_keys(text)
    wait_page(browser, lambda: browser.execute_script(
        "const f = document.getElementById('found'); return f.dataset.query === arguments[0]",
        text), f"the answer for {text!r}")
    return browser.execute_script(
        "return [...document.querySelectorAll('#found li')].map((e) => e.textContent)")


def test_the_board_of_500_tables_on_a_phone_is_a_page_of_20(hall, browser) -> None:
    resize(browser, PHONE)
    browser.get(hall.base + "/")
    wait_page(browser, lambda: len(cards(browser)) == PAGE, "the first page of tables")
    assert cards(browser) == [f"table-{n}" for n in range(1, PAGE + 1)]
    assert text_of(browser, "#page-of") == f"Tables 1–{PAGE} of {TABLES}"
    assert len(browser.find_elements("css selector", "#pager a")) == TABLES // PAGE
    assert sticking_out(browser, PHONE[0]) == []
    shoot(browser, "board")
    click(browser, "page-24")  # tables 461-480: offline, their access point is down
    wait_page(browser, lambda: cards(browser)[:1] == ["table-461"], "the 24th page")
    assert "offline" in browser.execute_script(
        "return document.getElementById('table-461').className")
    click(browser, "page-1")
    wait_page(browser, lambda: cards(browser)[:1] == ["table-1"], "the first page again")


def test_a_score_reaches_the_page_as_a_patch(hall, browser) -> None:
    # read in one script: the page redraws its tables as patches come
    assert text_of(browser, "#table-7 .score") == "0 – 0"
    hall.enter(7, Tally("point"))
    wait_page(browser, lambda: text_of(browser, "#table-7 .score") == "1 – 0",
              "table 7's point")
    # the page took a patch: the whole snapshot came once, when it connected
    assert browser.execute_script("return snap.board.length") == TABLES


def test_find_my_table_whatever_the_case_and_accents(hall, browser) -> None:
    found = find(browser, "zoe lef")
    assert found[0].startswith("Zoë Lefèvre: table ") and len(found) == 4  # and 2, 3, 4
    table = int(re.search(r"table (\d+)", found[0]).group(1))
    assert [int(re.search(r"table (\d+)", f).group(1)) for f in found] == \
        [hall.where("Zoë Lefèvre" + suffix) for suffix in ("", " 2", " 3", " 4")]
    assert find(browser, "CHLOÉ NÚÑEZ")[0].startswith("Chloé Núñez: table ")
    assert find(browser, "renee strasse")[0].startswith("Renée Straße: table ")
    assert find(browser, "nobody here") == [
        "No one called “nobody here” tonight: try fewer letters, or ask the host."]
    find(browser, "zoe lef")
    assert sticking_out(browser, PHONE[0]) == []
    shoot(browser, "find")
    browser.execute_script("document.querySelector('#found li').click()")
    wait_page(browser, lambda: f"table-{table}" in cards(browser), "her table's page")
    assert "found-here" in browser.execute_script(
        "return document.getElementById(arguments[0]).className", f"table-{table}")
    assert sticking_out(browser, PHONE[0]) == []
    shoot(browser, "found")


def test_without_javascript_find_and_the_projector_pages(hall) -> None:
    with chrome(PHONE, javascript=False) as plain:
        plain.get(hall.base + "/")
        wait_page(plain, lambda: plain.current_url.endswith("/board"), "the no-script board")
        assert len(plain.find_elements("css selector", "#tables .table")) == PAGE
        plain.get(hall.base + "/find")
        plain.find_element("id", "find-name").send_keys("Chloé núñez")
        plain.find_element("css selector", "form.find button").click()
        wait_page(plain, lambda: "/find?name=" in plain.current_url, "the answer page")
        found = plain.find_element("id", "found").text
        assert found.startswith("Chloé Núñez: table ")
        assert sticking_out(plain, PHONE[0]) == []
        shoot(plain, "find-plain")
        resize(plain, LAPTOP)
        plain.get(hall.base + "/board?page=25")
        assert len(plain.find_elements("css selector", "#tables .table")) == PAGE
        refresh = plain.find_element("css selector", "meta[http-equiv=refresh]")
        assert refresh.get_attribute("content") == f"{ADVANCE}; url=/board?page=1"
        big = plain.execute_script(
            "return parseFloat(getComputedStyle(document.querySelector('.table h2')).fontSize)")
        assert big >= 24  # read from the back of the hall
        lowest = plain.execute_script("return Math.max(...[...document.querySelectorAll("
                                      "'#tables .table')].map((e) => e.getBoundingClientRect().bottom))")
        assert lowest <= LAPTOP[1]  # the whole page of tables on the screen, nothing to scroll
        shoot(plain, "projector", LAPTOP)


def log_in(hall, browser) -> None:
    resize(browser, PHONE)
    browser.get(hall.base + "/#host")
    shown = "return !document.getElementById(arguments[0]).classList.contains('hidden')"
    wait_page(browser, lambda: browser.execute_script(shown, "login")
              or browser.execute_script(shown, "desk"), "the log-in or the desk")
    if browser.execute_script(shown, "login"):
        browser.find_element("id", "password").send_keys(PASSWORD)
        browser.find_element("css selector", "#login button").click()
    wait_page(browser, lambda: browser.execute_script(shown, "desk"), "the desk")


def sort_by(browser, value: str) -> None:
    from selenium.webdriver.support.select import Select

    Select(browser.find_element("id", "desk-sort")).select_by_value(value)


def test_the_desk_filters_and_sorts_500_tables(hall, browser) -> None:
    # table 3 hears the bell and holds the round; the others finish
    hall.do(lambda s: s.carry_out(s.coordinator.press_bell()))
    for t in range(1, TABLES + 1):
        if t != 3:
            hall.enter(t, Bell(), Tally("point"), Pass(), Pass(), Pass(), Pass())
    assert hall.do(lambda s: [i + 1 for i, t in enumerate(s.coordinator.night.tables)
                              if not t.done]) == [3]
    log_in(hall, browser)
    rows = lambda: browser.execute_script(  # noqa: E731
        "return [...document.querySelectorAll('#desk-tables li')].map((e) => e.id)")
    wait_page(browser, lambda: len(rows()) == 20, "the desk's first tables")
    assert "20 of the 500 tables shown" in text_of(browser, "#desk-shown")
    assert len(browser.find_elements("css selector", "#undo-buttons button")) == 20
    groups = browser.execute_script(
        "return [...document.querySelectorAll('#groups li')].map((e) => [e.className, e.textContent])")
    assert len(groups) == 10 and groups[9][0] == "down"
    assert groups[9][1] == "Access point 10 0 of 50 tables online · tables 451-500 all offline: " \
        "is the access point down?"
    assert groups[0] == ["", "Access point 1 50 of 50 tables online"]
    sort_by(browser, "held")
    wait_page(browser, lambda: rows()[:1] == ["desk-table-3"], "the held table first")
    assert "holds the round" in text_of(browser, "#desk-table-3")
    sort_by(browser, "offline")
    wait_page(browser, lambda: rows()[:1] == ["desk-table-451"],
              f"the offline tables first: {rows()[:3]}", 10)
    assert rows()[:20] == [f"desk-table-{n}" for n in range(451, 471)]
    field = browser.find_element("id", "desk-filter")
    field.send_keys("319")
    wait_page(browser, lambda: rows() == ["desk-table-319"], "table 319 alone")
    assert browser.execute_script("return [...document.querySelectorAll("
                                  "'#undo-buttons button')].map((b) => b.textContent)") == \
        ["Table 319"]
    assert len(browser.find_elements("css selector", "#seats tr")) == 4
    field.clear()
    field.send_keys("ZOË LEFÈVRE 3")
    wait_page(browser, lambda: rows() == [f"desk-table-{hall.where('Zoë Lefèvre 3')}"],
              "her table alone")
    assert sticking_out(browser, PHONE[0]) == []
    browser.execute_script("document.getElementById('tables-card').scrollIntoView()")
    shoot(browser, "desk")
    field.clear()
    sort_by(browser, "late")  # a late arrival's seat first
    ghost = hall.where("Ghost 1")
    wait_page(browser, lambda: rows()[:1] == [f"desk-table-{ghost}"], "the ghost's table")
    assert "1 seat for late arrivals" in text_of(browser, f"#desk-table-{ghost}")


def test_table_cards_to_print(hall, browser) -> None:
    log_in(hall, browser)
    browser.get(hall.base + "/host/tables.html")
    wait_page(browser, lambda: len(browser.find_elements("css selector", ".table-card")) == TABLES,
              "a card per table")
    first = browser.find_element("id", "table-card-2")
    assert first.find_element("css selector", ".number b").text == "2"
    assert "When the Head table reaches 21 points or rolls a BUNCO they ring the bell." in \
        first.find_element("css selector", ".rules").text
    loaded = browser.execute_script(
        "return [...document.images].slice(0, 3).every((i) => i.complete && i.naturalWidth > 20)")
    assert loaded  # the QR code is drawn by the Pi, in the page
    assert sticking_out(browser, PHONE[0]) == []
    shoot(browser, "table-cards")
    pdf = base64.b64decode(browser.print_page())  # on paper: one card a page
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) == TABLES
