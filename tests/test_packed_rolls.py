"""A closed round's rolls, packed small, read back as the very rolls the tables played."""

import operator

import pytest

from bunco_pi.rules.house import PRESET_NAMES, preset
from bunco_pi.rules.night import CloseHeldRound, CloseRound, Night
from bunco_pi.rules.packed_rolls import PackedRolls, pack_rolls
from bunco_pi.rules.scoring import RollOutcome
from bunco_pi.rules.table_round import Roller, RollRecord
from bunco_pi.sim.players import simulate_night

ANN = Roller("ann", 1, False)
BEA = Roller("bea", 2, True)
ROLLS = (
    RollRecord(ANN, (1, 1, 1), 1, RollOutcome(1, True, target_dice=3)),
    RollRecord(BEA, "point", 1, RollOutcome(1, True)),
    RollRecord(ANN, (6, 6, 6), 5, RollOutcome(5, True, three_of_a_kind=True)),
    RollRecord(BEA, (1, 1, 1), -12, RollOutcome(0, False, wipeout=True), session=2),
)


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_every_closed_round_keeps_the_rolls_its_tables_played(rules: str) -> None:
    played: list[tuple[tuple[RollRecord, ...], ...]] = []
    before: list[Night] = []

    def watch(night: Night, event: object) -> None:
        if isinstance(event, CloseRound | CloseHeldRound):
            played.append(tuple(t.rolls for t in before[-1].tables))
        before[:] = [night]

    sim = simulate_night(preset(rules), 16, seed=5, on_event=watch)
    assert len(played) == len(sim.night.history) > 0
    for tables, rnd in zip(played, sim.night.history, strict=True):
        assert [t.rolls for t in rnd.tables] == list(tables)
        for kept, rolls in zip(rnd.tables, tables, strict=True):
            assert isinstance(kept.rolls, PackedRolls)
            assert list(kept.rolls) == list(rolls) and len(kept.rolls) == len(rolls)


def test_a_packed_sequence_reads_as_a_tuple() -> None:
    packed = pack_rolls(ROLLS)
    assert isinstance(packed, PackedRolls)
    assert packed == ROLLS and operator.eq(ROLLS, packed) and hash(packed) == hash(ROLLS)
    assert packed[0] == ROLLS[0] and packed[-1] == ROLLS[-1] and packed[-1].session == 2
    assert packed[1:3] == ROLLS[1:3] and packed[::-1] == ROLLS[::-1]
    assert packed[3].player == "bea" and packed[3].ghost and packed[3].rolloff
    assert packed[1].tally == "point" and packed[1].dice is None
    assert packed != ROLLS[:-1] and packed != pack_rolls(ROLLS[:-1]) and packed != list(ROLLS)
    with pytest.raises(IndexError):
        packed[4]
    with pytest.raises(IndexError):
        packed[-5]
    assert pack_rolls(()) == () and len(pack_rolls(())) == 0


def test_a_table_with_too_many_different_values_keeps_a_plain_tuple() -> None:
    many = tuple(RollRecord(ANN, (2, 3, 4), -points, RollOutcome(0, False, wipeout=True))
                 for points in range(300))
    assert pack_rolls(many) == many and isinstance(pack_rolls(many), tuple)
    assert isinstance(pack_rolls(many[:256]), PackedRolls)
    assert list(pack_rolls(many[:256])) == list(many[:256])
