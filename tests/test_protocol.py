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


# --- the night state's parts at 500 tables --------------------------------------------------


def _night_of(tables: int, name_of):
    from bunco_pi.head.service import make_players
    from bunco_pi.rules.house import preset
    from bunco_pi.rules.night import Night
    from bunco_pi.rules.rotation import initial_seating

    players = make_players([name_of(i) for i in range(tables * 4)], None, tables)
    ids = [p.id for p in players]
    return Night.start(preset("classic"), players,
                       initial_seating(ids, list(range(len(ids)))))


def test_every_message_of_a_500_table_night_of_the_longest_names_fits():
    """2,000 names of 32 characters, each a character JSON writes as 12 bytes: the roster
    alone would be some 800 KB. Each page of the seating still fits in one message."""
    from bunco_pi.head.views import night_state
    from bunco_pi.net import envelope
    from bunco_pi.protocol import SEATING_PAGE_TABLES, split_state
    from bunco_pi.rules.house import preset_text
    from bunco_pi.rules.limits import MAX_TABLES
    from bunco_pi.rules.names import clean_name

    def longest(i: int) -> str:  # an emoji then a number: every name different
        return clean_name("\U0001F600" * (32 - len(str(i))) + str(i))

    assert MAX_TABLES == 500
    night = _night_of(MAX_TABLES, longest)
    state = night_state(night, name="charity", rules_toml=preset_text("classic"),
                        table_count=MAX_TABLES)
    core, parts = split_state(state)
    pages = sorted((k for k in parts if k.startswith("seating/")), key=lambda k: int(k[8:]))
    assert pages == [f"seating/{n}" for n in range(1, MAX_TABLES // SEATING_PAGE_TABLES + 1)]
    sizes = [len(envelope.message("head", parts[k])) for k in pages]
    assert max(sizes) <= envelope.MAX_BYTES
    assert sum(sizes) > 8 * envelope.MAX_BYTES  # what one message could not have held
    assert len(envelope.message("head", {**core, "parts": {"seating": 1, "rules": 1}})) < 1024


def test_a_table_puts_its_seats_and_names_back_together_from_its_own_page():
    from bunco_pi.head.views import night_state
    from bunco_pi.protocol import merge_state, seating_page, seats_at, split_state

    night = _night_of(60, lambda i: f"Player {i}")
    core, parts = split_state(night_state(night, name="n", rules_toml="x", table_count=60))
    assert sorted(parts) == ["rules", "seating/1", "seating/2", "seating/3"]
    for table in (1, 25, 26, 50, 51, 60):
        page = parts[f"seating/{seating_page(table)}"]
        whole = merge_state(core, {"seating": page, "rules": parts["rules"]})
        assert seats_at(whole, table) == list(night.seating[table - 1])
        names = {p["id"]: p["name"] for p in whole["players"]}
        assert [names[p] for p in seats_at(whole, table)] == \
            [next(q.name for q in night.players if q.id == p) for p in night.seating[table - 1]]
    assert seating_page(25) == 1 and seating_page(26) == 2 and seating_page(500) == 20
    last = merge_state(core, {"seating": parts["seating/3"], "rules": parts["rules"]})
    assert len(last["seating"]) == 10 and seats_at(last, 61) is None and seats_at(last, 50) is None


def test_a_state_in_parts_of_another_version_is_named():
    from bunco_pi.protocol import parts_version_problem

    assert parts_version_problem({"parts": {"seating": 3, "rules": 1}, "parts_v": 2}) is None
    problem = parts_version_problem({"parts": {"roster": 3, "seating": 3, "rules": 1}})
    assert problem is not None and "version 1" in problem and "update" in problem
    assert parts_version_problem({"phase": "lobby"}) is None  # a whole state: no parts
