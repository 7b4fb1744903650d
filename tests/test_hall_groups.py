"""Groups of tables in the hall (the head config's ``[hall] groups``): which tables sit on which
access point, so that a whole group gone at once is said as one line, in the head's log and in
the console's snapshot."""

from __future__ import annotations

import logging
import random

import pytest

from bunco_pi.console.snapshot import console_snapshot
from bunco_pi.errors import UserError
from bunco_pi.head.config import load_head_config
from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.groups import (
    GroupError,
    TableGroup,
    down_lines,
    parse_groups,
    parse_spans,
    presence,
    spans,
)
from bunco_pi.head.service import HeadService, make_players
from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker, InprocLink
from bunco_pi.net.topics import Topics
from bunco_pi.rules.house import preset, preset_text

HALL = (TableGroup("access point A", tuple(range(1, 41))),
        TableGroup("access point B", tuple(range(41, 81))),
        TableGroup("stage", (81,)))


def test_tables_are_read_as_a_person_writes_them():
    assert parse_spans("1-3, 7, 9-10", 10) == (1, 2, 3, 7, 9, 10)
    assert spans((9, 1, 2, 3, 7, 10)) == "1-3, 7, 9-10"
    groups = parse_groups({"A": "1-40", "B": "41-80"}, 80)
    assert [(g.name, g.spans) for g in groups] == [("A", "1-40"), ("B", "41-80")]


@pytest.mark.parametrize(("value", "expect"), [
    ({"A": "1-40", "B": "40-80"}, "table 40 is in group 'A' and in 'B'"),
    ({"A": "1-90"}, "'1-90': the night has tables 1 to 80"),
    ({"A": "9-3"}, "'9-3': the range runs backwards"),
    ({"A": "one"}, "'one' is not a table number"),
    ({"A": 5}, "give the tables as text"),
    ({"": "1"}, "a group's name is 1 to 40 characters"),
    ("1-40", "give a table of names and tables"),
])
def test_a_group_that_cannot_be_is_named(value, expect):
    with pytest.raises(GroupError, match=expect):
        parse_groups(value, 80)


def test_the_head_config_reads_the_groups_and_says_a_mistake_in_one_line(tmp_path):
    path = tmp_path / "head.toml"
    path.write_text('[night]\nname = "n"\ntables = 80\n\n[hall]\n'
                    'groups = { "access point A" = "1-40", "access point B" = "41-80" }\n')
    cfg = load_head_config(path)
    assert [(g.name, g.tables[0], g.tables[-1]) for g in cfg.groups] == [
        ("access point A", 1, 40), ("access point B", 41, 80)]
    path.write_text('[night]\nname = "n"\ntables = 60\n\n[hall]\n'
                    'groups = { A = "1-40", B = "41-80" }\n')
    with pytest.raises(UserError) as err:
        load_head_config(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}:6 [hall] groups: group 'B'")
    assert "the night has tables 1 to 60" in text
    path.write_text('[night]\nname = "n"\n')
    assert load_head_config(path).groups == ()


def test_a_group_is_down_only_when_every_table_of_it_is_offline():
    online = set(range(1, 82)) - set(range(41, 81))  # access point B dropped
    assert down_lines(HALL, online) == ["tables 41-80 offline: access point B?"]
    rows = {g["name"]: g for g in presence(HALL, online)}
    assert rows["access point B"]["online"] == 0 and rows["access point B"]["down"]
    assert rows["access point A"] == {"name": "access point A", "tables": "1-40", "count": 40,
                                      "online": 40, "offline": [], "down": False}
    assert down_lines(HALL, online | {57}) == []  # one table still there: not the AP
    assert down_lines(HALL, online - {81}) == ["tables 41-80 offline: access point B?"]


def test_the_console_snapshot_carries_each_groups_presence():
    online = set(range(1, 41)) | {81}
    snap = console_snapshot(None, name="n", table_count=81, online=online, groups=HALL)
    assert snap["groups_down"] == ["tables 41-80 offline: access point B?"]
    assert [g["online"] for g in snap["groups"]] == [40, 0, 1]
    plain = console_snapshot(None, name="n", table_count=81, online=online)
    assert plain["groups"] == [] and plain["groups_down"] == []
    # in the lobby, a group whose boxes have not come yet is not an access point down
    early = console_snapshot(None, name="n", table_count=81, online=online, groups=HALL,
                             seen=online)
    assert early["groups_down"] == [] and [g["down"] for g in early["groups"]] == [False] * 3


def test_the_head_logs_one_line_when_an_access_points_tables_all_drop(tmp_path, caplog):
    topics = Topics("hall")
    broker = InprocBroker()
    coord = Coordinator(preset("classic"), preset_text("classic"), "hall", 81,
                        entropy=random.Random(1))
    with EventLog(tmp_path / "hall.sqlite") as log:
        service = HeadService(coord, InprocLink(broker, "head"), log, topics,
                              make_players(None, 300, 81), groups=HALL)
        service.start()
        boxes = {n: InprocLink(broker, f"table-{n}") for n in range(1, 82)}
        for box in boxes.values():
            box.start()

        def say(n: int, status: str) -> None:
            boxes[n].publish(topics.status(f"table-{n}"), envelope.message(
                f"table-{n}", {"status": status}), retain=True)

        with caplog.at_level(logging.WARNING, "bunco_pi.head"):
            say(1, "online")  # the first box: the others have not come yet, none is down
            while service.step(timeout=0.05):
                pass
        assert not [r for r in caplog.records if "access point" in r.getMessage()]
        for n in boxes:
            say(n, "online")
        while service.step(timeout=0.05):
            pass
        assert service.groups_down() == []
        caplog.clear()
        with caplog.at_level(logging.WARNING, "bunco_pi.head"):
            for n in range(41, 81):
                say(n, "offline")
            while service.step(timeout=0.05):
                pass
        lines = [r.getMessage() for r in caplog.records if "access point" in r.getMessage()]
        assert lines == ["tables 41-80 offline: access point B?"]  # once, not 40 times
        assert service.groups_down() == lines
        say(50, "online")
        while service.step(timeout=0.05):
            pass
        assert service.groups_down() == []
