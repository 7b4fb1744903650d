import pytest

from bunco_pi.net.topics import TopicError, TopicRef, Topics, parse_topic, table_node


def test_every_built_topic_parses_back_to_what_built_it():
    t = Topics("2026-11-28")
    assert parse_topic(t.state()) == TopicRef("2026-11-28", "state")
    assert parse_topic(t.control()) == TopicRef("2026-11-28", "control")
    assert parse_topic(t.standings()) == TopicRef("2026-11-28", "standings")
    assert parse_topic(t.events(3)) == TopicRef("2026-11-28", "events", table=3)
    assert parse_topic(t.ack(12)) == TopicRef("2026-11-28", "ack", table=12)
    assert parse_topic(t.view(1)) == TopicRef("2026-11-28", "view", table=1)
    assert parse_topic(t.status("table-4")) == TopicRef("2026-11-28", "status", node="table-4")


def test_topic_strings_follow_the_documented_layout():
    t = Topics("fri")
    assert t.events(2) == "bunco/fri/table/2/events"
    assert t.ack(2) == "bunco/fri/table/2/ack"
    assert t.status("head") == "bunco/fri/node/head/status"
    assert t.all_events() == "bunco/fri/table/+/events"
    assert table_node(7) == "table-7"


@pytest.mark.parametrize("topic, problem", [
    ("bunco", "not under bunco/<night>/"),
    ("other/fri/state", "not under bunco/<night>/"),
    ("bunco/f r i/state", "bad night name"),
    ("bunco/fri/table/0/events", "bad table number"),
    ("bunco/fri/table/03/events", "bad table number"),
    ("bunco/fri/table/1000/events", "bad table number"),
    ("bunco/fri/table/x/ack", "bad table number"),
    ("bunco/fri/table/2/scores", "unknown topic"),
    ("bunco/fri/node/Head/status", "bad node name"),
    ("bunco/fri/state/extra", "unknown topic"),
    ("bunco/fri/table/2/events/more", "unknown topic"),
])
def test_foreign_topics_give_one_line_naming_the_topic(topic, problem):
    with pytest.raises(TopicError) as err:
        parse_topic(topic)
    message = str(err.value)
    assert problem in message and repr(topic) in message and "\n" not in message


@pytest.mark.parametrize("night", ["", "a/b", "a+b", "#", "x" * 41, "sp ace"])
def test_night_names_that_would_break_the_topic_tree_are_refused(night):
    with pytest.raises(TopicError, match="night name"):
        Topics(night)


@pytest.mark.parametrize("table", [0, -1, 1000, True, "3"])
def test_table_numbers_out_of_range_are_refused(table):
    with pytest.raises(TopicError, match="table number"):
        Topics("fri").events(table)


def test_the_seating_comes_in_pages_each_a_topic_of_its_own():
    from bunco_pi.net.topics import TopicError, Topics, parse_topic

    t = Topics("2026-11-28")
    assert t.seating(3) == "bunco/2026-11-28/seating/3"
    assert t.part("seating/3") == t.seating(3) and t.part("rules") == t.rules()
    ref = parse_topic("bunco/2026-11-28/seating/20")
    assert (ref.kind, ref.page) == ("seating", 20)
    for bad in ("bunco/n/seating/0", "bunco/n/seating/x", "bunco/n/seating/100",
                "bunco/n/seating", "bunco/n/roster"):
        with pytest.raises(TopicError):
            parse_topic(bad)
    with pytest.raises(TopicError):
        t.seating(0)
    with pytest.raises(TopicError):
        t.part("roster")
