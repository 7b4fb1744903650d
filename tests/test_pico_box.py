"""The Pico table box under MicroPython's unix port, one box against the real broker: bad
input each gives one line on the OLED and in the log and loses nothing; the journal's power
cuts at every byte under MicroPython itself; the MQTT 3.1.1 client against the generated
broker config (its user, its ACL, its will)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bunco_pi.net import envelope
from bunco_pi.net.link import Message
from bunco_pi.table import presses
from tests.conftest import collect
from tests.pico_boxes import SIM, PicoBox, micropython

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))

from bunco_box import box, mqtt  # noqa: E402
from bunco_box.journal import Journal, record_line  # noqa: E402

pytestmark = pytest.mark.slow


def journal_with(flash: Path, entries: list[list]) -> bytes:
    import os

    j = Journal(str(flash / "journal.log"), os)
    for entry in entries:
        j.append(0, entry)
    return (flash / "journal.log").read_bytes()


def events_of(inbox, table: int, seconds: float) -> list[tuple[int, list]]:
    out = []
    for item in collect(inbox, seconds):
        if isinstance(item, Message) and item.topic.endswith(f"/table/{table}/events"):
            env = envelope.decode(item.topic, item.payload)
            out.append((env.seq, env.payload["entry"]))
    return out


def test_a_config_missing_a_key_says_so_and_keeps_the_journal(tmp_path, broker):
    micropython()
    box = PicoBox(tmp_path, table=1, night="n1", host=broker.host, port=broker.port,
                  password="x")
    config = json.loads((tmp_path / "box.json").read_text())
    del config["password"]
    (tmp_path / "box.json").write_text(json.dumps(config))
    kept = journal_with(tmp_path, [["roll", [1, 2, 3]], ["pass"]])
    box.start()
    try:
        box.wait(lambda: "missing key" in box.status(), 10, "the config's problem on screen")
        assert box.status() == "box.json: missing key 'password'"
        assert "LOG box.json: missing key 'password'" in box.lines
        assert "LOG journal: 2 entries kept for the head" in box.lines
    finally:
        box.stop()
    assert (tmp_path / "journal.log").read_bytes() == kept


def test_a_torn_journal_tail_is_dropped_in_one_line_and_the_rest_reaches_the_broker(
        tmp_path, broker, topics, make_link):
    micropython()
    watcher = make_link("watcher")
    watcher.subscribe(topics.events(2))
    box = PicoBox(tmp_path, table=2, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-2"))
    whole = journal_with(tmp_path, [["roll", [1, 2, 3]], ["tally", "point"], ["pass"]])
    torn = b'{"s":4,"r":0,"x":["ro'  # a power cut in the middle of the fourth append
    (tmp_path / "journal.log").write_bytes(whole + torn)
    box.start()
    try:
        box.wait(lambda: "torn" in box.log_text(), 10, "the torn tail reported")
        line = next(x for x in box.lines if "torn" in x)
        assert line == f"LOG journal: dropped a torn last record ({len(torn)} bytes), never shown"
        box.wait(lambda: box.status() == line[len("LOG "):], 10, "the torn tail on screen")
        got = events_of(watcher.inbox, 2, 4)
    finally:
        box.stop()
    # every whole entry went out, with its seq; the torn one never counted
    first = {seq: entry for seq, entry in reversed(got)}  # resent ones are the same
    assert first == {1: ["roll", [1, 2, 3]], 2: ["tally", "point"], 3: ["pass"]}
    j = Journal(str(tmp_path / "journal.log"), __import__("os"))
    assert j.last_seq == 3 and j.problems == []


def test_a_broker_refusing_the_password_says_so_and_loses_nothing(tmp_path, broker, topics,
                                                                  make_link):
    micropython()
    box = PicoBox(tmp_path, table=3, night=topics.night, host=broker.host, port=broker.port,
                  password="not-the-password")
    kept = journal_with(tmp_path, [["roll", [6, 6, 6]]])
    box.start()
    try:
        box.wait(lambda: "refused" in box.status(), 15, "the refusal on screen")
        # mosquitto answers a wrong password with "not authorised" (MQTT 3.1.1 code 5)
        assert box.status() == "broker refused: not authorised (check the password)"
        assert "LOG broker refused: not authorised (check the password)" in box.lines
    finally:
        box.stop()
    assert (tmp_path / "journal.log").read_bytes() == kept
    # with the right password, the kept entry goes out
    watcher = make_link("watcher")
    watcher.subscribe(topics.events(3))
    config = json.loads((tmp_path / "box.json").read_text())
    config["password"] = broker.credentials.password("table-3")
    (tmp_path / "box.json").write_text(json.dumps(config))
    box.start()
    try:
        got = events_of(watcher.inbox, 3, 4)
    finally:
        box.stop()
    assert (1, ["roll", [6, 6, 6]]) in got


def test_the_journal_survives_a_cut_at_every_byte_under_micropython(tmp_path):
    exe = micropython()
    script = tmp_path / "cuts.py"
    script.write_text('''
import os
from bunco_box.journal import Journal
j = Journal("j.log", os)
for i in range(3):
    j.append(0, ["roll", [1, 2, i + 1]])
with open("j.log", "rb") as f:
    whole = f.read()
j.append(0, ["tally", "bunco"])
with open("j.log", "rb") as f:
    after = f.read()
for cut in range(len(whole), len(after)):
    with open("j.log", "wb") as f:
        f.write(after[:cut])
    back = Journal("j.log", os)
    assert [e[0] for e in back.entries] == [1, 2, 3], (cut, back.entries)
    assert (len(back.problems) == 1) == (cut > len(whole)), (cut, back.problems)
    assert back.append(0, ["pass"]) == 4
print("cuts", len(after) - len(whole))
''')
    flash = tmp_path / "flash"
    flash.mkdir()
    from bunco_pi.pico import lay_out

    lay_out(flash)
    out = subprocess.run([exe, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         env={"MICROPYPATH": f"{flash}:{SIM}"}, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    # a cut at every byte of the fourth record was tried
    line = record_line({"s": 4, "r": 0, "x": ["tally", "bunco"]})
    assert out.stdout.split() == ["cuts", str(len(line))]


# --- the MQTT 3.1.1 client against the generated broker config (CPython runs it too) -------


def client(broker, user: str, password: str, **kw) -> mqtt.Client:
    def open_socket(host, port, timeout_s):
        return socket.create_connection((host, port), timeout=timeout_s)

    def ticks() -> int:
        return int(time.monotonic() * 1000)

    return mqtt.Client(open_socket, ticks, lambda a, b: a - b, user, user, password, **kw)


def test_an_mqtt_311_client_logs_in_as_its_table_beside_mqtt_5(broker, topics, make_link):
    watcher = make_link("watcher")
    watcher.subscribe(topics.everything())
    time.sleep(0.5)  # the watcher's subscription in place
    c = client(broker, "table-1", broker.credentials.password("table-1"),
               will_topic=topics.status("table-1"),
               will_message=envelope.message("table-1", {"status": "offline"}))
    c.connect(broker.host, broker.port)
    c.publish(topics.events(1), envelope.event("table-1", 1, 1, {"round": 0,
                                                                  "entry": ["pass"]}), qos=1)
    # its ACL: table 1 writes its own events, never another table's
    c.publish(topics.events(2), envelope.event("table-1", 2, 1, {"round": 0,
                                                                  "entry": ["pass"]}), qos=1)
    time.sleep(0.5)
    c.close()  # a power cut: no DISCONNECT, so the broker publishes the will
    got = [(m.topic, envelope.decode(m.topic, m.payload)) for m in collect(watcher.inbox, 2)
           if isinstance(m, Message)]
    topics_seen = [t for t, _ in got]
    assert topics.events(1) in topics_seen
    assert topics.events(2) not in topics_seen
    will = [e for t, e in got if t == topics.status("table-1")]
    assert will and will[-1].payload == {"status": "offline"}


def test_a_wrong_password_is_refused_in_one_line(broker):
    c = client(broker, "table-1", "wrong")
    with pytest.raises(mqtt.Refused) as refused:
        c.connect(broker.host, broker.port)
    assert str(refused.value) == "refused: not authorised (check the password)"


def test_the_shared_wire_form_is_the_rules_codec():
    from bunco_pi.protocol import encode_entry
    from bunco_pi.table.game import engine_entries

    for entry in ({"roll": [3, 3, 5]}, {"tally": "point"}, {"tally": "three", "face": 2},
                  {"tally": "wipeout"}, {"pass": True}, {"bell": True}, {"undo": 1}):
        (engine_entry,) = engine_entries(entry)
        assert presses.wire_entry(entry) == encode_entry(engine_entry)


# --- the box's side of the contract, against a scripted head ----------------------------------


def head_says(head, topic: str, payload: dict, retain: bool = True) -> None:
    head.publish(topic, envelope.message("head", {"v": 1, **payload}), qos=1, retain=retain)


PLAYING = {"phase": "playing", "round_index": 0, "set": 1, "round": 1, "target": 1,
           "bell": False, "epoch": "e1", "pos": 5}
VIEW = {"table": 2, "round_index": 0, "seats": ["Ann", "Bea", "Cat", "Dot"], "score": [0, 0],
        "roller_seat": 1, "done": False, "epoch": "e1", "pos": 5}


def test_buttons_bell_and_host_undo_go_out_as_the_pi_box_sends_them(tmp_path, broker, topics,
                                                                     make_link):
    micropython()
    head = make_link("head")
    head.subscribe(topics.events(2))
    head_says(head, topics.ack(2), {"seq": 0})
    box = PicoBox(tmp_path, table=2, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-2"))
    box.start()
    try:
        box.wait(lambda: box.view.get("screen") == "waiting", 10, "the waiting screen")
        box.tap("point")  # no round on: refused on screen, nothing stored
        box.wait(lambda: box.status() == "no round on: wait", 5, "the refusal")
        head_says(head, topics.state(), PLAYING)
        head_says(head, topics.view(2), VIEW)
        box.wait(box.wants_a_roll, 10, "the round on screen")
        assert box.view["roller"] == "Ann" and box.view["table"] == box.table
        for command in ("tap point", "tap three", "hold pass", "tap pass", "tap undo",
                        "tap bunco", "tap roll"):
            box.send(command)
        box.wait(lambda: len(box.stored) == 7, 15, "seven entries")
        # the head's bell: one Bell entered, however often the state says so
        head_says(head, topics.state(), {**PLAYING, "bell": True, "pos": 9})
        head_says(head, topics.state(), {**PLAYING, "bell": True, "pos": 10})
        # the host's undo, delivered twice: entered once
        for _ in range(2):
            head_says(head, topics.command(2), {"command": "undo", "id": 12, "round": 0},
                      retain=False)
        box.wait(lambda: len(box.stored) == 9, 10, "the bell and the host's undo")
        # this table's round is over at the head: a press is refused, not sent
        head_says(head, topics.ack(2), {"seq": 9})
        head_says(head, topics.view(2), {**VIEW, "done": True, "pos": 11})
        box.wait(lambda: box.view.get("screen") == "results", 10, "round over here")
        box.tap("point")
        box.wait(lambda: box.status() == "round over here", 5, "the refusal")
        # ...but an undo still goes, while the head's round is open: a mistaken last point
        # is taken back (the head reopens the table's round), as on the Pi box
        box.tap("undo")
        box.wait(lambda: len(box.stored) == 10, 10, "the undo after the table's play ended")
        got = events_of(head.inbox, 2, 2)
    finally:
        box.stop()
    first = {seq: entry for seq, entry in reversed(got)}
    assert {k: v for k, v in first.items() if k <= 7} == {
        1: ["tally", "point"], 2: ["tally", "three"], 3: ["tally", "wipeout"], 4: ["pass"],
        5: ["undo"], 6: ["tally", "bunco"], 7: ["roll", box.stored[6]["x"][1]]}
    # the bell and the host's undo came together: either may be entered first
    assert sorted([first[8], first[9]]) == [["bell"], ["undo"]]
    assert first[10] == ["undo"] and len(first) == 10 and len(box.stored) == 10


def test_the_box_says_what_it_holds_and_shows_an_entry_the_head_refused(tmp_path, broker, topics,
                                                                       make_link):
    """As the Pi box: a heartbeat on its own status topic says what the journal holds (the
    head's intake watch reads it), and a refusal in the head's ack is shown, never counted."""
    from bunco_pi.protocol import read_heartbeat

    micropython()
    head = make_link("head")
    head.subscribe(topics.status("table-2"))
    head_says(head, topics.ack(2), {"seq": 0})
    head_says(head, topics.state(), PLAYING)
    head_says(head, topics.view(2), VIEW)
    box = PicoBox(tmp_path, table=2, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-2"))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round on screen")
        box.tap("point")
        box.tap("point")
        box.wait(lambda: len(box.stored) == 2, 10, "two entries")
        # the head acknowledges 2 and says it refused 2 (logged, never counted)
        head_says(head, topics.ack(2), {"seq": 2, "refused": {"seq": 2, "reason": "not now"}})
        box.wait(lambda: box.status() == "head refused #2", 10, "the refusal on screen")
        assert "head refused #2: not now" in box.log_text()
        beats = []
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and not any(b.holds == 2 and b.acked == 2
                                                      for b in beats):
            for item in collect(head.inbox, 0.5):
                if isinstance(item, Message) and item.topic == topics.status("table-2"):
                    beat = read_heartbeat(envelope.decode(item.topic, item.payload).payload)
                    if beat is not None:
                        beats.append(beat)
    finally:
        box.stop()
    assert any(b.holds == 2 and b.acked == 2 and b.unacknowledged == 0 for b in beats), beats


def test_nothing_older_moves_the_box_back_and_a_reboot_keeps_the_round(tmp_path, broker,
                                                                       topics, make_link):
    micropython()
    head = make_link("head")
    head_says(head, topics.ack(3), {"seq": 0})
    head_says(head, topics.state(), PLAYING)
    head_says(head, topics.view(3), {**VIEW, "table": 3})
    box = PicoBox(tmp_path, table=3, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-3"))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round on screen")
        head_says(head, topics.state(), {**PLAYING, "phase": "results", "pos": 3})  # older
        time.sleep(1)
        assert box.wants_a_roll()
        box.tap("roll")  # never acknowledged: this scripted head commits nothing
        box.wait(lambda: len(box.stored) == 1, 10, "the roll stored")
    finally:
        box.kill()
    # a power cut, then no broker at all: the round kept in flash goes on, presses count
    config = json.loads((tmp_path / "box.json").read_text())
    (tmp_path / "box.json").write_text(json.dumps({**config, "broker_port": 9}))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round, from flash")
        box.tap("roll")
        box.wait(lambda: box.status() == "offline, 2 waiting", 10, "offline, 2 waiting")
    finally:
        box.stop()


def test_the_pico_board_layer_and_the_sh1106_driver_on_stand_in_hardware(tmp_path):
    exe = micropython()
    flash = tmp_path / "flash"
    flash.mkdir()
    from bunco_pi.pico import lay_out

    lay_out(flash)
    out = subprocess.run([exe, str(SIM / "board_check.py")], cwd=flash, capture_output=True,
                         text=True, env={"MICROPYPATH": f"{flash}:{flash / 'lib'}:{SIM}"},
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    from bunco_pi.hardware import pico_wiring

    pins = pico_wiring.load_pins()
    for gp in pins["BUTTONS"].values():  # every button: an input with the pull-up on
        assert f"PIN {gp} in pull-up" in lines
    assert f"I2C 0 {pins['SDA']} {pins['SCL']} 400000" in lines
    assert "PRESSED ['point', 'roll']" in lines
    assert lines.count("WIFI False") == 1 and "WLAN connect Hall secret" in lines
    assert "WIFI True" in lines and "PAGES 8 BYTES 128" in lines
    assert "COMMANDS b0 02 10" in lines and lines[-1] == "LIT True"
    # what went over I2C to the SH1106 is the Pi box's screen, pixel for pixel
    from bunco_pi.table import screens
    from tests.test_pico_screens import as_image, differing

    frame = bytes.fromhex(next(x for x in lines if x.startswith("FRAME "))[6:])
    expected = screens.render(screens.PlayingView(table=3, target=4, score_a=3, score_b=5,
                                                  roller="Ann", roller_team="A",
                                                  flash="+1 Ann"))
    assert differing(as_image(frame), expected) == 0


def test_the_firmware_speaks_the_protocol_version_of_the_head():
    from bunco_pi import protocol

    assert box.PROTOCOL_VERSION == protocol.PROTOCOL_VERSION == envelope.VERSION
    from bunco_pi.hardware import pico_wiring

    # every button the box reads is on the pin map the wiring is generated from
    assert set(box.ROLES) == set(pico_wiring.load_pins()["BUTTONS"])


def test_a_wifi_gone_quiet_is_found_by_the_keepalive_and_nothing_is_lost(tmp_path, broker,
                                                                        topics, make_link):
    """No connection closed, every byte dropped (a Wi-Fi gone quiet): the box finds out by its
    keepalive, says offline, keeps counting, and sends everything once the network is back;
    a host's undo sent meanwhile waits in its session."""
    from tests.conftest import CutProxy

    micropython()
    head = make_link("head")
    head.subscribe(topics.events(4))
    head_says(head, topics.ack(4), {"seq": 0})
    head_says(head, topics.state(), PLAYING)
    head_says(head, topics.view(4), {**VIEW, "table": 4})
    proxy = CutProxy(broker.port)
    box = PicoBox(tmp_path, table=4, night=topics.night, host=broker.host, port=proxy.port,
                  password=broker.credentials.password("table-4"))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round on screen")
        proxy.cut(silent=True)
        box.tap("roll")
        box.wait(lambda: box.status().startswith("offline"), 15, "offline on screen")
        box.tap("roll")
        box.tap("point")
        box.wait(lambda: box.status() == "offline, 3 waiting", 10, "offline, 3 waiting")
        # the host's undo while the box is away: kept in its session, entered when it is back
        head_says(head, topics.command(4), {"command": "undo", "id": 21, "round": 0},
                  retain=False)
        proxy.restore()
        box.wait(lambda: box.log_text().count("online: ") >= 2, 30, "back online")
        box.wait(lambda: len(box.stored) == 4, 15, "the host's undo")
        got = events_of(head.inbox, 4, 3)
    finally:
        box.stop()
        proxy.close()
    first = {seq: entry for seq, entry in reversed(got)}
    assert sorted(first) == [1, 2, 3, 4] and first[3] == ["tally", "point"]
    assert first[4] == ["undo"]
    assert [first[s] for s in (1, 2)] == [item["x"] for item in box.stored[:2]]


@pytest.mark.parametrize(("rules", "expected"), [
    # "Travel is rolling all 2s, unless we are rolling for 2s"
    ("individual", {1: True, 2: False, 3: True, 4: True, 5: True, 6: True}),
    ("classic", {1: False, 2: False, 3: False, 4: False, 5: False, 6: False}),
])
def test_the_head_tells_a_box_that_reads_no_rules_when_three_2s_travel(rules, expected):
    from bunco_pi.head.views import table_view
    from bunco_pi.rules.house import preset
    from bunco_pi.rules.night import StartRound
    from bunco_pi.sim.players import simulate_night

    seen: dict[int, bool] = {}

    def watch(night, event):  # the night as it is once the event is applied
        if isinstance(event, StartRound):
            seen.setdefault(night.target, table_view(night, 1)["twos_travel"])

    simulate_night(preset(rules), 8, seed=4, on_event=watch)
    assert seen == expected


def test_a_held_three_is_three_2s_where_the_head_says_they_travel(tmp_path, broker, topics,
                                                                  make_link):
    micropython()
    head = make_link("head")
    head.subscribe(topics.events(1))
    head_says(head, topics.ack(1), {"seq": 0})
    head_says(head, topics.state(), PLAYING)
    head_says(head, topics.view(1), {**VIEW, "table": 1, "twos_travel": True})
    box = PicoBox(tmp_path, table=1, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-1"))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round on screen")
        box.send("hold three")
        box.wait(lambda: len(box.stored) == 1, 10, "three 2s")
        box.send("tap three")  # a tap of a waiting button: a plain three, on release
        box.wait(lambda: len(box.stored) == 2, 10, "a three")
        head_says(head, topics.view(1), {**VIEW, "table": 1, "twos_travel": False, "pos": 6})
        time.sleep(0.5)
        box.send("hold three")  # no traveler on 2s this round: counts at once, held or not
        box.wait(lambda: len(box.stored) == 3, 10, "a three")
        time.sleep(1.5)
    finally:
        box.stop()
    assert [item["x"] for item in box.stored] == [["tally", "three", 2], ["tally", "three"],
                                                  ["tally", "three"]]
    assert any("three 2s: travel! Ann" in line for line in box.lines)
