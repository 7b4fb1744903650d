"""The head's compact list of the night's events reads back exactly what was appended."""

from bunco_pi.head.night_log import NightLog, as_log
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import PauseClock, StartRound, TableEntry
from bunco_pi.rules.record import build_record
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally, Undo
from bunco_pi.sim.players import simulate_night


def test_a_night_reads_back_event_for_event() -> None:
    sim = simulate_night(preset("classic"), 40, seed=2)
    log = NightLog(sim.log)
    assert len(log) == len(sim.log) and log == sim.log and list(log) == sim.log
    assert [log[i] for i in (0, 1, len(log) // 2, -1)] == \
        [sim.log[i] for i in (0, 1, len(sim.log) // 2, -1)]
    assert log[5:40] == sim.log[5:40]
    # the record of the night is the same from either
    assert build_record(sim.night, log, seed=2) == build_record(sim.night, sim.log, seed=2)


def test_every_kind_of_entry_and_table() -> None:
    events = [StartRound(), TableEntry(500, Roll((6, 6, 6))), TableEntry(1, Tally("three", 4)),
              TableEntry(3, Tally("point")), TableEntry(3, Pass()), TableEntry(3, Undo()),
              TableEntry(2, Bell()), PauseClock(12.5), TableEntry(1, Roll((1, 2, 3)))]
    log = NightLog()
    for event in events:
        log.append(event)
    assert list(log) == events
    assert log != events[:-1] and log != [*events[:-1], TableEntry(2, Roll((1, 2, 3)))]


def test_a_copy_does_not_grow_with_the_night() -> None:
    log = NightLog([StartRound(), TableEntry(1, Roll((2, 2, 2)))])
    kept = as_log(log)
    log.append(TableEntry(2, Roll((4, 5, 6))))
    log.append(TableEntry(2, Tally("bunco")))
    assert len(kept) == 2 and list(kept) == [StartRound(), TableEntry(1, Roll((2, 2, 2)))]
    assert as_log([StartRound()]) == (StartRound(),)
