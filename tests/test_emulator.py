"""The terminal emulator: keys drive MockFactory pins under the real box."""

from __future__ import annotations

import io
import random

from luma.core.device import dummy

from bunco_pi.rules.house import preset
from bunco_pi.table.blocks import to_blocks
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.emulator import HELP, KeyPad, run, screen_lines
from bunco_pi.table.events import DiceRoll
from bunco_pi.table.standalone_link import StandaloneLink


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


def test_the_key_legend_fits_80_columns_and_shows_quit():
    assert all(len(line) <= 79 for line in HELP)
    assert any("q quit" in line for line in HELP)
    assert all(f"{key} " in " ".join(HELP) for key in ("p", "t", "T", "b", "w", "u", "U", "r"))


def test_an_80x24_terminal_shows_the_legend_under_a_cropped_frame():
    frame = [f"{row:02d}" + "x" * 62 for row in range(32)]
    lines = screen_lines(frame, "tap pass", height=24, width=80)
    assert len(lines) == 23 and all(len(line) <= 79 for line in lines)
    assert lines[-3:] == [*HELP, "tap pass"]
    assert lines[0].startswith("┌") and lines[1] == "│" + frame[0] + "│"
    assert lines[19] == "│" + frame[18] + "│"  # the frame gives up its bottom rows
    tall = screen_lines(frame, "", height=40, width=100)
    assert tall[33].startswith("└") and tall[34:37] == [*HELP, ""]
