import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunco_pi.protocol import (
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    ProtocolError,
    TableEvent,
    ack_json,
    ack_seq,
    decode_entry,
    dumps,
    encode_entry,
    loads,
)
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally, Undo

dice = st.tuples(*[st.integers(1, 6)] * 3)
entries = st.one_of(
    dice.map(Roll),
    st.sampled_from(["point", "bunco", "wipeout"]).map(Tally),
    st.integers(1, 6).map(lambda f: Tally("three", f)),
    st.sampled_from([Pass(), Bell(), Undo()]),
)


@given(table=st.integers(1, 50), seq=st.integers(1, 2**40), rnd=st.integers(0, 200), entry=entries)
def test_table_event_round_trips_through_json(table, seq, rnd, entry):
    event = TableEvent(table, seq, rnd, entry)
    assert TableEvent.from_json(loads(dumps(event.to_json()))) == event


@pytest.mark.parametrize("entry", [["roll", [1, 2]], ["roll", [0, 1, 2]], ["roll", [1, 2, 7]],
                                   ["roll", [1, True, 2]], ["tally", "double"], ["pass", 1],
                                   ["tally", "three", 9], [], "roll", ["jump"]])
def test_bad_entries_are_refused(entry):
    with pytest.raises(ProtocolError):
        decode_entry(entry)


@pytest.mark.parametrize("message", [
    {"v": 1, "table": 0, "seq": 1, "round": 0, "entry": ["pass"]},
    {"v": 1, "table": 51, "seq": 1, "round": 0, "entry": ["pass"]},
    {"v": 1, "table": 1, "seq": 0, "round": 0, "entry": ["pass"]},
    {"v": 1, "table": 1, "seq": 1, "round": -1, "entry": ["pass"]},
    {"v": 1, "table": "1", "seq": 1, "round": 0, "entry": ["pass"]},
    {"table": 1, "seq": 1, "round": 0, "entry": ["pass"]},
    {"v": PROTOCOL_VERSION + 1, "table": 1, "seq": 1, "round": 0, "entry": ["pass"]},
    [1, 2, 3],
])
def test_bad_table_events_are_refused_with_a_reason(message):
    with pytest.raises(ProtocolError) as info:
        TableEvent.from_json(message)
    assert str(info.value)


def test_unknown_keys_are_ignored_so_newer_senders_work():
    event = TableEvent.from_json({"v": 1, "table": 2, "seq": 5, "round": 3, "entry": ["pass"],
                                  "sent_by": "table-2", "extra": {"x": 1}})
    assert event == TableEvent(2, 5, 3, Pass())


def test_payload_limits_and_garbage():
    with pytest.raises(ProtocolError, match="limit"):
        loads(b"{" + b" " * MAX_PAYLOAD + b"}")
    with pytest.raises(ProtocolError, match="not JSON"):
        loads(b"\xff\xfe")
    with pytest.raises(ProtocolError, match="JSON object"):
        loads(b"[1]")


def test_ack_round_trip_and_entry_encoding():
    assert ack_seq(loads(dumps(ack_json(17)))) == 17
    with pytest.raises(ProtocolError):
        ack_seq({"v": 1, "seq": -1})
    assert encode_entry(Tally("three", 2)) == ["tally", "three", 2]
    assert decode_entry(["tally", "three", 2]) == Tally("three", 2)
