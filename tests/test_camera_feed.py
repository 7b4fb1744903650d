"""The dice camera into a table node: drawn frames and real photos, scored as the sensor's."""

from __future__ import annotations

import io
import shutil
import threading
import time

import cv2
import pytest
from drawn_dice import draw_tray
from luma.core.device import dummy

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import CameraBack
from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.rules.house import preset
from bunco_pi.rules.table_round import Roll as EngineRoll
from bunco_pi.rules.table_round import TableRound, TableSetup
from bunco_pi.table.box import TableBox
from bunco_pi.table.camera_feed import CameraFeed, open_frames, translate
from bunco_pi.table.config import CameraConfig, TableConfig
from bunco_pi.table.events import DiceRoll, DiceStatus
from bunco_pi.table.screens import PlayingView
from bunco_pi.table.standalone_link import StandaloneLink
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import read_labels
from bunco_pi.vision.verdict import SettledRoll, Unsure

PLAYERS = ("Ann", "Bea", "Cat", "Dot")
HOLD = TrayCalibration().settle_frames + 2  # frames per still tray: enough to settle


def test_translate_rolls_doubts_and_failures():
    assert translate(SettledRoll((1, 2, 3), 0.9, seq=7)) == DiceRoll(7, (1, 2, 3))
    shown = translate(Unsure("saw 2 dice, not 3"))
    assert shown == DiceStatus(True, "? saw 2 dice, not 3")
    assert translate(Unsure("unsure: tilted")) == DiceStatus(True, "unsure: tilted")
    assert translate(Unsure("too many pips")).detail == "unsure: too many pips"
    for reason in ("saw 12 dice, not 3", "unsure: a very long reason indeed"):
        assert len(translate(Unsure(reason)).detail) <= 21  # one OLED line
    failed = translate(Unsure("camera failed"))
    assert not failed.up and failed.device == "dice camera" and "failed" in failed.detail
    assert translate(SettledRoll((1, 2), 0.9)).up  # a two-dice roll is never scored
    assert translate(CameraBack()) == DiceStatus(True, "dice camera back")
    assert translate("something else") is None


def test_camera_specs_are_checked(tmp_path):
    for bad in ("webcam", "opencv:", "folder:", "picamera:0"):
        with pytest.raises(UserError, match="expected picamera") as err:
            open_frames(bad, TrayCalibration())
        assert "\n" not in str(err.value)
    with pytest.raises(UserError, match="not a folder"):
        open_frames(f"folder:{tmp_path / 'none'}", TrayCalibration())
    with pytest.raises(UserError, match="cannot open"):
        open_frames(f"opencv:{tmp_path / 'none.avi'}", TrayCalibration())


class Frames:
    """Frames as a camera gives them: each held still ``HOLD`` times; then ``end`` (None, or
    an exception to raise). ``gates[i]`` is waited on before frame i is first given."""

    def __init__(self, frames, end=None, gates=None) -> None:
        self.frames, self.end, self.gates = frames, end, gates or {}
        self.index = 0
        self.closed = False

    def read(self):
        position = self.index // HOLD
        if position >= len(self.frames):
            if self.end is not None:
                raise self.end
            return None
        if self.index % HOLD == 0 and position in self.gates:
            assert self.gates[position].wait(10)
        self.index += 1
        return self.frames[position]

    def close(self) -> None:
        self.closed = True


def tray(*faces: int):
    spots = [(160, 200), (320, 240), (480, 280)]  # read top first
    dice = [(f, x, y, 10.0 * i) for i, (f, (x, y)) in enumerate(zip(faces, spots, strict=False))]
    return draw_tray(dice, noise=2.0)


def wait_for(box, condition, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert box.node.sync()
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def make_box(tmp_path, **kwargs) -> TableBox:
    rules = preset("classic")
    return TableBox(TableConfig(players=PLAYERS), rules, StandaloneLink(rules, PLAYERS),
                    tmp_path / "j.db", device=dummy(width=128, height=64, mode="1"),
                    log=io.StringIO(), **kwargs)


def engine_scores(rolls):
    state = TableRound.begin(TableSetup(1, PLAYERS, 1, preset("classic"), can_end_round=True))
    for dice in rolls:
        state = state.apply(EngineRoll(tuple(dice)))
    return state


def test_drawn_rolls_score_as_sensor_rolls_and_a_stopped_camera_leaves_the_buttons(
    mock_factory, tmp_path
):
    gate = threading.Event()
    # An empty tray first (the start-up picture, never scored), then three throws.
    frames = Frames([tray(), tray(1, 1, 2), tray(3, 5), tray(2, 3, 4)], gates={3: gate})
    box = make_box(tmp_path, camera_frames=frames)
    box.start()
    try:
        wait_for(box, lambda: box.node.flash.startswith("?"))
        # Two dice seen: the reason is on the OLED's bottom line and nothing was scored.
        assert box.node.view().flash == "? saw 2 dice, not 3"
        assert [e["roll"] for e in box.node.book.log if "roll" in e] == [[1, 1, 2]]
        gate.set()
        wait_for(box, lambda: box.node.dice_warning != "")
        log = [e for e in box.node.book.log if "roll" in e]
        assert log == [{"roll": [1, 1, 2], "seq": 0}, {"roll": [2, 3, 4], "seq": 1}]
        state = box.node.book.state
        assert state.team_scores == engine_scores([(1, 1, 2), (2, 3, 4)]).team_scores == (2, 0)
        assert state.roller == "Bea"
        # The frames ran out mid-game: said once, full screen; the buttons go on counting.
        assert box.node.view().title == "dice camera"
        assert box.node.dice_warning == "camera stopped"
        mock_factory.pin(default_button_pins()["point"]).drive_low()
        assert box.node.sync()
        assert box.node.book.state.team_scores == (2, 1)
        assert "camera stopped" in box.node.view().warning
        assert frames.closed
    finally:
        box.stop()
    assert ("dice camera frames: 2 rolls, 1 not-sure readings; its frames ran out mid-game"
            in box.log.getvalue())


def test_camera_that_fails_mid_game_says_so(mock_factory, tmp_path):
    frames = Frames([tray(), tray(1, 2, 2)], end=OSError("USB camera gone"))
    box = make_box(tmp_path, camera_frames=frames)
    box.start()
    try:
        wait_for(box, lambda: box.node.dice_warning != "")
        assert box.node.dice_warning == "camera failed"
        assert box.node.view().title == "dice camera"
        assert box.node.book.state.team_scores == (1, 0)
        mock_factory.pin(default_button_pins()["three"]).drive_low()
        assert box.node.sync()
        assert box.node.book.state.team_scores == (6, 0)
    finally:
        box.stop()


class Replugged:
    """Opens ``first``; then, asked again, the camera is still gone (OSError) until
    ``plugged`` is set, and ``second`` opens."""

    def __init__(self, first, second, plugged: threading.Event) -> None:
        self.cameras, self.plugged = [first, second], plugged
        self.calls = 0
        self.still_gone = threading.Event()  # a reopen was tried while it was gone

    def __call__(self):
        self.calls += 1
        if len(self.cameras) == 1 and not self.plugged.is_set():
            self.still_gone.set()
            raise OSError("no camera")
        return self.cameras.pop(0)


def test_a_failed_camera_comes_back_and_the_warning_goes(mock_factory, tmp_path):
    plugged, gate = threading.Event(), threading.Event()
    first = Frames([tray(), tray(1, 1, 2)], end=OSError("USB camera gone"))
    # Back with dice lying there (not scored: the camera did not see them land), then a throw.
    second = Frames([tray(2, 2, 5), tray(1, 2, 3)], gates={1: gate})
    opener = Replugged(first, second, plugged)
    box = make_box(tmp_path, camera_frames=opener, camera_retry=(0.01, 0.05))
    box.start()
    try:
        wait_for(box, lambda: box.node.dice_warning != "")
        assert box.node.dice_warning == "camera failed"
        assert box.node.view().title == "dice camera"
        mock_factory.pin(default_button_pins()["point"]).drive_low()
        assert box.node.sync()
        assert box.node.book.state.team_scores == (3, 0)
        assert opener.still_gone.wait(10)
        plugged.set()
        wait_for(box, lambda: box.node.dice_warning == "")
        assert box.node.flash == "dice camera back"
        view = box.node.view()
        assert isinstance(view, PlayingView) and view.warning == ""  # the warning is gone
        gate.set()
        wait_for(box, lambda: box.node.dice_warning != "")  # the second camera ran out
        assert box.node.dice_warning == "camera stopped"
        assert [e for e in box.node.book.log if "roll" in e] == [
            {"roll": [1, 1, 2], "seq": 0}, {"roll": [1, 2, 3], "seq": 1}]
        assert box.node.book.state.team_scores == (4, 0)
        assert opener.calls >= 3 and first.closed and second.closed
    finally:
        box.stop()
    assert ("2 rolls, 0 not-sure readings; it failed 1 time(s), came back 1; its frames ran "
            "out mid-game") in box.log.getvalue()


def test_a_hung_camera_is_a_failure_and_does_not_hold_up_stop(mock_factory, tmp_path):
    release = threading.Event()
    frames = Frames([tray(), tray(1, 1, 2), tray()], gates={2: release})
    config = TableConfig(players=PLAYERS, camera=CameraConfig(frame_timeout=1.0))
    rules = preset("classic")
    box = TableBox(config, rules, StandaloneLink(rules, PLAYERS), tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), log=io.StringIO(),
                   camera_frames=frames)
    box.start()
    try:
        wait_for(box, lambda: box.node.dice_warning != "")
        assert box.node.dice_warning == "camera failed"
        assert [e for e in box.node.book.log if "roll" in e] == [{"roll": [1, 1, 2], "seq": 0}]
        box.stop()
        assert not box.camera.running and not frames.closed  # its read is still stuck
    finally:
        box.stop()
        release.set()


def test_camera_rolls_go_on_from_the_journal_after_a_restart(mock_factory, tmp_path):
    box = make_box(tmp_path, camera_frames=Frames([tray(), tray(1, 1, 2)]))
    box.start()
    try:
        wait_for(box, lambda: box.node.dice_warning != "")
    finally:
        box.stop()
    box = make_box(tmp_path, camera_frames=Frames([tray(1, 1, 2), tray(1, 5, 6)]))
    box.start()
    try:
        # The dice still lying there are not scored again; the next throw gets the next seq.
        wait_for(box, lambda: box.node.dice_warning != "")
        assert [e for e in box.node.book.log if "roll" in e] == [
            {"roll": [1, 1, 2], "seq": 0}, {"roll": [1, 5, 6], "seq": 1}]
    finally:
        box.stop()


TRAIN_PHOTOS = ("two_21", "four_23", "five_21", "three_21")  # 3 dice each, training split


def test_folder_of_real_photos_through_the_node(mock_factory, tmp_path, photos):
    folder = tmp_path / "throws"
    folder.mkdir()
    # The first photo is the tray as the table starts: lying there already, never scored.
    names = ("six_23", *TRAIN_PHOTOS)
    for i, name in enumerate(names):
        shutil.copy(photos / "images" / f"{name}.jpg", folder / f"{i:02d}_{name}.jpg")
    expected = []
    for name in TRAIN_PHOTOS:
        image = cv2.imread(str(photos / "images" / f"{name}.jpg"))
        truth = read_labels(photos / "labels" / f"{name}.txt", image.shape[1], image.shape[0])
        expected.append(sorted(d.face for d in truth))
    box = make_box(tmp_path, camera=f"folder:{folder}")
    box.start()
    try:
        wait_for(box, lambda: box.node.dice_warning != "", seconds=30)
        log = [e for e in box.node.book.log if "roll" in e]
        assert [sorted(e["roll"]) for e in log] == expected
        assert [e["seq"] for e in log] == list(range(len(expected)))
        state = engine_scores(expected)
        assert not state.done
        assert box.node.book.state.team_scores == state.team_scores
        assert box.node.book.state.roller == state.roller
    finally:
        box.stop()


def test_a_calibration_warning_is_on_the_oled_when_the_camera_starts(mock_factory, tmp_path):
    from bunco_pi.vision.calibration import save_calibration

    # Calibrated with blue dice on a navy tray: calibration warned, and so does the box.
    calibration = TrayCalibration(dice_colour=(170, 80, 20), pip_colour=(245, 245, 245),
                                  tray_contrast=0.02)
    save_calibration(calibration, tmp_path / "tray.json")
    # Said at start, and at each throw instead of "rolling...": until the set-up is put right.
    gate = threading.Event()
    frames = Frames([tray(), tray(1, 1, 2)], gates={1: gate})
    box = make_box(tmp_path, camera_frames=frames, camera_calibration=tmp_path / "tray.json")
    box.start()
    try:
        wait_for(box, lambda: box.node.flash == "tray: other colour")
    finally:
        gate.set()
        box.stop()
    # Dice calibrated smaller than the reader trusts: the drawn white dice still read.
    save_calibration(TrayCalibration(die_width=30.0), tmp_path / "small.json")
    posted = []
    feed = CameraFeed("frames", posted.append, tmp_path / "small.json",
                      frames=Frames([tray(), tray(1, 1, 2), tray(3, 3, 3)]))
    feed.start()
    deadline = time.monotonic() + 30
    while feed.running and time.monotonic() < deadline:
        time.sleep(0.05)
    feed.stop()
    assert [e for e in posted if isinstance(e, DiceStatus)] == [
        DiceStatus(True, "dice small: cam lower"),  # at start
        DiceStatus(True, "dice small: cam lower"),  # the first throw tumbling
        DiceStatus(True, "dice small: cam lower"),  # the second
        DiceStatus(False, "camera stopped", device="dice camera",
                   alert=("camera stopped", "keep using buttons")),
    ]
    assert [e for e in posted if isinstance(e, DiceRoll)] == [DiceRoll(0, (1, 1, 2)),
                                                             DiceRoll(1, (3, 3, 3))]
