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
