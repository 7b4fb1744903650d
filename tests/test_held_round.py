"""The host's way out: holding the bell closes a round that a dead table holds up, counted by
``round.held_table``; the close is an event of the night, so record, replay and audit agree."""

from __future__ import annotations

import json

import pytest

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.rules.night import (
    PLAYING,
    READY,
    RESULTS,
    CloseHeldRound,
    CloseRound,
    NextRound,
    Night,
    Player,
    StartRound,
    TableEntry,
    standing_result,
)
from bunco_pi.rules.record import build_record, decode_event, encode_event, replay
from bunco_pi.rules.rotation import TableOutcome, next_seating
from bunco_pi.rules.table_round import Bell, Roll, RuleViolation

PLAYERS = [Player(f"p{i}", f"P{i}") for i in range(1, 13)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "p8"), ("p9", "p10", "p11", "p12")]


def rules(held: str, base: str = "classic"):
    text = preset_text(base)
    assert 'held_table = "as-it-stands"' in text  # every preset sets the key
    return parse_rules(text.replace('held_table = "as-it-stands"', f'held_table = "{held}"'))


class Driver:
    def __init__(self, rules):
        self.rules = rules
        self.night = Night.start(rules, PLAYERS, SEATING)
        self.log: list = []

    def __call__(self, *events):
        for e in events:
            self.night = self.night.apply(e)
            self.log.append(e)
        return self.night

    def roll(self, table, *rolls):
        return self(*(TableEntry(table, Roll(d)) for d in rolls))

    def round_with_table_3_dead(self, table_3_rolls=((1, 4, 5),)):
        """The head table ends round 1 with a bunco; table 2 finishes its turn; table 3 rolled
        what it rolled, then its box died."""
        self(StartRound())
        self.roll(3, *table_3_rolls)
        self.roll(2, (1, 1, 3), (2, 3, 4))  # p5 scores 2 then misses: p6 is up
        self.roll(1, (1, 1, 1))  # bunco at the head table: the bell rings
        self(TableEntry(2, Bell()))  # p6 had not rolled yet: table 2 is done
        assert self.night.table(1).done and self.night.table(2).done
        assert not self.night.table(3).done


def audited(d: Driver) -> dict:
    record = json.loads(json.dumps(build_record(d.night, d.log)))
    assert replay(record, d.rules) == d.night
    assert audit_record(record, d.rules) == []
    return record


def test_the_round_waits_for_a_dead_table_until_the_host_holds_the_bell():
    d = Driver(rules("as-it-stands"))
    d.round_with_table_3_dead()
    with pytest.raises(RuleViolation, match="tables 3"):
        d(CloseRound())
    d(CloseHeldRound())
    assert d.night.phase == RESULTS
    held = d.night.history[-1].tables[2]
    assert held.held == "as-it-stands" and held.team_scores == (1, 0)
    assert held.winners == ("p9", "p11") and held.losers == ("p10", "p12")
    # its scores as they stand: the point and the win count on the cards
    assert d.night.cards["p9"].points == 1 and d.night.cards["p9"].wins == 1
    assert d.night.cards["p10"].losses == 1
    finished = [TableOutcome(t.seats, t.winners, t.losers) for t in d.night.history[-1].tables]
    assert d.night.next_seats == next_seating(d.rules, finished)[0]  # everyone rotates
    record = audited(d)
    assert record["rounds"][0]["tables"][2]["held"] == "as-it-stands"
    assert "held" not in record["rounds"][0]["tables"][0]
    assert ["close-held"] in record["log"]


def test_no_result_leaves_its_four_players_cards_alone_and_in_their_seats():
    d = Driver(rules("no-result"))
    d.round_with_table_3_dead()
    d(CloseHeldRound())
    held = d.night.history[-1].tables[2]
    assert held.held == "no-result" and held.winners == () and held.losers == ()
    for p in ("p9", "p10", "p11", "p12"):
        card = d.night.cards[p]
        assert (card.points, card.wins, card.losses) == (0, 0, 0)
    assert d.night.next_seats[2] == SEATING[2]  # they sit out the rotation
    two = [TableOutcome(t.seats, t.winners, t.losers) for t in d.night.history[-1].tables[:2]]
    assert d.night.next_seats[:2] == next_seating(d.rules, two)[0]  # the others rotate
    audited(d)


def test_a_tie_as_it_stands_is_no_result_since_nobody_is_left_to_roll_it_off():
    d = Driver(rules("as-it-stands"))
    d.round_with_table_3_dead(table_3_rolls=((2, 3, 4),))  # 0 to 0
    d(CloseHeldRound())
    held = d.night.history[-1].tables[2]
    assert held.winners == () and held.held == "as-it-stands"
    assert d.night.next_seats[2] == SEATING[2]
    audited(d)


def test_the_night_goes_on_and_a_late_entry_of_the_closed_round_changes_nothing():
    d = Driver(rules("as-it-stands"))
    d.round_with_table_3_dead()
    d(CloseHeldRound())
    with pytest.raises(RuleViolation, match="results"):  # the head logs it and refuses it
        d.night.apply(TableEntry(3, Roll((1, 1, 1))))
    d(NextRound(), StartRound())
    assert d.night.phase == PLAYING and d.night.round_index == 1
    closed = d.night.history[-1]
    # table 3 is back with a new box: it plays the new round like everyone else
    d.roll(3, (2, 2, 2))
    assert d.night.table(3).team_scores == (21, 0) and d.night.history[-1] == closed
    audited(d)


def test_the_host_cannot_close_a_round_that_is_not_held_up():
    d = Driver(rules("as-it-stands"))
    with pytest.raises(RuleViolation, match="ready"):
        d(CloseHeldRound())
    assert d.night.phase == READY


def test_the_close_is_an_event_of_its_own_in_the_log():
    assert encode_event(CloseHeldRound()) == ["close-held"]
    assert decode_event(["close-held"]) == CloseHeldRound()


def test_individual_play_counts_the_lowest_as_it_stands():
    r = rules("as-it-stands", "individual")
    night = Night.start(r, PLAYERS, SEATING).apply(StartRound())
    table = night.apply(TableEntry(3, Roll((1, 1, 4)))).table(3)  # p9 2 points, others 0
    assert standing_result(table) == ((), ())  # three share the lowest score: no result
    table = table.apply(Roll((2, 3, 4))).apply(Roll((1, 5, 6))).apply(Roll((2, 3, 4)))
    table = table.apply(Roll((1, 2, 3))).apply(Roll((2, 3, 4)))  # p10 1, p11 1, p12 0
    assert standing_result(table) == (("p9", "p10", "p11"), ("p12",))


# --- the head's coordinator: the host holds the bell, the night goes on --------------------


class Head:
    """The coordinator as the head's shell drives it: table entries committed first (as the
    event log does), then ``accept``; the host's bell; every committed record kept."""

    def __init__(self, held: str, seed: int = 1) -> None:
        from bunco_pi.head.coordinator import Commit, Coordinator
        from bunco_pi.sim.players import make_players

        self.Commit = Commit
        self.text = preset_text("classic").replace(
            'held_table = "as-it-stands"', f'held_table = "{held}"').replace(
            "sets = 4", "sets = 1").replace("break_after_sets = [2]", "break_after_sets = []")
        self.rules = parse_rules(self.text)
        self.coord = Coordinator(self.rules, self.text, "held", 3,
                                 entropy=__import__("random").Random(seed))
        self.records: list[dict] = []
        self.seq = dict.fromkeys((1, 2, 3), 0)
        self.keep(self.coord.start_night(make_players(12)))

    def keep(self, effects):
        for effect in effects:
            if isinstance(effect, self.Commit):
                self.records.extend(effect.records)
        return effects

    def send(self, table, entry, round_index=None):
        from bunco_pi.protocol import TableEvent, encode_entry

        self.seq[table] += 1
        index = self.coord.night.round_index if round_index is None else round_index
        event = TableEvent(table, self.seq[table], index, entry)
        self.records.append({"kind": "table", "table": table, "seq": event.seq,
                             "round": index, "entry": encode_entry(entry)})
        return self.keep(self.coord.accept([event]))


@pytest.mark.parametrize("held", ["as-it-stands", "no-result"])
def test_a_table_dead_for_three_rounds_then_back_the_night_completes_and_replays(held):
    import random

    from bunco_pi.head.coordinator import Buzz, Coordinator, Note

    h = Head(held)
    rng = random.Random(7)
    late = None
    while not h.coord.ended:
        h.keep(h.coord.press_bell())
        night = h.coord.night
        if night.phase != PLAYING:
            continue
        index = night.round_index
        dead = {3} if 1 <= index <= 3 else set()
        if index == 1:  # table 3 rolls once in round 2, then its box dies
            h.send(3, Roll((2, 2, 3)))
        heard = set()
        for _ in range(2000):
            night = h.coord.night
            if night.phase not in (PLAYING, "finishing"):
                break
            live = [t.setup.table for t in night.tables if not t.done and t.setup.table not in dead]
            if not live:
                before = len(h.records)
                effects = h.keep(h.coord.close_held_round())  # the host holds the bell
                assert Buzz("round-end") in effects
                assert h.records[before:][0] == {"kind": "night", "event": ["close-held"]}
                assert any(isinstance(e, Note) and "table" in e.text for e in effects)
                break
            table = rng.choice(live)
            h.send(table, Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))))
            if h.coord.night.bell_rung:
                for t in h.coord.night.tables:
                    if (not t.bell and not t.done and t.setup.table not in heard
                            and t.setup.table not in dead):
                        heard.add(t.setup.table)
                        h.send(t.setup.table, Bell())
        if index == 3 and late is None:
            # table 3 is back: its outbox resends an entry of round 2, closed since
            closed = h.coord.night.history
            effects = h.send(3, Roll((3, 3, 3)), round_index=1)
            assert any(isinstance(e, Note) and "refused" in e.text for e in effects)
            assert h.coord.night.history == closed
            late = True
    night = h.coord.night
    held_tables = [(r.round, t.table) for r in night.history for t in r.tables if t.held]
    assert held_tables == [(2, 3), (3, 3), (4, 3)]
    assert h.coord.close_held_round()[0].text.startswith("holding the bell closes a round")
    record = h.coord.record()
    assert audit_record(json.loads(json.dumps(record)), h.rules) == []
    assert replay(record, h.rules) == night
    again = Coordinator(h.rules, h.text, "held", 3)
    again.restore(h.records)
    assert again.night == night and again.log == h.coord.log
    for before, after in zip(night.history, night.history[1:], strict=False):
        for t in before.tables:
            if t.held == "no-result" or (t.held and not t.winners):
                assert t.winners == t.losers == ()
                assert after.tables[t.table - 1].seats == t.seats  # they sat out the moves
    if held == "no-result":
        sat_out = {p for r in night.history for t in r.tables if t.held for p in t.seats}
        rounds_at_result = {p: sum(1 for r in night.history for t in r.tables
                                   if p in t.seats and not t.held) for p in night.cards}
        for p in sat_out & set(night.cards):
            card = night.cards[p]
            assert card.wins + card.losses == rounds_at_result[p] < len(night.history)


# --- the head's shell: the bell held down, or close_held_round() from another thread --------


def test_the_bell_held_on_its_pin_and_close_held_round_take_the_same_path(tmp_path,
                                                                          mock_factory):
    import threading
    import time

    from bunco_pi.hardware.bell import BellButton
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.eventlog import EventLog
    from bunco_pi.head.service import HeadService, make_players
    from bunco_pi.net.inproc import InprocBroker, InprocLink
    from bunco_pi.net.topics import Topics

    now = [100.0]
    text = preset_text("classic")
    coord = Coordinator(parse_rules(text), text, "g", 2,
                        entropy=__import__("random").Random(1))
    buzzed: list[str] = []
    with EventLog(tmp_path / "g.sqlite") as log:
        service = HeadService(coord, InprocLink(InprocBroker(), "head"), log, Topics("g"),
                              make_players(None, 8, 2), clock=lambda: now[0],
                              buzz=buzzed.append)
        service.start()
        bell = BellButton(16, service.link.inbox, hold_time=0.1)
        try:
            def press() -> None:
                now[0] += 5
                service.press_bell()

            press()
            press()  # the night, then round 1
            assert coord.night.phase == PLAYING
            # a web console's thread asks; the service's own loop does it
            asker = threading.Thread(target=service.close_held_round)
            asker.start()
            asker.join(5)
            assert coord.night.phase == PLAYING  # nothing happens off the loop
            service.step(timeout=1)
            assert coord.night.phase == RESULTS and buzzed[-1] == "round-end"
            assert [t.held for t in coord.night.history[-1].tables] == ["as-it-stands"] * 2
            press()  # round 2
            assert coord.night.phase == PLAYING and coord.night.round_index == 1
            pin = mock_factory.pin(16)
            pin.drive_low()  # the host holds the bell down
            deadline = time.monotonic() + 5
            while coord.night.phase == PLAYING and time.monotonic() < deadline:
                service.step(timeout=0.1)
            pin.drive_high()
            service.step(timeout=0.2)
            assert coord.night.phase == RESULTS and len(coord.night.history) == 2
            own = [r.payload for r in log.replay() if r.table == 0]
            assert sum(1 for p in own if p.get("event") == ["close-held"]) == 2
        finally:
            bell.close()
