"""A camera knocked on its mount after the tray was learned: seen, and the tray learned again.

Issue: "No empty-tray photo needed. A group sets the camera up by rolling: the reader finds
the tray and learns its dice's colours from the first sure rolls." A tray learned by rolling
goes stale when the camera moves; a table that keeps reading it with a region that no longer
fits refuses throws all evening.

The fixtures are renders (``scripts/render_dice.py FOLDER --start 1700000 --count 40`` and
``--start 1710000 --count 8``, each with ``--kinds roll:1 --throws 3 --moved``): the same
tray, light and camera with the dice thrown again, then the camera nudged. How far each
picture truly moved is found from the cameras the scene files name (``true_shift``, by the
cameras' geometry: no picture matching), so the check below shares nothing with what it checks.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import CameraDiceSource, ImageFolderSource, load_learned, save_learned
from bunco_pi.vision import tray_view
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.fusion import read_both
from bunco_pi.vision.learn import LearnedSetup, from_data, roll_sample, to_data, tray_region
from bunco_pi.vision.tray_view import (
    MOVED,
    THROWS,
    Comparison,
    TrayView,
    Verdict,
    compare,
    moved_for_good,
    take_view,
)

FIXTURES = Path(__file__).with_name("fixtures") / "moved"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "measure_tray_view.py"
HOLD = TrayCalibration().settle_frames + 2  # frames per picture: enough to settle


@pytest.fixture(scope="module")
def measure():
    spec = importlib.util.spec_from_file_location("measure_tray_view", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["measure_tray_view"] = module
    spec.loader.exec_module(module)
    return module


class Tray:
    """A rendered tray: its first picture's view as learning keeps it, and the rest to compare."""

    def __init__(self, measure, name: str) -> None:
        self.measure, self.name = measure, name
        first = FIXTURES / "images" / f"{name}.jpg"
        self.frame = load_image(first)
        height, width = self.frame.shape[:2]
        boxes = measure.dice_boxes(FIXTURES, first, self.frame.shape)
        self.spots = tuple((x / width, y / height) for x, y, _, _ in boxes)
        self.die_width = float(np.median([max(w, h) for _, _, w, h in boxes])) / width
        self.view = take_view(self.frame, self.spots)
        self.region = tray_region(self.frame, list(self.spots), self.die_width)

    def picture(self, suffix: str) -> tuple[np.ndarray, tuple[tuple[float, float], ...]]:
        path = FIXTURES / "images" / f"{self.name}{suffix}.jpg"
        frame = load_image(path)
        height, width = frame.shape[:2]
        boxes = self.measure.dice_boxes(FIXTURES, path, frame.shape)
        return frame, tuple((x / width, y / height) for x, y, _, _ in boxes)

    def compared(self, suffix: str, gain: float = 1.0) -> Comparison:
        frame, dice = self.picture(suffix)
        return compare(self.view, self.measure.lit(frame, gain), dice, self.region, self.die_width)

    def truly(self, suffix: str) -> float:
        return self.measure.true_shift(FIXTURES, self.name, self.name + suffix, self.region, self.die_width)


def test_the_oracle_finds_a_camera_moved_sideways_by_the_floor_it_sees(measure):
    """``true_shift``'s geometry, checked by hand: a camera straight down 0.4 m above the floor,
    its lens half its sensor's width (the picture spans 0.8 m of floor), moved 0.02 m along x:
    every floor point moves 0.02 / 0.8 of the picture the other way."""
    down = np.eye(3)  # camera axes = world axes: it looks along -z, its picture's x is world x
    here = (np.array([0.0, 0.0, 0.4]), down, 0.5)
    there = (np.array([0.02, 0.0, 0.4]), down, 0.5)
    corners = np.array([[0.2, 0.3], [0.8, 0.3], [0.2, 0.9], [0.8, 0.9]])
    floor = measure.on_floor(here, corners)
    assert np.allclose(floor[:, 2], 0)
    assert np.allclose(measure.in_picture(here, floor), corners)
    assert np.allclose(measure.in_picture(there, floor) - corners, [-0.025, 0])


def test_another_throw_of_the_same_camera_is_in_place_and_a_nudged_camera_is_moved_as_far_as_it_was(
    measure,
):
    tray = Tray(measure, "r1710005")
    for suffix in ("-t2", "-t3"):
        comparison = tray.compared(suffix)
        assert tray.truly(suffix) == pytest.approx(0, abs=1e-3)
        assert comparison.verdict is Verdict.SAME and comparison.shift < 0.1, comparison
    for suffix in ("-moved", "-moved-t2"):
        comparison = tray.compared(suffix)
        truly = tray.truly(suffix)
        assert truly > MOVED
        assert comparison.verdict is Verdict.MOVED, comparison
        assert comparison.shift == pytest.approx(truly, abs=0.4)


def test_the_dice_of_the_throw_seen_are_left_out_too(measure):
    """Big dice with long shadows on a plain floor: left in, the new throw's dice and shadows
    are most of what differs, and no match is believed; left out, it is in place."""
    tray = Tray(measure, "r1700000")
    comparison = tray.compared("-t2")
    assert comparison.verdict is Verdict.SAME and comparison.shift < 0.1, comparison
    frame, _ = tray.picture("-t2")
    assert compare(tray.view, frame, (), tray.region, tray.die_width).verdict is not Verdict.SAME


def test_a_shift_too_far_for_the_match_in_place_is_found_by_the_search(measure):
    """The picture shifted by 15% of its width and 8% of its height: too far for the match from
    in place, which finds nothing; the grid of shifts starts it where it is found, and how far
    the tray moved is measured right."""
    tray = Tray(measure, "r1710005")
    frame, dice = tray.picture("-t2")
    height, width = frame.shape[:2]
    dx, dy = 0.15 * width, 0.08 * height
    shifted = cv2.warpAffine(frame, np.float32([[1, 0, dx], [0, 1, dy]]), (width, height),
                             borderMode=cv2.BORDER_REPLICATE)
    moved_dice = tuple((x + dx / width, y + dy / height) for x, y in dice)
    truly = math.hypot(dx, dy) / (tray.die_width * width)
    comparison = compare(tray.view, shifted, moved_dice, tray.region, tray.die_width)
    assert comparison.verdict is Verdict.MOVED
    assert comparison.shift == pytest.approx(truly, abs=0.3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tray_view, "REACH", 0.0)  # no search: from in place only
        patch.setattr(tray_view, "GRID", 1)
        assert compare(tray.view, shifted, moved_dice, tray.region, tray.die_width).verdict is Verdict.UNKNOWN


def test_a_camera_nudged_less_than_a_die_width_is_in_place(measure):
    """The learned region has two die widths of tray round every place a die came to rest: a
    camera moved half a die width still sees every throw inside it."""
    tray = Tray(measure, "r1710006")
    assert tray.truly("-moved") < 0.6
    comparison = tray.compared("-moved")
    assert comparison.verdict is Verdict.SAME
    assert comparison.shift == pytest.approx(tray.truly("-moved"), abs=0.2)


def test_a_brighter_or_darker_exposure_is_no_move(measure):
    tray = Tray(measure, "r1710005")
    for gain in (4 / 3, 2 / 3):
        assert tray.compared("-t2", gain).verdict is Verdict.SAME
        assert tray.compared("-moved", gain).verdict is Verdict.MOVED


def test_a_floor_of_smooth_shading_matched_far_off_is_no_move(measure):
    """A plain floor under soft light: its shading matches itself shifted about as well as in
    place, and a match found far off is no evidence of a move. Without ``GAIN``, a throw of
    this still camera is called moved (shift 1.4 die widths)."""
    tray = Tray(measure, "r1700012")
    for suffix in ("-t2", "-t3"):
        assert tray.truly(suffix) == pytest.approx(0, abs=1e-3)
        assert tray.compared(suffix).verdict is not Verdict.MOVED


def test_nothing_to_match_is_unknown_and_another_shape_of_picture_is_a_move():
    blank = np.full((240, 320, 3), 128, np.uint8)
    view = take_view(blank, ((0.5, 0.5),))
    comparison = compare(view, blank, (), (0.0, 0.0, 1.0, 1.0), 0.1)
    assert comparison.verdict is Verdict.UNKNOWN
    wider = np.full((180, 320, 3), 128, np.uint8)  # the camera set to another picture shape
    assert compare(view, wider, (), (0.0, 0.0, 1.0, 1.0), 0.1).verdict is Verdict.MOVED


def test_a_motion_no_knock_makes_is_no_match():
    """A knock shifts, turns and tilts a camera a little; a match that scales the picture by a
    third, stretches it one way twice as much as the other, or carries its middle six die
    widths, has gone wrong."""
    width, height, die = 320, 240, 20.0

    def about_the_middle(turn: float, scale: tuple[float, float], shift: tuple[float, float]) -> np.ndarray:
        motion = cv2.getRotationMatrix2D((width / 2, height / 2), turn, 1.0)
        motion[:, :2] = motion[:, :2] @ np.diag(scale)
        motion[:, 2] += shift
        return motion

    assert tray_view.a_knock(about_the_middle(4, (1.03, 1.03), (45, -20)), width, height, die)
    assert not tray_view.a_knock(about_the_middle(0, (1.33, 1.33), (0, 0)), width, height, die)
    assert not tray_view.a_knock(about_the_middle(0, (0.7, 0.7), (0, 0)), width, height, die)
    assert not tray_view.a_knock(about_the_middle(2, (1.2, 0.55), (0, 0)), width, height, die)
    assert not tray_view.a_knock(about_the_middle(0, (1, 1), (6 * die, 0)), width, height, die)


def _moved(shift: float) -> Comparison:
    corner = (1.0 + shift, 1.0)
    return Comparison(Verdict.MOVED, 0.9, shift, (corner, corner, corner, corner))


def test_only_throws_in_a_row_that_saw_the_camera_moved_alike_make_it_moved():
    assert THROWS == 2
    assert not moved_for_good([_moved(2.0)])
    assert moved_for_good([_moved(2.0), _moved(2.3)])
    assert moved_for_good([_moved(9.0), _moved(2.0), _moved(2.3)])  # the last two
    assert not moved_for_good([_moved(2.0), _moved(4.0)])  # two far-off matches that disagree
    unknown = Comparison(Verdict.UNKNOWN, 0.2, None)
    assert not moved_for_good([_moved(2.0), unknown])
    other_shape = Comparison(Verdict.MOVED, None, None)  # the camera set to another mode
    assert moved_for_good([other_shape, other_shape])
    assert not moved_for_good([other_shape, _moved(2.0)])


def test_the_view_is_kept_in_the_learned_file_and_a_spoilt_one_is_named(measure, tmp_path):
    tray = Tray(measure, "r1710005")
    setup = LearnedSetup(face=(200.0, 200.0, 200.0), pip=(30.0, 30.0, 30.0), region=tray.region,
                         die_width=round(tray.die_width, 4), rolls=3, view=tray.view)
    path = tmp_path / "dice-learned.json"
    save_learned(setup, path)
    assert load_learned(path) == setup
    assert from_data(to_data(LearnedSetup(moved=True))) == LearnedSetup(moved=True)
    data = json.loads(path.read_text())
    for view, expect in [
        ({"picture": "not base64!", "dice": []}, "'view': 'picture' is not base64"),
        ({"picture": "aGVsbG8=", "dice": []}, "'view' is not a grey picture"),
        ({"picture": "", "dice": []}, "'view' is not a grey picture"),
        ({"picture": data["view"]["picture"], "dice": [[2, 0]]}, "'view dice' must be a fraction"),
        ([1, 2], "'view' must be an object"),
    ]:
        path.write_text(json.dumps(dict(data, view=view)))
        with pytest.raises(UserError, match=expect) as err:
            load_learned(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)
    for key, value, expect in [("moved", "yes", "'moved' must be true or false"),
                               ("die_width", 0, "'die_width' must be more than 0")]:
        path.write_text(json.dumps(dict(data, **{key: value})))
        with pytest.raises(UserError, match=expect) as err:
            load_learned(path)
        assert "\n" not in str(err.value)


def _folder(tmp_path: Path, name: str, suffixes: list[str], called: str = "tray") -> Path:
    """A folder of a tray's pictures in the order given, as a camera would see them."""
    folder = tmp_path / called
    folder.mkdir()
    for k, suffix in enumerate(suffixes):
        (folder / f"{k:02d}.jpg").write_bytes((FIXTURES / "images" / f"{name}{suffix}.jpg").read_bytes())
    return folder


def _learned(tray: Tray) -> LearnedSetup:
    """The set-up as rolling would have taught it: the dice's colours measured from the first
    picture's reading (``learn.roll_sample``), the tray and the view from its labels."""
    sample = roll_sample(tray.frame, read_both(tray.frame, TrayCalibration().reader_settings(), dice=3))
    assert sample is not None
    return LearnedSetup(face=sample.face, pip=sample.pip, region=tray.region,
                        die_width=round(tray.die_width, 4), rolls=3, view=tray.view)


def _feed(source: CameraDiceSource, folder: Path, asked: tuple[int, ...] = ()) -> list[str]:
    """Every picture through the source, a button asking to read the tray again before each
    picture numbered in ``asked`` (the same picture again); the OLED's learning line after each."""
    frames = ImageFolderSource(folder, hold=HOLD)
    lines = []
    index = 0
    while (frame := frames.read()) is not None:
        if index % HOLD == 0 and index // HOLD in asked:
            source.rearm()
        source.process(frame)
        index += 1
        if index % HOLD == 0:
            lines.append(source.status())
    return lines


def test_a_table_whose_camera_was_knocked_learns_its_tray_again(measure, tmp_path, caplog):
    tray = Tray(measure, "r1700014")
    # the first picture is the tray as the table starts (not read), then two throws as
    # learned, then two after the knock
    folder = _folder(tmp_path, tray.name, ["", "-t2", "-t3", "-moved", "-moved-t2"])
    path = tmp_path / "dice-learned.json"
    kept: list[LearnedSetup] = []

    def keep(setup: LearnedSetup) -> None:
        kept.append(setup)
        save_learned(setup, path)

    learned = _learned(tray)
    source = CameraDiceSource(ImageFolderSource(folder), lambda r: None, TrayCalibration(),
                              learned=learned, on_learned=keep)
    with caplog.at_level(logging.WARNING, logger="bunco_pi.hardware.camera"):
        lines = _feed(source, folder)
    # in place twice, moved once: still as learned; moved twice alike: learned anew
    assert lines == ["", "", "", "", "cam moved: learn 0/3"]
    # the tray forgotten, the dice's colours kept: the dice did not change
    anew = LearnedSetup(moved=True, kept=learned.look)
    assert source.learning and source.setup == anew
    assert kept == [anew] and load_learned(path) == anew
    assert len(lines[-1]) <= 21
    (record,) = [r for r in caplog.records if "camera has moved" in r.getMessage()]
    assert "learning the tray again" in record.getMessage()
    assert source.calibration.region == TrayCalibration().region  # the stale region is gone
    assert source.calibration.die_width is None
    assert source.calibration.look == learned.look  # read with meanwhile
    # ... and the settle check sees by them too, beside plain grey: the colours kept may be
    # another table's dice, which by them alone would never settle
    assert source._detector.settings.look == learned.look


def test_a_throw_read_again_is_no_second_look_but_the_emptied_tray_is(measure, tmp_path):
    """A throw read again at a button's asking is the same picture: a match gone wrong would be
    found alike twice. The tray emptied after a throw is another picture of the camera as it
    is (and a moved camera's throw may show no die at all): it counts."""
    tray = Tray(measure, "r1700014")
    asked = _folder(tmp_path, tray.name, ["", "-moved", "-moved", "-moved-t2"], "asked")
    source = CameraDiceSource(ImageFolderSource(asked), lambda r: None, TrayCalibration(),
                              learned=_learned(tray))
    assert _feed(source, asked, asked=(2,)) == ["", "", "", "cam moved: learn 0/3"]
    # the nudged camera's tray with its dice taken away: painted over from the floor round them
    frame, _ = tray.picture("-moved")
    height, width = frame.shape[:2]
    gone = np.zeros((height, width), np.uint8)
    moved = FIXTURES / "images" / f"{tray.name}-moved.jpg"
    for x, y, w, h in measure.dice_boxes(FIXTURES, moved, frame.shape):
        cv2.circle(gone, (round(x), round(y)), round(0.9 * max(w, h)), 255, -1)
    emptied = _folder(tmp_path, tray.name, ["", "-moved"], "emptied")
    cv2.imwrite(str(emptied / "02.png"), cv2.inpaint(frame, gone, 9, cv2.INPAINT_TELEA))
    source = CameraDiceSource(ImageFolderSource(emptied), lambda r: None, TrayCalibration(),
                              learned=_learned(tray))
    assert _feed(source, emptied) == ["", "", "cam moved: learn 0/3"]


def test_a_camera_in_place_or_a_calibrated_region_is_never_learned_again(measure, tmp_path):
    tray = Tray(measure, "r1700014")
    still = _folder(tmp_path, tray.name, ["", "-t2", "-t3", "-t2", "-t3"])
    source = CameraDiceSource(ImageFolderSource(still), lambda r: None, TrayCalibration(),
                              learned=_learned(tray))
    assert _feed(source, still) == [""] * 5 and not source.learning
    # One throw seen moved, between throws in place (a match gone wrong, say), is no move:
    # the throws that see it moved must follow each other.
    between = _folder(tmp_path, tray.name, ["", "-moved", "-t2", "-moved-t2", "-t3"], "between")
    source = CameraDiceSource(ImageFolderSource(between), lambda r: None, TrayCalibration(),
                              learned=_learned(tray))
    assert _feed(source, between) == [""] * 5 and not source.learning
    # A region drawn by calibration is the calibration's: a moved camera is for `calibrate`.
    moved = _folder(tmp_path, tray.name, ["", "-moved", "-moved-t2", "-moved-t3"], "moved")
    calibrated = TrayCalibration(region=(0.05, 0.05, 0.9, 0.9))
    source = CameraDiceSource(ImageFolderSource(moved), lambda r: None, calibrated, learned=_learned(tray))
    assert _feed(source, moved) == [""] * 4 and not source.learning


def test_a_view_is_immutable_and_compares_by_its_picture():
    a = take_view(np.zeros((48, 64, 3), np.uint8), ((0.5, 0.5),))
    assert a == TrayView(a.picture, ((0.5, 0.5),))
    with pytest.raises(AttributeError):
        a.picture = b""  # type: ignore[misc]


def test_the_table_s_oled_says_the_camera_moved_and_its_file_keeps_it(measure, tmp_path):
    """Through the table's camera feed, as `bunco-pi-table` runs it: the set-up learned before
    (its file), two throws after the knock, then the OLED's line as the next dice tumble."""
    from bunco_pi.table.camera_feed import CameraFeed
    from bunco_pi.table.events import DiceStatus

    tray = Tray(measure, "r1700014")
    folder = _folder(tmp_path, tray.name, ["", "-moved", "-moved-t2", "-moved-t3"])
    learned = tmp_path / "dice-learned.json"
    save_learned(_learned(tray), learned)
    posted: list[object] = []
    feed = CameraFeed(f"folder:{folder}", posted.append, learned_path=learned, frame_timeout=5.0)
    assert feed.learned.view == tray.view
    feed.start()
    deadline = time.monotonic() + 120
    while feed.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert feed.ran_out
    feed.stop()
    said = [e.detail for e in posted if isinstance(e, DiceStatus)]
    assert said[:2] == ["rolling...", "rolling..."]  # learned: nothing to say as it tumbles
    assert said[-2:] == ["cam moved: learn 0/3", "camera stopped"], said  # the folder ran out
    data = json.loads(learned.read_text())
    assert data["moved"] is True and data["view"] is None and data["face"] is None
    look = _learned(tray).look
    assert data["kept"] == {"face": list(look.face), "pip": list(look.pip)}
