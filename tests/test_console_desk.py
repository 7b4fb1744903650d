"""The host's desk over HTTP against a real head service (in-process link, real event log):
each action reaches the head's owner thread through its queue, and the two actions that need
the head's newer calls ask for exactly ``request_undo(table)`` and ``close_held_round()``."""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error
import urllib.request

import pytest

from bunco_pi.console.auth import hash_password
from bunco_pi.console.desk import SNAPSHOT_EVERY, ConsoleBridge, undo_last
from bunco_pi.console.server import CSRF_HEADER, ConsoleServer
from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HEAD_NAME, HeadService, HeadTask, make_players
from bunco_pi.net.inproc import InprocBroker, InprocLink
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import TableEvent
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.table_round import Roll

PASSWORD = "host password"


def _head(service_class, tmp_path, **kwargs):
    """Made on the owner thread: the event log's SQLite connection stays on its thread."""
    topics = Topics("desk")
    link = InprocLink(InprocBroker(), HEAD_NAME, status_topic=topics.status(HEAD_NAME))
    coordinator = Coordinator(preset("classic"), preset_text("classic"), "desk", 2,
                              entropy=random.Random(2))
    log = EventLog(tmp_path / "night.sqlite")
    service = service_class(coordinator, link, log, topics,
                            make_players([f"N{i}" for i in range(7)], None, 2), **kwargs)
    return service, log


@pytest.fixture
def desk(tmp_path):
    made = {}
    server = ConsoleServer("127.0.0.1", 0, password_hash=hash_password(PASSWORD),
                           season_dir=tmp_path / "nights")
    stop = threading.Event()
    ready = threading.Event()

    def owner() -> None:  # the head's one owner thread, as `bunco-pi head` runs it
        service, log = _head(HeadService, tmp_path)
        made["service"] = service
        server.bridge = ConsoleBridge(service, server.publish, season_dir=tmp_path / "nights",
                                      background=True)
        service.start()
        ready.set()
        try:
            service.run(stop.is_set)
        finally:
            server.bridge.close()
            log.close()

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        server.port = s.getsockname()[1]
    server.start()
    thread = threading.Thread(target=owner, daemon=True)
    thread.start()
    ready.wait(10)
    yield made["service"], f"http://127.0.0.1:{server.port}"
    stop.set()
    thread.join(10)
    server.stop()


def call(base, path, body=None, cookie=None, csrf=None):
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    if csrf:
        headers[CSRF_HEADER] = csrf
    req = urllib.request.Request(base + path, data=json.dumps(body or {}).encode(),
                                 headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read()), r.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), ""


def login(base):
    status, reply, cookie = call(base, "/api/login", {"password": PASSWORD})
    assert status == 200 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return cookie.split(";")[0], reply["csrf"]


def test_the_host_runs_the_night_from_the_desk(desk):
    service, base = desk
    cookie, csrf = login(base)

    def act(action, body=None):
        return call(base, f"/api/host/{action}", body, cookie, csrf)[:2]

    status, reply = act("roster", {"roster": [{"name": "Ann", "here": True},
                                              {"name": "Bea", "here": False},
                                              {"name": "Ann", "here": True}]})
    assert status == 409 and "twice" in reply["error"]
    status, reply = act("roster", {"roster": [{"name": n, "here": n != "Bea"}
                                              for n in ("Ann", "Bea", "Cat", "Dot", "Eve")]})
    assert (status, reply["message"]) == (200, "4 checked in, 4 ghosts")
    assert act("start")[0] == 200
    assert act("start") == (409, {"ok": False, "error": "the night has already started"})
    night = service.coordinator.night
    assert [p.name for p in night.players if not p.ghost] == ["Ann", "Cat", "Dot", "Eve"]
    assert act("arrive", {"player": "ghost1", "name": "Zoe"})[0] == 200
    assert service.coordinator.night.player("ghost1").name == "Zoe"
    assert act("leave", {"player": "p1"})[0] == 200
    assert act("arrive", {"player": "p1", "name": "Yan"})[0] == 409  # Ann's card stays hers
    assert act("end") == (200, {"ok": True, "message": "the night has ended: prizes settled"})
    assert service.coordinator.ended
    assert act("nonsense")[0] == 404
    assert act("undo", {"table": "two"})[0] == 400  # a wrong type is a malformed request


def test_undo_and_closing_a_held_round_go_through_the_heads_own_calls(desk):
    service, base = desk
    cookie, csrf = login(base)

    def act(action, body=None):
        return call(base, f"/api/host/{action}", body, cookie, csrf)[:2]

    assert act("undo", {"table": 2})[0] == 409  # no night yet: nothing to undo
    assert act("close-held")[0] == 409
    assert act("start")[0] == 200
    time.sleep(0.6)  # the bell takes one press per half second, however long it chatters
    assert act("bell")[0] == 200
    wait_for(lambda: service.coordinator.night.phase == "playing", "the round to start")
    assert act("undo", {"table": 2}) == (200, {"ok": True, "message": "table 2: undo asked"})
    assert act("undo", {"table": 3})[0] == 409  # a night of 2 tables
    logged = on_head(service, lambda s: [e.payload for e in s.eventlog.replay()
                                         if e.payload.get("kind") == "command"])
    assert [(p["command"], p["table"]) for p in logged] == [("undo", 2)]
    assert act("close-held") == (200, {"ok": True, "message": "round closed"})
    wait_for(lambda: service.coordinator.night.phase == "results", "the held round to close")
    assert act("close-held")[0] == 409  # nothing is held now


def on_head(service, work):
    """``work(service)`` on the head's owner thread (its SQLite log lives there)."""
    task = HeadTask(work)
    service.link.inbox.put(task)
    return task.done.result(15)


def wait_for(predicate, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_scores_are_drawn_at_most_every_half_second_the_news_and_the_hosts_acts_at_once(tmp_path):
    """At 100 tables a snapshot costs the head's thread more than a score takes to arrive; the
    phones see a score within ``SNAPSHOT_EVERY``, the bell and the host's own action at once."""
    now = [1000.0]
    shown: list[dict] = []
    service, log = _head(HeadService, tmp_path, clock=lambda: now[0])
    bridge = ConsoleBridge(service, lambda text, patch: shown.append(json.loads(text)),
                           clock=lambda: now[0])
    service.start()
    service.step(0)

    def roll(table, seq, dice):
        service.carry_out(service.coordinator.accept([TableEvent(table, seq, 0, Roll(dice))]))
        service.step(0)

    def score(table):
        return shown[-1]["board"][table - 1]["score"]

    service.press_bell()  # seats drawn
    now[0] += 1
    service.press_bell()  # round 1
    service.step(0)
    assert shown[-1]["phase"] == "playing"
    drawn = len(shown)
    now[0] += 0.1
    roll(2, 1, (1, 1, 3))  # a 1 in round 1 scores 2 points, in a tenth of a second
    assert len(shown) == drawn  # not drawn yet
    now[0] += SNAPSHOT_EVERY - 0.1
    service.step(0)  # the loop comes back within its timeout with nothing new
    assert len(shown) == drawn + 1 and score(2) == [2, 0]
    roll(2, 2, (1, 4, 5))
    assert len(shown) == drawn + 1  # routine: waits again
    asked = bridge.task(undo_last(1))  # the host acts: the desk is drawn at once, with the
    service.step(0)                    # score that was waiting
    assert asked.done.result(0) == "table 1: undo asked"
    assert len(shown) == drawn + 2 and score(2) == [3, 0]
    roll(1, 1, (2, 3, 4))
    assert len(shown) == drawn + 2
    now[0] += 5  # past the guard on a fresh round: the bell ends it
    service.press_bell()
    service.step(0)
    assert len(shown) == drawn + 3 and shown[-1]["bell"] is True
    log.close()


def test_the_desk_holds_names_to_the_one_rule(desk):
    """A player cannot be named "Ghost 1" (nor a look-alike), and no right-to-left override
    gets in: the roster and a late arrival are refused in one line naming the problem."""
    service, base = desk
    cookie, csrf = login(base)

    def act(action, body=None):
        return call(base, f"/api/host/{action}", body, cookie, csrf)[:2]

    for bad, problem in (("Ghost 1", "roster line 2: 'Ghost 1' reads as a ghost's name"),
                         ("GHOST  3", "roster line 2: 'GHOST 3' reads as a ghost's name"),
                         ("Gһоѕt 1", "reads as a ghost's name"),
                         ("Bea\u202e", "roster line 2: U+202E (RIGHT-TO-LEFT OVERRIDE)"),
                         ("\u2067Bea", "roster line 2: U+2067 (RIGHT-TO-LEFT ISOLATE)"),
                         ("ann", "roster line 2: 'ann' is on the roster twice (line 1 too)")):
        status, reply = act("roster", {"roster": [{"name": "Ann"}, {"name": bad}]})
        assert (status, reply["error"].startswith(problem) or problem in reply["error"]) \
            == (409, True), (bad, reply)
    status, reply = act("roster", {"roster": [{"name": "Ann"}, {"name": "O\u2019Brien"},
                                              {"name": "  Zoe\u0308 "}]})
    assert status == 200, reply
    assert act("start")[0] == 200
    night = service.coordinator.night
    assert [p.name for p in night.players if not p.ghost] == ["Ann", "O\u2019Brien", "Zo\u00eb"]
    ghost = next(p.id for p in night.players if p.ghost)
    for bad, problem in (("Ghost 1", "reads as a ghost's name"), ("gh0st1", "ghost's name"),
                         ("Ｇｈｏｓｔ ２", "ghost's name"),
                         ("Anna\u202eBea", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
                         ("ZOË", "'Zoë' is already playing tonight")):
        status, reply = act("arrive", {"player": ghost, "name": bad})
        assert status == 409 and problem in reply["error"], (bad, reply)
        assert service.coordinator.night.player(ghost).ghost
    assert act("arrive", {"player": ghost, "name": " Наташа "})[0] == 200
    assert service.coordinator.night.player(ghost).name == "Наташа"


def test_a_leaver_and_a_late_arrival_of_one_name_are_two_players_in_the_season(desk, tmp_path):
    """The host mends a mis-tapped "Leaves" by seating "Ann" again at a ghost's seat: the night
    has two cards under that name, and the season the head keeps has two players, each with
    her own card and season id (keyed by name they merged, and one card's figures vanished)."""
    from bunco_pi.season import load_nights, season_table
    from bunco_pi.season_players import read_players

    service, base = desk
    cookie, csrf = login(base)

    def act(action, body=None):
        return call(base, f"/api/host/{action}", body, cookie, csrf)[:2]

    assert act("roster", {"roster": [{"name": n} for n in ("Ann", "Bea", "Cat", "Dot", "Eve")]}
               )[0] == 200
    assert act("start")[0] == 200
    time.sleep(0.6)  # the bell takes one press per half second
    assert act("bell")[0] == 200
    wait_for(lambda: service.coordinator.night.phase == "playing", "the round to start")
    assert act("close-held")[0] == 200
    wait_for(lambda: service.coordinator.night.phase == "results", "the round to close")
    assert act("leave", {"player": "p1"})[0] == 200
    ghost = next(p.id for p in service.coordinator.night.players if p.ghost and p.id != "p1")
    assert act("arrive", {"player": ghost, "name": "Ann"})[0] == 200
    assert act("end")[0] == 200
    nights = tmp_path / "nights"
    wait_for(lambda: any(nights.glob("*-desk.json")), "the night kept for the season")
    wait_for(lambda: (nights / "season-players.json").exists(), "the season's players kept")
    rows = [r for r in season_table(load_nights(nights)) if r.name == "Ann"]
    assert len(rows) == 2 and rows[0].player != rows[1].player
    kept = read_players(nights)
    assert {kept[c] for c in kept if c.endswith(("/p1", f"/{ghost}"))} == \
        {r.player for r in rows}


@pytest.mark.parametrize("bad", [
    [{"name": "Ann", "here": True}, {"name": "Ghost 3", "here": True}],
    [{"name": "Ann", "here": True}, {"name": "ann ", "here": True}],
    [{"name": "Bea\u202e", "here": True}],
])
def test_a_kept_roster_goes_through_the_names_rule_when_the_head_restarts(tmp_path, caplog, bad):
    """The roster kept on the head's disk may be hand-edited or older than the names rule: a
    restart takes it through the same rule as the console, or leaves it with one line."""
    from bunco_pi.console.roster_file import save_roster

    kept = tmp_path / "night-desk.roster.json"
    save_roster(kept, bad)
    service, _ = _head(HeadService, tmp_path)
    configured = list(service.players)
    with caplog.at_level("WARNING", logger="bunco_pi.console"):
        ConsoleBridge(service, lambda text, patch: None, roster_file=kept)
    assert service.players == configured
    assert any("kept roster not used: entry" in r.getMessage() for r in caplog.records)


def test_a_kept_roster_that_fits_the_rule_is_seated_cleaned(tmp_path):
    from bunco_pi.console.roster_file import save_roster

    kept = tmp_path / "night-desk.roster.json"
    save_roster(kept, [{"name": "  Zoë   O\u2019Brien ", "here": True},
                       {"name": "Bea", "here": False}])
    service, _ = _head(HeadService, tmp_path)
    bridge = ConsoleBridge(service, lambda text, patch: None, roster_file=kept)
    assert [p.name for p in service.players if not p.ghost] == ["Zoë O\u2019Brien"]
    assert [r["name"] for r in bridge.roster] == ["Zoë O\u2019Brien", "Bea"]


@pytest.mark.parametrize("background", [True, False], ids=["drawn-apart", "drawn-inline"])
def test_the_bell_goes_out_while_the_console_is_still_drawing(tmp_path, background):
    """At 500 tables a snapshot the fuzzy die or a round's close makes costs the busy head
    tens of milliseconds or more; the head draws it on a thread of its own, so a bell that
    comes meanwhile goes out at once. Drawn inline (the second case), the bell waits for the
    drawing: what the head did before, kept here to show this test can fail."""
    from bunco_pi.net import envelope

    now = [1000.0]
    made: dict = {}
    stop, ready = threading.Event(), threading.Event()
    hold, drawing, release = threading.Event(), threading.Event(), threading.Event()

    def publish(text: str, patch: str | None) -> None:
        if hold.is_set():  # a drawing that takes as long as the test wants
            drawing.set()
            release.wait(10)

    def owner() -> None:
        service, log = _head(HeadService, tmp_path, clock=lambda: now[0])
        made["service"] = service
        made["bridge"] = ConsoleBridge(service, publish, clock=lambda: now[0],
                                       background=background)
        service.start()
        ready.set()
        try:
            service.run(stop.is_set)
        finally:
            made["bridge"].close()
            log.close()

    thread = threading.Thread(target=owner)
    thread.start()
    try:
        assert ready.wait(10)
        service, bridge = made["service"], made["bridge"]

        def bell_in_state() -> bool:
            data = service.link._broker.retained(service.topics.state())
            return bool(data) and envelope.decode(service.topics.state(), data).payload.get(
                "bell") is True

        for _ in range(2):  # seats drawn; round 1
            now[0] += 1
            bridge.task(lambda s: s.press_bell()).done.result(10)
        assert not bell_in_state()
        now[0] += 5  # past the guard on a fresh round
        hold.set()
        bridge.task(lambda s: None)  # the host acts: a drawing starts, and takes its time
        assert drawing.wait(10)
        rung = bridge.task(lambda s: s.press_bell())
        deadline = time.monotonic() + (10 if background else 1)
        while not bell_in_state() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bell_in_state() is background
        assert not release.is_set()  # the drawing was still going on
        release.set()
        rung.done.result(10)
        assert bell_in_state()
    finally:
        release.set()
        stop.set()
        thread.join(10)
