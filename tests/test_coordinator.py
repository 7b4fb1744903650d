"""The head's decisions, driven with in-memory inputs: no broker, no disk."""

import random

import pytest

from bunco_pi.head.coordinator import Buzz, Commit, Coordinator, Note, PublishState, PublishView
from bunco_pi.protocol import TableEvent, encode_entry
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally, Undo
from bunco_pi.sim.players import make_players


class Harness:
    """A coordinator, its committed log, and tables that number their own entries. Each table
    entry is logged, then accepted, as the head's shell does after its ingest commits it
    (de-duplication and order are the ingest's: tests/test_delivery.py, tests/test_sequence.py)."""

    def __init__(self, name="classic", players=12, seed=1):
        self.rules = preset(name)
        tables = -(-players // 4)
        self.coord = Coordinator(self.rules, preset_text(name), "test", tables,
                                 entropy=random.Random(seed))
        self.records = []
        self.effects = []
        self.seq = dict.fromkeys(range(1, tables + 1), 0)
        self.keep(self.coord.start_night(make_players(players)))

    def keep(self, effects):
        for effect in effects:
            if isinstance(effect, Commit):
                self.records.extend(effect.records)
        self.effects.extend(effects)
        return effects

    def event(self, table, entry, seq=None):
        if seq is None:
            self.seq[table] += 1
            seq = self.seq[table]
        return TableEvent(table, seq, self.coord.night.round_index, entry)

    def send(self, table, entry):
        return self.deliver(self.event(table, entry))

    def deliver(self, *events):
        self.records.extend(
            {"kind": "table", "table": ev.table, "seq": ev.seq, "round": ev.round_index,
             "entry": encode_entry(ev.entry)} for ev in events)
        return self.keep(self.coord.accept(list(events)))

    def bell(self):
        return self.keep(self.coord.press_bell())


def play_round(h, rng):
    """Tables roll at random until the round closes; tables hear the bell when it rings."""
    heard = set()
    while h.coord.night.phase in ("playing", "finishing"):
        live = [t.setup.table for t in h.coord.night.tables if not t.done]
        table = rng.choice(live)
        h.send(table, Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))))
        if h.coord.night.bell_rung:
            for t in h.coord.night.tables:
                if not t.bell and not t.done and t.setup.table not in heard:
                    heard.add(t.setup.table)
                    h.send(t.setup.table, Bell())


def play_night(h, seed=3):
    rng = random.Random(seed)
    while not h.coord.ended:
        h.bell()
        if h.coord.night.phase == "playing":
            play_round(h, rng)


def test_a_whole_night_is_consistent_and_restores_exactly():
    h = Harness()
    play_night(h)
    record = h.coord.record()
    assert record["complete"]
    assert audit_record(record, h.rules) == []
    again = Coordinator(h.rules, preset_text("classic"), "test", 3)
    again.restore(h.records)
    assert again.night == h.coord.night
    assert again.seen == h.coord.seen


def test_the_heads_own_records_are_committed_before_anything_is_announced():
    h = Harness()
    effects = h.bell()
    kinds = [type(e) for e in effects]
    assert kinds[0] is Commit and kinds.count(Commit) == 1
    assert all(k in (PublishView, PublishState, Buzz, Note) for k in kinds[1:])
    h.send(1, Roll((1, 2, 3)))
    effects = h.bell()  # the host ends the round: its ring is logged before the bell sounds
    assert type(effects[0]) is Commit and effects[0].records[0]["event"] == ["ring"]


def test_an_entry_for_another_round_is_refused_and_a_replay_refuses_it_too():
    h = Harness()
    h.bell()
    stale = h.event(2, Roll((1, 1, 1)))
    stale = type(stale)(stale.table, stale.seq, 5, stale.entry)
    effects = h.deliver(stale)
    assert any(isinstance(e, Note) and "round 6" in e.text for e in effects)
    assert h.coord.night.table(2).rolls == ()
    again = Coordinator(h.rules, preset_text("classic"), "test", 3)
    again.restore(h.records)
    assert again.night == h.coord.night


def test_host_bell_starts_forces_the_end_and_moves_on():
    h = Harness()
    assert h.coord.night.phase == "ready"
    assert Buzz("round-start") in h.bell()
    assert h.coord.night.phase == "playing"
    h.send(1, Roll((1, 2, 3)))
    assert Buzz("round-end") in h.bell()
    assert h.coord.night.phase == "finishing" and h.coord.night.bell_rung
    for table in (1, 2, 3):
        h.send(table, Bell())
    # the head's roller is mid-turn and finishes it; tables 2 and 3 had not started: they stop,
    # tied 0-0, and go to a roll-off
    assert h.coord.night.table(1).phase == "finishing"
    assert [h.coord.night.table(t).phase for t in (2, 3)] == ["rolloff", "rolloff"]
    h.send(1, Pass())
    assert h.coord.night.table(1).done
    assert h.coord.night.table(1).result.winners == h.coord.night.table(1).setup.seats[0::2]
    assert h.coord.night.phase == "finishing"  # still waiting for the roll-offs


def test_the_head_table_reaching_21_rings_the_bell_once():
    h = Harness()
    h.bell()
    for _ in range(7):
        h.send(1, Tally("bunco"))
        if h.coord.night.bell_rung:
            break
    rings = [e for e in h.effects if e == Buzz("round-end")]
    assert h.coord.night.bell_rung and len(rings) == 1


def test_the_bunco_buzz_sounds_for_the_bunco_only():
    """A bunco buzzes once; the pass, the bell or the undo that follows it is not a bunco."""
    h = Harness()
    h.bell()
    assert h.coord.night.target == 1

    def buzzes(entry):
        return [e for e in h.send(2, entry) if isinstance(e, Buzz)]

    assert buzzes(Tally("bunco")) == [Buzz("bunco")]
    assert buzzes(Pass()) == [] and h.coord.night.table(2).roller_index == 1  # taken, silent
    assert buzzes(Roll((1, 1, 1))) == [Buzz("bunco")]
    assert buzzes(Bell()) == [] and buzzes(Undo()) == []
    assert buzzes(Roll((2, 2, 2))) == []  # three of a kind, not the round's number


def test_undo_of_a_bunco_is_taken_back_at_the_head_too():
    h = Harness()
    h.bell()
    h.send(2, Tally("bunco"))
    assert h.coord.night.traveler is not None
    h.send(2, Undo())
    assert h.coord.night.traveler is None
    assert h.coord.night.table(2).team_scores == (0, 0)


def test_unknown_table_is_noted_not_applied():
    h = Harness()
    h.bell()
    effects = h.coord.accept([h.event(1, Pass()).__class__(9, 1, 0, Pass())])
    assert isinstance(effects[0], Note) and "only 3 tables" in effects[0].text


def test_start_night_needs_full_tables():
    coord = Coordinator(preset("classic"), "", "t", 2)
    with pytest.raises(ValueError, match="8 players"):
        coord.start_night(make_players(5)[:5])


def test_accept_takes_committed_events_and_commits_only_the_heads_own():
    h = Harness()
    h.bell()
    effects = h.coord.accept([h.event(2, Roll((1, 1, 2)))])
    assert not any(isinstance(e, Commit) for e in effects)  # nothing of the head's own yet
    assert h.coord.night.table(2).team_scores == (2, 0)


def test_a_round_all_tables_finished_but_never_closed_is_closed_on_restore():
    h = Harness()
    h.bell()
    rng = random.Random(4)
    play_round(h, rng)
    assert h.coord.night.phase == "results"
    # the head died after committing the last table entry, before committing its close
    closes = [i for i, r in enumerate(h.records) if r.get("event") == ["close"]]
    cut = h.records[: closes[-1]]
    again = Coordinator(h.rules, preset_text("classic"), "test", 3)
    effects = again.restore(cut)
    assert again.night.phase == "results"
    assert effects[0] == Commit(({"kind": "night", "event": ["close"]},))
    assert again.night.history == h.coord.night.history


def test_a_batch_that_ends_the_round_then_undoes_closes_where_the_log_says():
    """One committed batch: table 2's round-ending roll, then table 1 undoes its last entry.
    The round may only close after the whole batch, so replaying the log agrees with the live
    night (it once closed mid-batch, logged the close after it, and failed to replay)."""
    h = Harness(players=8)
    h.bell()
    h.bell()  # the host ends the round at once: both tables stop, tied, and roll off
    records = list(h.records)
    events = []
    for table in (1, 2):
        events.append(h.event(table, Bell()))
    h.coord.accept(events[:1])
    h.coord.accept(events[1:])
    # seat 1 scores in the roll-off, the other seats pass: table 1 done, table 2 one pass short
    batch1 = [h.event(1, e) for e in (Tally("point"), Pass(), Pass(), Pass(), Pass())]
    h.keep(h.coord.accept(batch1))
    batch2 = [h.event(2, e) for e in (Tally("point"), Pass(), Pass(), Pass())]
    h.keep(h.coord.accept(batch2))
    assert h.coord.night.table(1).done and not h.coord.night.table(2).done
    last, undo = h.event(2, Pass()), h.event(1, Undo())
    effects = h.keep(h.coord.accept([last, undo]))
    assert h.coord.night.phase == "finishing"  # table 1 reopened its roll-off: no close
    assert not any(isinstance(e, Commit) and e.records for e in effects)
    log = records + [{"kind": "table", "table": ev.table, "seq": ev.seq, "round": ev.round_index,
                      "entry": encode_entry(ev.entry)}
                     for ev in [*events, *batch1, *batch2, last, undo]]
    again = Coordinator(h.rules, preset_text("classic"), "test", 2)
    again.restore(log)
    assert again.night == h.coord.night


def test_a_log_that_does_not_replay_is_one_clear_error():
    from bunco_pi.head.coordinator import RestoreError

    h = Harness(players=8)
    h.bell()
    broken = list(h.records) + [{"kind": "night", "event": ["close"]}]
    again = Coordinator(h.rules, preset_text("classic"), "test", 2)
    with pytest.raises(RestoreError, match="record 3 \\(night\\)"):
        again.restore(broken)


def test_a_batch_publishes_one_view_a_table_the_latest():
    """Views are retained: a burst from a table after a Wi-Fi cut publishes its last view only,
    and it shows every entry of the batch."""
    from bunco_pi.head.views import table_view

    h = Harness()
    h.bell()
    batch = [h.event(2, Roll((2, 3, 4))) for _ in range(30)] + [h.event(3, Roll((1, 1, 2)))]
    effects = h.coord.accept(batch)
    views = [e for e in effects if isinstance(e, PublishView)]
    assert [v.table for v in views] == [2, 3]
    assert views[0].view == table_view(h.coord.night, 2)
    assert len(h.coord.night.table(2).rolls) == 30
