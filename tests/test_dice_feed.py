"""Dice sensor lines, through a pty and the real reader, into a table node."""

from __future__ import annotations

import io
import os
import random
import time
import tty

import pytest
from luma.core.device import dummy

from bunco_pi.hardware.dice_sensor import LinkDown, LinkUp
from bunco_pi.hardware.dice_wire import (
    Fault,
    Rejected,
    Roll,
    Rolling,
    SensorError,
    format_message,
)
from bunco_pi.rules.house import preset
from bunco_pi.rules.table_round import Roll as EngineRoll
from bunco_pi.rules.table_round import TableRound, TableSetup
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.dice_feed import translate
from bunco_pi.table.events import DiceRoll, DiceStatus
from bunco_pi.table.standalone_link import StandaloneLink

PLAYERS = ("Ann", "Bea", "Cat", "Dot")


def test_translate():
    assert translate(Roll(5, (1, 2, 3))) == DiceRoll(5, (1, 2, 3))
    assert translate(LinkDown("/dev/x", "gone")) == DiceStatus(False, "dice unplugged: use buttons")
    assert translate(LinkUp("/dev/x")) == DiceStatus(True)
    assert translate(SensorError("tilt")).detail == "dice: tilt"
    assert translate(Rejected(Fault.BAD_CHECKSUM, b"x")) is None
    assert translate(Rolling()) == DiceStatus(True, "rolling...")


def corrupt(rng: random.Random, good: bytes) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:  # one character flipped: the checksum no longer matches
        i = rng.randrange(len(good) - 4)
        return good[:i] + bytes([good[i] ^ 0x04]) + good[i + 1:]
    if kind == 1:
        return b"\x00\xff" + good
    if kind == 2:
        return good[:-4] + b"\n"  # checksum cut off
    if kind == 3:
        return b"ROLL " + b"9" * 120 + b"\n"
    return good  # the same roll again: a repeat, harmless


@pytest.fixture
def pty_pair():
    master, slave = os.openpty()
    tty.setraw(slave)  # bytes as a USB serial device sends them: no line editing
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def test_whole_round_from_dice_lines_with_100_corrupted(mock_factory, tmp_path, pty_pair):
    master, port = pty_pair
    rng = random.Random(7)
    rules = preset("classic")
    link = StandaloneLink(rules, PLAYERS)
    box = TableBox(TableConfig(players=PLAYERS), rules, link, tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), dice_port=port,
                   log=io.StringIO())
    box.start()
    try:
        rolls = []
        corrupted = 0
        seq = 100
        # Enough rolls to finish round 1 (target 1) whatever the dice do.
        while len(rolls) < 400:
            dice = tuple(rng.randint(1, 6) for _ in range(3))
            good = format_message(Roll(seq, dice))
            rolls.append(dice)
            lines = [good]
            if corrupted < 100 and rng.random() < 0.5:
                lines.insert(rng.randrange(2), corrupt(rng, good) if rng.random() < 0.5
                             else corrupt(rng, format_message(Roll(seq - 1, dice))))
                corrupted += 1
            for line in lines:
                os.write(master, line)
            seq += 1
        while corrupted < 100:
            os.write(master, corrupt(rng, format_message(Roll(seq - 1, (1, 1, 2)))))
            corrupted += 1
        deadline = time.monotonic() + 20
        while box.node.dice_seen < len(rolls) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert box.node.sync()
        assert box.node.dice_seen == len(rolls)
        stats = box.dice.sensor.stats()
        # Each corrupted line was rejected or recognised as a repeat, never scored.
        assert stats.malformed + stats.duplicates == 100 and stats.malformed > 50
        # The first round, refolded straight through the engine from the rolls sent.
        state = TableRound.begin(TableSetup(1, PLAYERS, 1, rules, can_end_round=True))
        used = 0
        while not state.done:
            state = state.apply(EngineRoll(rolls[used]))
            used += 1
        first = link.night.history[0].tables[0]
        assert first.team_scores == state.team_scores and first.rolls == state.rolls
        assert first.winners == state.result.winners
        # Every roll of that round came through once, in order, with its sensor seq.
        played = [e for e in box.node.finished_rounds[0].log if "roll" in e]
        assert played == [{"roll": list(d), "seq": 100 + i} for i, d in enumerate(rolls[:used])]
        # Later rounds went on from the next roll (a roll between rounds starts the next one).
        assert len(link.night.history) >= 2
        assert box.node.finished_rounds[1].log[0] == {"roll": list(rolls[used]), "seq": 100 + used}
        box.stop()
        summary = box.log.getvalue()
        assert f"{stats.malformed} malformed lines rejected" in summary
    finally:
        box.stop()


def test_sensor_unplugged_mid_game_is_shown_and_buttons_keep_counting(mock_factory, tmp_path):
    from bunco_pi.hardware.pinmap import default_button_pins

    master, slave = os.openpty()
    tty.setraw(slave)
    rules = preset("classic")
    link = StandaloneLink(rules, PLAYERS)
    box = TableBox(TableConfig(players=PLAYERS), rules, link, tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), dice_port=os.ttyname(slave))
    box.start()
    try:
        for seq, dice in enumerate([(1, 1, 2), (2, 3, 4)]):  # round 1: Ann scores 2, passes
            os.write(master, format_message(Roll(seq, dice)))
        deadline = time.monotonic() + 10
        while box.node.dice_seen < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.close(master)  # the cable is pulled
        master = None
        while not box.node.dice_warning and time.monotonic() < deadline:
            time.sleep(0.02)
        assert box.node.sync()
        assert "dice" in box.node.dice_warning
        assert box.node.view().title == "dice sensor"  # the full-screen alert
        pin = mock_factory.pin(default_button_pins()["point"])
        pin.drive_low()
        assert box.node.sync()
        assert box.node.book.state.team_scores == (2, 1)
        assert "dice" in box.node.view().warning
    finally:
        box.stop()
        if master is not None:
            os.close(master)
        os.close(slave)
