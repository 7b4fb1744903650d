"""The Pico table box's journal (firmware/bunco_box/journal.py), here under CPython; the same
file runs under MicroPython in tests/test_pico_box.py. A power cut is a file cut short at any
byte: whatever was whole before it comes back, a torn tail is dropped with one line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "firmware"))

from bunco_box.journal import Journal, crc16, read_line, record_line  # noqa: E402


def open_journal(path: Path, **kw) -> Journal:
    return Journal(str(path), os, **kw)


def test_entries_come_back_numbered_after_a_restart(tmp_path):
    j = open_journal(tmp_path / "j.log")
    assert j.append(0, ["roll", [3, 3, 5]]) == 1
    assert j.append(0, ["tally", "point"]) == 2
    assert j.append(1, ["undo"], command=7) == 3
    again = open_journal(tmp_path / "j.log")
    assert again.last_seq == 3 and again.last_command == 7
    assert again.entries == [(1, 0, ["roll", [3, 3, 5]], 0), (2, 0, ["tally", "point"], 0),
                             (3, 1, ["undo"], 7)]
    assert again.problems == []


def test_a_line_is_json_and_its_crc(tmp_path):
    line = record_line({"s": 1, "r": 0, "x": ["pass"]})
    body, crc = line.rstrip("\n").rsplit("*", 1)
    assert int(crc, 16) == crc16(body.encode())
    assert crc16(b"123456789") == 0x29B1  # the CRC-16/CCITT-FALSE check value
    assert read_line(line.rstrip("\n").encode()) == {"s": 1, "r": 0, "x": ["pass"]}
    damaged = line.replace("pass", "paso").rstrip("\n").encode()
    assert read_line(damaged) is None


def test_a_power_cut_at_every_byte_of_an_append_loses_only_the_torn_entry(tmp_path):
    path = tmp_path / "j.log"
    j = open_journal(path)
    for i in range(3):
        j.append(0, ["roll", [1, 2, i + 1]])
    whole = path.read_bytes()
    j.append(0, ["tally", "bunco"])
    after = path.read_bytes()
    for cut in range(len(whole), len(after)):
        path.write_bytes(after[:cut])
        back = open_journal(path)
        if cut == len(whole):
            assert back.problems == []
        else:
            assert len(back.problems) == 1 and "torn last record" in back.problems[0]
        assert [e[0] for e in back.entries] == [1, 2, 3]
        # the file was made whole again: the next entry takes seq 4 and reads back
        assert back.append(0, ["pass"]) == 4
        assert [e[0] for e in open_journal(path).entries] == [1, 2, 3, 4]


def test_a_damaged_line_in_the_middle_is_named_and_skipped(tmp_path):
    path = tmp_path / "j.log"
    j = open_journal(path)
    for i in range(3):
        j.append(0, ["roll", [1, 1, i + 1]])
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"[1,1,2]", b"[1,1,9]")
    path.write_bytes(b"\n".join(lines))
    back = open_journal(path)
    assert back.problems == ["journal: line 2 damaged, skipped"]
    assert [e[0] for e in back.entries] == [1, 3]


def test_acknowledged_entries_are_compacted_away_and_the_numbering_goes_on(tmp_path):
    path = tmp_path / "j.log"
    j = open_journal(path, compact_after=4)
    for i in range(5):
        j.append(1, ["roll", [2, 2, (i % 6) + 1]])
    j.append(2, ["roll", [2, 2, 2]])
    j.append(2, ["bell"])
    size = path.stat().st_size
    assert j.ack(5)
    assert path.stat().st_size < size  # 5 acknowledged >= 4: rewritten
    assert not (tmp_path / "j.log.new").exists()
    back = open_journal(path)
    assert back.last_seq == 7 and back.acked == 5 and back.bell_round == 2
    assert [e[0] for e in back.entries] == [6, 7]
    assert back.append(3, ["pass"]) == 8
    assert not j.ack(4)  # an older ack changes nothing


def test_compaction_keeps_the_latest_round_for_the_box_to_fold(tmp_path):
    # The box shows its own fold of the round while the head cannot hear it (tally.py): the
    # round's acknowledged entries stay in the file until a later round begins.
    path = tmp_path / "j.log"
    j = open_journal(path, compact_after=4)
    j.append(1, ["pass"])
    made = [["roll", [1, 1, 1]], ["tally", "point"], ["pass"], ["undo"], ["tally", "bunco"],
            ["roll", [3, 4, 5]]]
    for entry in made:
        j.append(2, entry)
    assert j.ack(7) and j.pending == 0
    j.compact()  # as when COMPACT_AFTER acknowledged ones have gathered
    assert len(path.read_bytes().split(b"\n")) == 1 + 6 + 1  # the head record and round 2
    back = open_journal(path, compact_after=4)
    assert back.round == 2 and back.round_entries(2) == made and back.complete
    assert back.round_entries(1) == []
    assert back.entries == []
    back.append(3, ["pass"])
    assert back.ack(8)
    for _ in range(4):
        back.append(3, ["tally", "point"])
    assert back.ack(12)  # round 2 is no longer the latest: compacted away
    again = open_journal(path)
    assert again.round_entries(3) == [["pass"]] + [["tally", "point"]] * 4
    assert len(path.read_bytes().split(b"\n")) == 1 + 5 + 1


def test_a_journal_that_lost_entries_folds_no_round_until_the_next(tmp_path):
    j = open_journal(tmp_path / "j.log")
    j.append(4, ["tally", "point"])
    j.ack(9)  # the head holds seqs this journal does not: the round's start may be gone
    assert not j.complete
    j.append(4, ["pass"])
    assert not j.complete
    j.append(5, ["tally", "point"])
    assert j.complete and j.round_entries(5) == [["tally", "point"]]
    # a file from before compaction kept the latest round: its head record says nothing of it
    old = tmp_path / "old.log"
    from bunco_box.journal import record_line

    old.write_text(record_line({"h": 1, "s": 3, "a": 3, "b": -1, "c": 0})
                   + record_line({"s": 4, "r": 2, "x": ["pass"]}))
    assert not open_journal(old).complete


def test_a_journal_writes_one_short_append_per_entry(tmp_path):
    j = open_journal(tmp_path / "j.log", compact_after=1000)
    for _ in range(50):
        j.append(0, ["roll", [1, 2, 3]])
    assert j.writes == 50
    assert j.bytes_written / 50 < 50


def test_a_head_ahead_of_the_journal_moves_the_numbering_past_it(tmp_path):
    j = open_journal(tmp_path / "j.log")
    j.append(0, ["pass"])
    j.ack(9)
    assert j.problems and "the head has seq 9" in j.problems[0]
    assert j.append(0, ["pass"]) == 10


def test_a_full_flash_counts_nothing(tmp_path):
    def full(path, mode="r"):
        if "a" in mode:
            raise OSError(28, "No space left on device")
        return open(path, mode)

    j = Journal(str(tmp_path / "j.log"), os, opener=full)
    with pytest.raises(OSError):
        j.append(0, ["pass"])
    assert j.last_seq == 0 and j.entries == []
