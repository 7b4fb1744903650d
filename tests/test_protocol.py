import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunco_pi.protocol import ProtocolError, decode_entry, encode_entry
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally, Undo

dice = st.tuples(*[st.integers(1, 6)] * 3)
entries = st.one_of(
    dice.map(Roll),
    st.sampled_from(["point", "bunco", "wipeout"]).map(Tally),
    st.integers(1, 6).map(lambda f: Tally("three", f)),
    st.sampled_from([Pass(), Bell(), Undo()]),
)


@given(entries)
def test_every_entry_round_trips(entry):
    assert decode_entry(encode_entry(entry)) == entry


@pytest.mark.parametrize("entry", [["roll", [1, 2]], ["roll", [0, 1, 2]], ["roll", [1, 2, 7]],
                                   ["roll", [1, True, 2]], ["tally", "double"], ["pass", 1],
                                   ["tally", "three", 9], [], "roll", ["jump"], None, {"roll": 1}])
def test_bad_entries_are_refused_with_a_reason(entry):
    with pytest.raises(ProtocolError) as info:
        decode_entry(entry)
    assert str(info.value)


def test_entry_forms():
    assert encode_entry(Tally("three", 2)) == ["tally", "three", 2]
    assert encode_entry(Roll((3, 3, 5))) == ["roll", [3, 3, 5]]
    assert decode_entry(["bell"]) == Bell()


@given(entries, st.integers(1, 50))
def test_the_night_record_writes_an_entry_with_the_same_codec(entry, table):
    from bunco_pi.rules.night import TableEntry
    from bunco_pi.rules.record import decode_event, encode_event

    code = encode_event(TableEntry(table, entry))
    assert code == [encode_entry(entry)[0], table, *encode_entry(entry)[1:]]
    assert decode_event(code) == TableEntry(table, entry)


def test_a_table_event_is_read_once_with_its_round():
    from bunco_pi.protocol import TableEvent, read_table_event, table_event_payload

    payload = table_event_payload(3, Roll((2, 2, 5)), sensor_seq=7)
    assert read_table_event(2, 9, payload) == TableEvent(2, 9, 3, Roll((2, 2, 5)))
    for bad in ({"round": -1, "entry": ["pass"]}, {"round": True, "entry": ["pass"]},
                {"round": 0}, {"round": 0, "entry": ["roll", [9, 9, 9]]}):
        with pytest.raises(ProtocolError):
            read_table_event(2, 9, bad)


def test_commands_are_read_strictly():
    from bunco_pi.protocol import UndoCommand, command_payload, read_command

    assert read_command(command_payload(UndoCommand(12, 4))) == UndoCommand(12, 4)
    for bad in ({"command": "erase", "id": 1, "round": 0}, {"command": "undo", "id": 0, "round": 0},
                {"command": "undo", "id": 1, "round": "x"},
                {"v": 2, "command": "undo", "id": 1, "round": 0}):
        with pytest.raises(ProtocolError):
            read_command(bad)


def test_a_box_takes_nothing_older_than_what_it_holds():
    from bunco_pi.protocol import NightPosition, is_older, position_of

    held = NightPosition("abc", 40)
    assert position_of(held.stamp({"phase": "playing"})) == held
    assert position_of({"epoch": "abc", "pos": -1}) is None
    assert not is_older(None, NightPosition("abc", 3))  # holds nothing: takes anything
    assert not is_older(None, None)
    assert is_older(held, NightPosition("abc", 39))  # a broker's autosave, a redelivery
    assert not is_older(held, NightPosition("abc", 40))  # said again on reconnect
    assert not is_older(held, NightPosition("abc", 41))
    assert not is_older(held, NightPosition("new", 1))  # the head's log started afresh
    assert is_older(held, None)  # no position: not from this head


def test_decoded_rolls_share_their_dice():
    """A night keeps every roll's dice: the same throw decoded twice is one tuple, so a
    100-table night holds 216 of them rather than one per roll."""
    first, again = decode_entry(["roll", [2, 5, 5]]), decode_entry(["roll", [2, 5, 5]])
    assert first == again == Roll((2, 5, 5))
    assert first.dice is again.dice
