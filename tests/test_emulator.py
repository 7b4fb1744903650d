"""The terminal emulator: keys drive MockFactory pins under the real box."""

from __future__ import annotations

import io
import random

from luma.core.device import dummy

from bunco_pi.rules.house import preset
from bunco_pi.table.blocks import to_blocks
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.emulator import KeyPad, run
from bunco_pi.table.events import DiceRoll
from bunco_pi.table.link import StandaloneLink


class NotATerminal(io.StringIO):
    def isatty(self) -> bool:
        return False


def make_box(factory, tmp_path):
    config = TableConfig()
    rules = preset("classic")
    box = TableBox(config, rules, StandaloneLink(rules, config.players), tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), pin_factory=factory)
    box.start()
    pad = KeyPad(factory, config.buttons.pins, config.buttons.hold_time, box.node.post,
                 rng=random.Random(1))
    return box, pad


def test_keys_press_the_mock_pins(mock_factory, tmp_path):
    box, pad = make_box(mock_factory, tmp_path)
    try:
        assert pad.press(" ") == "tap pass"  # waiting: pass starts round 1
        assert pad.press("p") == "tap point"
        assert pad.press("t") == "tap three"
        assert pad.press("x") is None
        assert box.node.sync()
        assert box.node.book.state.team_scores == (6, 0)
        assert pad.press("U") == "hold undo"  # the whole turn
        assert box.node.sync()
        assert box.node.book.state.team_scores == (0, 0)
    finally:
        box.stop()


def test_roll_key_sends_virtual_dice(tmp_path):
    posted = []
    pad = KeyPad(None, {}, 0.8, posted.append, rng=random.Random(3))
    pad.press("r")
    pad.press("r")
    assert [type(e) for e in posted] == [DiceRoll, DiceRoll]
    assert posted[1].seq == (posted[0].seq + 1) % 65536
    assert all(1 <= d <= 6 for e in posted for d in e.dice)


def test_plain_mode_prints_each_new_frame_as_blocks(mock_factory, tmp_path):
    box, pad = make_box(mock_factory, tmp_path)
    out = NotATerminal()
    try:
        run(box, pad, stdin=NotATerminal(" pp?q"), out=out)
        assert box.node.sync()
        lines = out.getvalue().splitlines()
        final = to_blocks(box.sink.device.image)
        assert lines[-33:-1] == [f"|{line}|" for line in final]
        assert out.getvalue().count("+" + "-" * 64 + "+") == 2 * 4  # start, pass, p, p
    finally:
        box.stop()
