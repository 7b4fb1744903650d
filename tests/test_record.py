"""The night record: events encode and decode, and a record replays to the same night."""

import json

import pytest

from bunco_pi.rules.house import preset
from bunco_pi.rules.night import (
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    RingBell,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.record import (
    FORMAT,
    VERSION,
    build_record,
    decode_event,
    encode_event,
    first_players,
    replay,
)
from bunco_pi.rules.table_round import Bell, Pass, Roll, RuleViolation, Tally, Undo
from bunco_pi.sim.players import simulate_night

EVENTS = [
    StartRound(), RingBell(), CloseRound(), NextRound(), EndBreak(), SettlePrizes(12345),
    TableEntry(2, Roll((3, 3, 5))), TableEntry(1, Tally("point")), TableEntry(3, Tally("three", 4)),
    TableEntry(1, Pass()), TableEntry(4, Bell()), TableEntry(1, Undo()),
]


@pytest.mark.parametrize("event", EVENTS, ids=repr)
def test_every_event_survives_json(event) -> None:
    encoded = encode_event(event)
    assert decode_event(json.loads(json.dumps(encoded))) == event


def test_events_are_short_lists() -> None:
    assert encode_event(TableEntry(2, Roll((3, 3, 5)))) == ["roll", 2, [3, 3, 5]]
    assert encode_event(SettlePrizes(9)) == ["prizes", 9]
    assert encode_event(StartRound()) == ["start"]


@pytest.mark.parametrize("item", [
    [], "start", ["start", 1], ["roll", 2], ["roll", True, [1, 2, 3]], ["roll", "2", [1, 2, 3]],
    ["tally", 1], ["tally", 1, 5], ["prizes"], ["prizes", "x"], ["dance", 1], [3],
])
def test_bad_events_are_refused(item) -> None:
    with pytest.raises(ValueError):
        decode_event(item)


@pytest.fixture(scope="module", params=["classic", "core", "rotate", "individual"])
def simulated(request):
    rules = preset(request.param)
    sim = simulate_night(rules, 10, seed=4)
    return rules, sim, build_record(sim.night, sim.log, seed=4)


def test_a_record_replays_to_the_same_night(simulated) -> None:
    rules, sim, record = simulated
    assert replay(record, rules) == sim.night
    assert replay(json.loads(json.dumps(record)), rules) == sim.night


def test_a_record_holds_the_readable_night(simulated) -> None:
    rules, sim, record = simulated
    assert record["format"] == FORMAT and record["version"] == VERSION
    assert record["complete"] and record["rules"] == rules.name and record["seed"] == 4
    assert len(record["rounds"]) == rules.rounds_per_night
    assert len(record["players"]) == 12 and sum(p["ghost"] for p in record["players"]) == 2
    assert set(record["cards"]) == {f"p{i}" for i in range(1, 11)}
    assert record["traveler"] == sim.night.traveler
    assert [p["name"] for p in record["prizes"]] == [p.name for p in rules.prizes.prize]
    first = record["rounds"][0]
    assert [t["seats"] for t in first["tables"]] == record["first_seating"]
    rolls = [r for t in first["tables"] for r in t["rolls"]]
    assert all(set(r) >= {"at", "player", "dice", "points", "rolloff"} for r in rolls)
    sessions = [(r["session"], t["rolloffs"]) for rnd in record["rounds"] for t in rnd["tables"]
                for r in t["rolls"] if r["rolloff"]]
    assert all(1 <= s <= n for s, n in sessions)
    # dice leave a roll for every turn, so every roll-off session left rolls
    assert len({(s, n) for s, n in sessions}) <= sum(t["rolloffs"] for rnd in record["rounds"]
                                                      for t in rnd["tables"])
    assert bool(sessions) == any(t["rolloffs"] for rnd in record["rounds"] for t in rnd["tables"])
    assert not any("session" in r for rnd in record["rounds"] for t in rnd["tables"] for r in t["rolls"]
                   if not r["rolloff"])


def test_roll_positions_point_at_their_roll_events(simulated) -> None:
    _, _, record = simulated
    for rnd in record["rounds"]:
        for t in rnd["tables"]:
            ats = [r["at"] for r in t["rolls"]]
            assert ats == sorted(ats) and len(set(ats)) == len(ats)
            for r in t["rolls"]:
                event = record["log"][r["at"]]
                assert event[:2] == ["roll", t["table"]] and event[2] == r["dice"]


def test_a_record_of_a_night_in_progress() -> None:
    rules = preset("classic")
    sim = simulate_night(rules, 8, seed=1)
    log = sim.log[:40]
    night = replay({"players": [{"id": p.id, "name": p.name, "ghost": p.ghost} for p in sim.night.players],
                    "first_seating": build_record(sim.night, sim.log)["first_seating"],
                    "log": [encode_event(e) for e in log]}, rules)
    record = build_record(night, log)
    assert not record["complete"] and record["prizes"] == []
    assert replay(record, rules) == night


def test_a_broken_record_does_not_replay() -> None:
    with pytest.raises(RuleViolation, match="not a replayable night record"):
        replay({"players": [], "log": []}, preset("classic"))
    with pytest.raises(RuleViolation):
        replay({"players": [{"id": "a", "name": "A", "ghost": False}], "first_seating": [["a"]],
                "log": [["dance"]]}, preset("classic"))


def _with_undos(rules, sim) -> list:
    """The simulated night's log with undone entries woven in at tables that cannot end the
    round: a pass taken back, a tally taken back, a roll taken back and rolled again (the
    same dice, so the night goes on as it was, but the roll's log position moves)."""
    night, log = Night.start(rules, first_players(sim.night.players, sim.log),
                             build_record(sim.night, sim.log)["first_seating"]), []

    def play(event) -> None:
        nonlocal night
        night = night.apply(event)
        log.append(event)

    for i, event in enumerate(sim.log):
        play(event)
        if not (isinstance(event, TableEntry) and isinstance(event.entry, Roll)
                and event.table != 1 and night.phase == "playing"):
            continue
        weave = [[Pass(), Undo()], [Tally("point"), Undo()], [Undo(), event.entry]][i % 3]
        try:
            trial = night
            for entry in weave:
                trial = trial.apply(TableEntry(event.table, entry))
        except RuleViolation:
            continue
        for entry in weave:
            play(TableEntry(event.table, entry))
    # what was taken back changed nothing: the same night, played with more entries
    assert night.phase == "ended" and night.cards == sim.night.cards
    assert night.prizes == sim.night.prizes
    return log


def test_roll_positions_follow_undos() -> None:
    """Each roll's ``at`` is the log position of the entry that made it, undone ones left
    out: checked against the night folded entry by entry."""
    rules = preset("classic")
    sim = simulate_night(rules, 12, seed=3)
    log = _with_undos(rules, sim)
    assert sum(isinstance(e, TableEntry) and isinstance(e.entry, Undo) for e in log) > 20
    first = build_record(sim.night, sim.log)["first_seating"]
    night = Night.replay(rules, first_players(sim.night.players, log), first, log)
    record = build_record(night, log)
    # the oracle: fold the night and note when a table's rolls grow or shrink
    state, made = Night.start(rules, first_players(night.players, log), first), {}
    for position, event in enumerate(log):
        after = state.apply(event)
        if isinstance(event, TableEntry):
            count = len(after.tables[event.table - 1].rolls)
            mine = made.setdefault((state.round_index, event.table), [])
            del mine[count:]
            if count > len(mine):
                mine.append(position)
        state = after
    for r_index, rnd in enumerate(record["rounds"]):
        for t in rnd["tables"]:
            assert [r["at"] for r in t["rolls"]] == made.get((r_index, t["table"]), [])
            for r in t["rolls"]:
                assert record["log"][r["at"]][:2] == ["tally" if r.get("tally") else "roll",
                                                      t["table"]]
    assert replay(record, rules) == night
