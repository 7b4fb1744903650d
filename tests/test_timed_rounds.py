"""Timed rounds: the house rules' keys, the engine's clock events, the audit's checks and the
head's timer (its deadline logged, the warning, the horn, a pause, the move break, a restart)."""

import copy
import random

import pytest

from bunco_pi.errors import UserError
from bunco_pi.head.coordinator import Buzz, Commit, Coordinator, PublishState
from bunco_pi.head.views import timer_of
from bunco_pi.protocol import TableEvent, encode_entry
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import (
    PRESET_NAMES,
    parse_rules,
    preset,
    preset_text,
    with_timed_rounds,
)
from bunco_pi.rules.night import (
    Night,
    PauseClock,
    ResumeClock,
    StartClock,
    StartRound,
    TableEntry,
    TimeUp,
)
from bunco_pi.rules.record import build_record, decode_event, encode_event
from bunco_pi.rules.table_round import Bell, Pass, Roll, RuleViolation, Tally
from bunco_pi.sim.players import make_players, simulate_night

TIMED = """name = "charity"
[round]
minutes = 3
ends_by = "{ends_by}"
warn_seconds = 30
at_horn = "{at_horn}"
move_seconds = 120
"""


def timed(at_horn="finish-roll", ends_by="time", base="classic"):
    return with_timed_rounds(preset(base), 3, at_horn=at_horn, ends_by=ends_by,
                             move_seconds=120)


# --- the house rules ----------------------------------------------------------------------------


def test_a_timed_round_reads_from_the_round_section():
    rules = parse_rules(TIMED.format(ends_by="time-or-goal", at_horn="stop"))
    r = rules.round
    assert (r.minutes, r.ends_by, r.warn_seconds, r.at_horn, r.move_seconds) == \
        (3.0, "time-or-goal", 30, "stop", 120)
    assert r.timed and r.goal_ends


@pytest.mark.parametrize(("text", "line", "says"), [
    ("[round]\nminutes = -1\nends_by = \"time\"\n", 2, "'round.minutes' must be a number of "
     "minutes from 0 to 180, got -1"),
    ("[round]\nminutes = 3\nends_by = \"time\"\nat_horn = \"later\"\n", 4,
     "'round.at_horn' must be one of \"finish-roll\", \"stop\""),
    ("[round]\nminutes = 1\nends_by = \"time\"\nwarn_seconds = 60\n", 4,
     "'round.warn_seconds' (60) must be shorter than the round (1 minutes)"),
    ("[round]\nends_by = \"time\"\n", 2, "needs 'round.minutes' above 0"),
    ("[round]\nminutes = 3\n", 2, "'round.ends_by' must be \"time\" or \"time-or-goal\""),
    ("[round]\nmove_seconds = 60\n", 2, "'round.move_seconds' needs a timed round"),
    ("[round]\nminutes = 3\nends_by = \"time\"\nmove_seconds = \"2m\"\n", 4,
     "'round.move_seconds' must be a whole number"),
])
def test_a_bad_timing_value_is_one_line_naming_file_and_line(text, line, says):
    with pytest.raises(UserError) as err:
        parse_rules('name = "x"\n' + text, "hall.toml")
    message = str(err.value)
    assert message.startswith(f"hall.toml:{line + 1}: ") and says in message
    assert "\n" not in message


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_no_preset_times_its_rounds(name):
    """None of the four texts speaks of a round's time: each round ends at the head table's goal,
    e.g. 002: "The round is over when the HIGH table reaches 21 points, they ring the bell and
    the round is over for everyone." So each preset's rounds are untimed."""
    rules = preset(name)
    assert rules.round.minutes == 0 and rules.round.ends_by == "goal"
    assert not rules.round.timed and rules.round.move_seconds == 0
    assert "minutes" not in preset_text(name)


def test_sim_minutes_checks_its_values_as_a_file_would():
    with pytest.raises(UserError, match=r"--minutes: 'round.minutes' must be"):
        with_timed_rounds(preset("classic"), 500)
    assert with_timed_rounds(preset("classic"), 3).name == "classic, timed 3 min"


# --- the engine -------------------------------------------------------------------------------


def one_table(rules):
    players = make_players(4)
    night = Night.start(rules, players, [tuple(p.id for p in players)])
    return night.apply(StartRound()).apply(StartClock("round", 100.0, 280.0))


def test_the_time_alone_ends_a_round_the_goal_does_not():
    night = one_table(timed())
    for _ in range(3):  # three buncos of ones: 63 points, well past the goal
        night = night.apply(TableEntry(1, Roll((1, 1, 1))))
    assert not night.bell_rung and night.phase == "playing"
    with pytest.raises(RuleViolation, match="before the deadline"):
        night.apply(TimeUp(279.0))
    night = night.apply(TimeUp(280.2))
    assert night.bell_rung and night.phase == "finishing" and night.clock is None


def test_whichever_comes_first_the_goal_stops_the_clock():
    night = one_table(timed(ends_by="time-or-goal"))
    night = night.apply(TableEntry(1, Roll((1, 1, 1))))  # a bunco at the head table
    assert night.bell_rung and night.clock is None
    with pytest.raises(RuleViolation, match="cannot happen while the night is 'finishing'"):
        night.apply(TimeUp(300.0))


def test_at_horn_stop_counts_nothing_after_the_horn():
    night = one_table(timed(at_horn="stop"))
    night = night.apply(TableEntry(1, Roll((1, 2, 3))))  # 1 point: her turn goes on
    night = night.apply(TimeUp(280.0)).apply(TableEntry(1, Bell()))
    table = night.table(1)
    assert table.done  # 1 - 0: decided at once
    with pytest.raises(RuleViolation, match="the round is over at this table"):
        night.apply(TableEntry(1, Roll((1, 1, 2))))


def test_at_horn_finish_roll_counts_the_roll_in_hand_and_no_more():
    night = one_table(timed(at_horn="finish-roll"))
    night = night.apply(TableEntry(1, Roll((1, 2, 3))))
    night = night.apply(TimeUp(280.0)).apply(TableEntry(1, Bell()))
    assert night.table(1).phase == "last-roll"
    night = night.apply(TableEntry(1, Roll((1, 1, 4))))  # the roll in hand: 2 more points
    table = night.table(1)
    assert table.done and table.seat_points[0] == 3
    with pytest.raises(RuleViolation):
        night.apply(TableEntry(1, Roll((1, 1, 1))))


def test_at_horn_finish_roll_by_buttons_lasts_until_the_pass():
    night = one_table(timed(at_horn="finish-roll"))
    night = night.apply(TimeUp(280.0)).apply(TableEntry(1, Bell()))
    night = night.apply(TableEntry(1, Tally("point"))).apply(TableEntry(1, Tally("point")))
    assert not night.table(1).done  # a roll may take several presses
    night = night.apply(TableEntry(1, Pass()))
    assert night.table(1).done and night.table(1).seat_points[0] == 2


def test_in_a_timed_round_the_goal_table_gets_no_extra_rolls_either():
    """core's "Every player gets at least one roll per round" is the untimed round's: in a timed
    round at_horn decides the end of play, at the goal's bell too."""
    rules = timed(ends_by="time-or-goal", at_horn="stop", base="core")
    assert rules.round.every_player_rolls
    night = one_table(rules)
    night = night.apply(TableEntry(1, Roll((1, 1, 1))))  # seat 1's bunco: the head table's goal
    assert night.bell_rung and night.table(1).done  # 21 - 0, nobody else rolls
    untimed = Night.start(preset("core"), make_players(4), [("p1", "p2", "p3", "p4")])
    untimed = untimed.apply(StartRound()).apply(TableEntry(1, Roll((1, 1, 1))))
    assert untimed.table(1).phase == "extra"


def test_a_pause_moves_the_deadline_by_its_length():
    night = one_table(timed())
    night = night.apply(PauseClock(150.0))
    assert night.clock.left(999.0) == 130.0  # a paused clock stands still
    with pytest.raises(RuleViolation, match="no running clock"):
        night.apply(PauseClock(151.0))
    night = night.apply(ResumeClock(190.0, 320.0))
    assert night.clock.deadline == 320.0 and night.clock.left(300.0) == 20.0
    with pytest.raises(RuleViolation, match="before the deadline"):
        night.apply(TimeUp(300.0))


def test_a_round_clock_must_be_the_rules_length():
    players = make_players(4)
    night = Night.start(timed(), players, [tuple(p.id for p in players)]).apply(StartRound())
    with pytest.raises(RuleViolation, match="a round clock of 180 s"):
        night.apply(StartClock("round", 0.0, 120.0))
    untimed = Night.start(preset("classic"), players, [tuple(p.id for p in players)])
    with pytest.raises(RuleViolation, match="not timed"):
        untimed.apply(StartRound()).apply(StartClock("round", 0.0, 180.0))


@pytest.mark.parametrize("event", [StartClock("move", 1.5, 121.5), PauseClock(2.25),
                                   ResumeClock(3.0, 200.0), TimeUp(4.0),
                                   TimeUp(5.0, late=True)])
def test_clock_events_round_trip_through_the_record_codec(event):
    assert decode_event(encode_event(event)) == event


# --- the audit ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("base", "at_horn"), [("classic", "finish-roll"), ("classic", "stop"),
                                               ("individual", "finish-roll"),
                                               ("individual", "stop"), ("core", "finish-roll")])
def test_a_simulated_timed_night_audits_clean(base, at_horn):
    rules = timed(at_horn=at_horn, base=base)
    sim = simulate_night(rules, 24, seed=7)
    record = build_record(sim.night, sim.log, seed=7)
    assert audit_record(record, rules) == []
    kinds = [encode_event(e)[0] for e in sim.log]
    assert kinds.count("time-up") == rules.rounds_per_night  # the time alone ends each round
    assert kinds.count("clock") == rules.rounds_per_night * 2 - 1  # and a move break after all
    assert kinds.count("pause") == kinds.count("resume")
    if base == "classic":  # 24 rounds: the seeded announcements pause some
        assert "pause" in kinds
    # the night replays from its log: rounds end where they ended
    assert Night.replay(rules, make_players(24), [tuple(t["seats"]) for t in
                        record["rounds"][0]["tables"]], sim.log).history == sim.night.history


def _timed_record(at_horn="finish-roll"):
    rules = timed(at_horn=at_horn)
    sim = simulate_night(rules, 12, seed=3)
    return rules, build_record(sim.night, sim.log, seed=3)


def test_the_audit_names_a_horn_before_the_deadline():
    rules, record = _timed_record()
    log = record["log"]
    at = next(i for i, e in enumerate(log) if e[0] == "time-up")
    log[at] = ["time-up", log[at][1] - 10.0]
    problems = audit_record(record, rules)
    assert any(f"the horn (log entry {at}) sounded 10.000 s before the deadline" in p
               for p in problems), problems


def test_the_audit_names_a_late_horn_not_marked_late_and_a_resume_that_moves_too_far():
    rules, record = _timed_record()
    log = record["log"]
    at = next(i for i, e in enumerate(log) if e[0] == "time-up")
    log[at] = ["time-up", log[at][1] + 30.0]
    resume = next(i for i, e in enumerate(log) if e[0] == "resume")
    log[resume] = ["resume", log[resume][1], log[resume][2] + 5.0]
    problems = audit_record(record, rules)
    assert any(f"the horn (log entry {at}) sounded 30.0 s after the deadline and is not "
               "marked late" in p for p in problems), problems
    assert any(f"log entry {resume}: the clock resumed to end at" in p for p in problems)
    log[at].append("late")
    assert not any("not marked late" in p for p in audit_record(record, rules))


def test_the_audit_names_a_round_clock_of_the_wrong_length():
    rules, record = _timed_record()
    log = record["log"]
    at = next(i for i, e in enumerate(log) if e[:2] == ["clock", "round"])
    log[at] = ["clock", "round", log[at][2], log[at][2] + 240.0]
    assert any("the round clock (log entry" in p and "runs 240 s, the rules say 3 minutes" in p
               for p in audit_record(record, rules))


def test_the_audit_names_a_move_clock_during_a_round():
    rules, record = _timed_record()
    log = record["log"]
    at = next(i for i, e in enumerate(log) if e[:2] == ["clock", "round"])
    log[at] = ["clock", "move", log[at][2], log[at][2] + 120.0]
    problems = audit_record(record, rules)
    assert any(f"log entry {at}: a move clock during a round" in p for p in problems), problems


@pytest.mark.parametrize("at_horn", ["stop", "finish-roll"])
def test_the_audit_names_a_roll_counted_after_the_horn(at_horn):
    """An engine that counted one roll too many after a table heard the horn: the record's
    rolls say so, whatever the log's replay makes of it."""
    rules, record = _timed_record(at_horn)
    log = record["log"]
    bell = next(i for i, e in enumerate(log) if e[0] == "bell")
    table = log[bell][1]
    rnd = record["rounds"][0]
    rolls = next(t for t in rnd["tables"] if t["table"] == table)["rolls"]
    extra = copy.deepcopy(rolls[-1])
    extra.update(at=bell + 1, rolloff=False, dice=[2, 3, 4])
    rolls.append(dict(extra))
    rolls.append(dict(extra, at=bell + 2))
    problems = audit_record(record, rules)
    assert any("counted after the table heard the horn" in p for p in problems), problems


# --- the head's timer ----------------------------------------------------------------------------


class Wall:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


class Head:
    def __init__(self, rules, wall, players=8):
        self.rules, self.wall = rules, wall
        self.tables = players // 4
        self.coord = self._coordinator()
        self.records, self.effects = [], []
        self.seq = dict.fromkeys(range(1, self.tables + 1), 0)
        self.keep(self.coord.start_night(make_players(players)))

    def _coordinator(self):
        return Coordinator(self.rules, "", "timed", self.tables, entropy=random.Random(1),
                           wall=self.wall)

    def keep(self, effects):
        for effect in effects:
            if isinstance(effect, Commit):
                self.records.extend(effect.records)
        self.effects.extend(effects)
        return effects

    def send(self, table, entry):
        self.seq[table] += 1
        event = TableEvent(table, self.seq[table], self.coord.night.round_index, entry)
        self.records.append({"kind": "table", "table": table, "seq": event.seq,
                             "round": event.round_index, "entry": encode_entry(entry)})
        return self.keep(self.coord.accept([event]))

    def restarted(self):
        """A new head from the same log, as after a SIGKILL."""
        head = copy.copy(self)
        head.coord = self._coordinator()
        head.effects = []
        head.keep(head.coord.restore(list(self.records)))
        return head


def quiet(effects):
    """Nothing sounded and nothing logged (the state may be said again, with the time left)."""
    return not [e for e in effects if isinstance(e, Buzz | Commit)]


def logged(head, kind):
    return [r["event"] for r in head.records if r["kind"] == "night" and r["event"][0] == kind]


def test_the_head_logs_the_deadline_warns_and_sounds_the_horn():
    wall = Wall()
    head = Head(timed(), wall)
    head.keep(head.coord.press_bell())
    assert logged(head, "clock") == [["clock", "round", wall.now, wall.now + 180.0]]
    state = head.coord.state()
    assert state["timer"] == {"phase": "round", "left": 180.0, "total": 180.0}
    wall.now += 149.0
    assert quiet(head.coord.tick())
    wall.now += 2.0
    effects = head.keep(head.coord.tick())
    assert Buzz("warn") in effects
    warned = [e.state for e in effects if isinstance(e, PublishState)][0]
    assert warned["timer"]["phase"] == "warn" and warned["timer"]["left"] == 29.0
    assert quiet(head.coord.tick())  # the warning sounds once
    wall.now += 29.5
    effects = head.keep(head.coord.tick())
    assert Buzz("time-up") in effects
    assert logged(head, "time-up") == [["time-up", 1_000_000.0 + 180.5]]
    states = [e.state for e in effects if isinstance(e, PublishState)]
    assert states[-1]["bell"] is True and "timer" not in states[-1]


def test_the_state_is_said_again_while_a_clock_runs():
    wall = Wall()
    head = Head(timed(), wall)
    head.keep(head.coord.press_bell())
    wall.now += 5
    assert quiet(head.coord.tick()) and not head.coord.tick()
    wall.now += 6
    said = [e.state["timer"] for e in head.coord.tick() if isinstance(e, PublishState)]
    assert said == [{"phase": "round", "left": 169.0, "total": 180.0}]


def test_a_pause_is_logged_and_moves_the_deadline():
    wall = Wall()
    head = Head(timed(), wall)
    head.keep(head.coord.press_bell())
    start = wall.now
    wall.now += 60
    effects = head.keep(head.coord.pause_clock())
    assert [e.state["timer"] for e in effects if isinstance(e, PublishState)] == \
        [{"phase": "pause", "left": 120.0, "total": 180.0}]
    wall.now += 300  # announcements: the deadline passes on the wall, not on the clock
    assert quiet(head.coord.tick())
    head.keep(head.coord.resume_clock())
    assert logged(head, "pause") == [["pause", start + 60]]
    assert logged(head, "resume") == [["resume", start + 360, start + 480]]
    wall.now += 119
    assert not any(isinstance(e, Buzz) and e.pattern == "time-up" for e in head.coord.tick())
    wall.now += 1
    assert Buzz("time-up") in head.coord.tick()


def test_a_restart_keeps_the_deadline_and_ends_a_round_that_ran_out_while_down():
    wall = Wall()
    head = Head(timed(), wall)
    head.keep(head.coord.press_bell())
    deadline = wall.now + 180
    wall.now += 100
    back = head.restarted()  # the head restarted mid-round: the same deadline
    assert back.coord.night.clock.deadline == deadline
    assert back.coord.state()["timer"]["left"] == 80.0
    assert quiet(back.coord.tick())
    wall.now += 200  # down again, past the deadline
    again = head.restarted()
    effects = again.keep(again.coord.tick())
    assert Buzz("time-up") in effects
    assert logged(again, "time-up") == [["time-up", deadline + 120, "late"]]


def test_the_move_break_starts_the_next_round_by_itself():
    wall = Wall()
    head = Head(timed(at_horn="stop"), wall)
    head.keep(head.coord.press_bell())
    for table in (1, 2):  # seat 1's team leads at both tables: no roll-off
        head.send(table, Roll((1, 2, 3)))
    wall.now += 180
    head.keep(head.coord.tick())
    for table in (1, 2):
        head.send(table, Bell())
    night = head.coord.night
    assert night.phase == "results"
    assert night.clock.phase == "move" and night.clock.deadline == wall.now + 120
    assert timer_of(night, wall.now + 20) == {"phase": "move", "left": 100.0, "total": 120.0}
    wall.now += 120
    effects = head.keep(head.coord.tick())
    assert head.coord.night.phase == "playing" and head.coord.night.round_index == 1
    assert Buzz("round-start") in effects
    assert logged(head, "clock")[-1] == ["clock", "round", wall.now, wall.now + 180]
    record = head.coord.record()
    assert audit_record(record, head.rules) == []


# --- the head's shell: its loop ticks the clock; another thread pauses it through the inbox ---


def test_the_heads_loop_sounds_the_clock_and_takes_a_pause_from_its_inbox(tmp_path):
    import threading
    import time
    import uuid

    from bunco_pi.hardware.bell import BellPressed
    from bunco_pi.head.eventlog import EventLog
    from bunco_pi.head.service import ClockRequested, HeadService
    from bunco_pi.net import envelope
    from bunco_pi.net.inproc import InprocBroker
    from bunco_pi.net.link import Message
    from bunco_pi.net.topics import Topics

    rules, wall = timed(), Wall()
    broker = InprocBroker()
    topics = Topics(f"t{uuid.uuid4().hex[:6]}")
    coord = Coordinator(rules, "", topics.night, 2, entropy=random.Random(1), wall=wall)
    link = broker.link("head")
    watcher = broker.link("table-1")
    watcher.subscribe(topics.state())
    watcher.start()
    buzzes: list[str] = []
    stop, ready = threading.Event(), threading.Event()

    def run():
        with EventLog(tmp_path / "head.sqlite") as log:
            service = HeadService(coord, link, log, topics, make_players(8), buzz=buzzes.append)
            service.start()
            ready.set()
            while not stop.is_set():
                service.step(timeout=0.02)
            link.stop()

    def timers():
        return [envelope.decode(m.topic, m.payload).payload.get("timer")
                for m in list(seen) if m.topic == topics.state()]

    seen: list[Message] = []

    def until(test, what):
        deadline = time.monotonic() + 10
        while not test():
            assert time.monotonic() < deadline, what
            while not watcher.inbox.empty():
                item = watcher.inbox.get_nowait()
                if isinstance(item, Message):
                    seen.append(item)
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(5)
    try:
        link.inbox.put(BellPressed())  # the night starts
        until(lambda: coord.night is not None, "the night")
        time.sleep(0.6)
        link.inbox.put(BellPressed())  # round 1, and its clock
        until(lambda: any(t and t["phase"] == "round" for t in timers()), "the round's timer")
        assert buzzes == ["round-start"]
        wall.now += 60
        link.inbox.put(ClockRequested(pause=True))
        until(lambda: any(t and t["phase"] == "pause" for t in timers()), "the pause")
        assert [t for t in timers() if t and t["phase"] == "pause"][-1]["left"] == 120.0
        wall.now += 500  # the deadline passes on the wall: a paused clock waits
        time.sleep(0.2)
        assert "time-up" not in buzzes
        link.inbox.put(ClockRequested(pause=False))
        until(lambda: timers()[-1] and timers()[-1]["phase"] == "round", "the resume")
        wall.now += 95
        until(lambda: "warn" in buzzes, "the warning")
        wall.now += 25
        until(lambda: "time-up" in buzzes, "the horn")
        until(lambda: timers()[-1] is None, "the state without a clock")
    finally:
        stop.set()
        thread.join(5)
        watcher.stop()
    with EventLog(tmp_path / "head.sqlite") as log:
        kinds = [e.payload["event"][0] for e in log.replay()
                 if e.table == 0 and e.payload.get("kind") == "night"]
    assert kinds == ["start", "clock", "pause", "resume", "time-up"]
    assert buzzes == ["round-start", "warn", "time-up"]


def test_the_heads_wall_clock_does_not_jump_mid_round(monkeypatch):
    import time as real_time

    from bunco_pi.head.coordinator import steady_wall

    walls, monos = iter([1000.0, 5000.0]), iter([50.0, 60.0])
    monkeypatch.setattr(real_time, "time", lambda: next(walls))
    monkeypatch.setattr(real_time, "monotonic", lambda: next(monos))
    wall = steady_wall()  # read at 1000.0 (monotonic 50)
    assert wall() == 1010.0  # 10 s on, though the wall clock jumped to 5000
