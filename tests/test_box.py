from __future__ import annotations

import threading

import pytest
from luma.core.device import dummy

from bunco_pi.errors import UserError
from bunco_pi.hardware.buttons import ButtonPanel
from bunco_pi.rules.house import preset
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.link import InProcessLink


def make(tmp_path, **kwargs):
    return TableBox(TableConfig(), preset("classic"), InProcessLink(), tmp_path / "j.db",
                    device=dummy(width=128, height=64, mode="1"), **kwargs)


def test_failed_start_takes_everything_down_again(mock_factory, tmp_path):
    box = make(tmp_path, dice_port=str(tmp_path / "ttyGONE"))
    with pytest.raises(UserError, match="ttyGONE"):
        box.start()
    assert not any(t.name == "table-node" for t in threading.enumerate())
    # The pins were given back: another panel can take them.
    panel = ButtonPanel(TableConfig().buttons.pins, lambda edge: None, lambda: 0.0)
    panel.close()


def test_start_and_stop_with_a_loop_dice_port(mock_factory, tmp_path):
    box = make(tmp_path, dice_port="loop://")
    box.start()
    try:
        assert box.node.sync()
        assert box.dice is not None
    finally:
        box.stop()
    box.stop()  # a second stop is harmless


def test_pin_in_use_is_one_line(mock_factory, tmp_path):
    holder = ButtonPanel({"point": 5}, lambda edge: None, lambda: 0.0)
    try:
        box = make(tmp_path)
        with pytest.raises(UserError) as err:
            box.start()
        assert "\n" not in str(err.value) and "in use" in str(err.value)
    finally:
        holder.close()
