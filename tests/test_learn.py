"""Setting the camera up by rolling: no empty-tray photo, never sure of a wrong face.

Issue: "No empty-tray photo needed. A group sets the camera up by rolling: the reader finds
the tray and learns its dice's colours from the first sure rolls; `dice calibrate` stays as
an option, never a requirement."
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from drawn_dice import draw_scene, scattered

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import (
    CameraDiceSource,
    ImageFolderSource,
    load_learned,
    save_learned,
)
from bunco_pi.table.camera_feed import CameraFeed, translate
from bunco_pi.table.events import DiceRoll, DiceStatus
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import list_photos, read_labels
from bunco_pi.vision.fusion import first_readings
from bunco_pi.vision.learn import (
    FULL_FRAME,
    LEARN_ROLLS,
    LearnedSetup,
    RollSample,
    applied,
    from_data,
    moved_camera,
    other_dice,
    propose_look,
    roll_sample,
    study,
    sure_by_both,
    to_data,
)
from bunco_pi.vision.net import read_net
from bunco_pi.vision.reader import read_pips
from bunco_pi.vision.reading import DieReading, FrameReading
from bunco_pi.vision.verdict import SettledRoll, Unsure

BLUE, RED, WHITE = (170, 80, 20), (40, 30, 190), (245, 245, 245)
BLUE_SET = dict(tray="white", face_colour=BLUE, pip_colour=WHITE)  # the real-photo set
RED_SET = dict(tray="white", face_colour=RED, pip_colour=WHITE)
HOLD = TrayCalibration().settle_frames + 2  # frames per photo: enough to settle
SKIN = (120, 160, 215)  # BGR of a hand in lamp light


def lab_distance(a, b) -> float:
    def lab(colour):
        pixel = np.array([[colour]], np.float32) / 255.0
        return cv2.cvtColor(pixel, cv2.COLOR_BGR2Lab)[0, 0]

    return float(np.linalg.norm(lab(a) - lab(b)))


def in_reading_order(truth) -> tuple[int, ...]:
    return tuple(face for face, _, _, _ in sorted(truth, key=lambda d: (d[2], d[1])))


def with_hand(frame: np.ndarray, x: int = 560, y: int = 420) -> np.ndarray:
    """A hand reaching in from a corner: a palm and four fingers, shaded, skin-coloured."""
    hand = frame.copy()
    cv2.ellipse(hand, (x, y), (95, 70), -30, 0, 360, SKIN, -1, cv2.LINE_AA)
    for k in range(4):
        angle = math.radians(-150 + 18 * k)
        tip = (int(x + 170 * math.cos(angle)), int(y + 170 * math.sin(angle)))
        cv2.line(hand, (x, y), tip, SKIN, 26, cv2.LINE_AA)
    shade = cv2.GaussianBlur(hand.astype(np.float32), (0, 0), 3)
    return np.clip(shade, 0, 255).astype(np.uint8)


# --- the pure part: arrays in, settings out --------------------------------------------


def test_coloured_dice_are_learned_from_rolls_and_only_then_scored():
    setup, calibration = LearnedSetup(), TrayCalibration()
    rng = np.random.default_rng(9100)
    scored, wrong = [], 0
    for throw in range(6):
        truth = scattered(rng)
        frame = draw_scene(truth, seed=9200 + throw, **BLUE_SET)
        before = setup
        outcome = study(frame, setup, calibration, first_readings)
        setup = outcome.setup
        if outcome.reading is not None:
            scored.append(throw)
            wrong += outcome.reading.faces != in_reading_order(truth)
        if not before.learned and not setup.learned:
            # Colours guessed from a frame are tried, never trusted: nothing scored meanwhile.
            assert outcome.reading is None
            assert setup.status() == f"learning dice {setup.agreeing}/{LEARN_ROLLS}"
    assert wrong == 0
    assert setup.learned and setup.rolls >= LEARN_ROLLS
    assert scored and scored[0] == LEARN_ROLLS - 1  # learned with the third roll, and read
    assert scored == list(range(LEARN_ROLLS - 1, 6))
    look = setup.look
    assert look is not None and look.coloured and look.pips == "light"
    assert lab_distance(look.face, BLUE) < 10
    assert setup.status() == ""
    # The readers then use the learned colours, as if calibrated with a dice picture.
    assert applied(setup, calibration).look == look


def test_white_dice_are_scored_from_the_first_sure_roll_and_learned_as_plain_grey():
    setup = LearnedSetup()
    rng = np.random.default_rng(9300)
    for throw in range(LEARN_ROLLS):
        truth = scattered(rng)
        frame = draw_scene(truth, tray="felt", seed=9400 + throw)
        outcome = study(frame, setup, TrayCalibration(), first_readings)
        assert outcome.reading is not None and outcome.reading.faces == in_reading_order(truth)
        setup = outcome.setup
    assert setup.learned and setup.look is not None and setup.look.plain_grey


def test_calibrated_dice_colours_win_over_learned_ones():
    learned = LearnedSetup(face=RED, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8))
    calibrated = TrayCalibration(dice_colour=BLUE, pip_colour=WHITE, region=(0.2, 0.2, 0.5, 0.5))
    assert applied(learned, calibrated) == calibrated
    assert applied(learned, TrayCalibration()).region == (0.1, 0.1, 0.8, 0.8)
    assert applied(learned, TrayCalibration()).dice_colour == RED


def test_a_camera_with_calibrated_dice_colours_learns_nothing(tmp_path):
    cv2.imwrite(str(tmp_path / "tray.png"), draw_scene([], **BLUE_SET))
    calibrated = TrayCalibration(dice_colour=BLUE, pip_colour=WHITE)
    earlier = LearnedSetup(face=RED, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8))
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, calibrated, learned=earlier)
    assert not source.learning and source.setup is None and source.status() == ""
    assert source.calibration == calibrated  # the learned file is left aside
    fresh = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(), learned=earlier)
    assert fresh.calibration.region == (0.1, 0.1, 0.8, 0.8) and fresh.calibration.look is not None


def test_only_dice_both_readers_are_sure_of_alike_count():
    def die(face, x, confidence=0.9):
        return DieReading(face, confidence, (x, 100.0), 25.0)

    three = FrameReading((die(2, 100), die(4, 200), die(6, 300)))
    assert sure_by_both(three, three, 3, 0.5) == three
    assert sure_by_both(three, FrameReading((die(2, 100), die(4, 200), die(5, 300))), 3, 0.5) is None
    assert sure_by_both(three, FrameReading((die(2, 100), die(4, 200))), 3, 0.5) is None
    assert sure_by_both(three, FrameReading((die(2, 100), die(4, 200), die(6, 300, 0.3))),
                        3, 0.5) is None
    moved = FrameReading((die(2, 100), die(4, 200), die(6, 380)))  # not at the same place
    assert sure_by_both(three, moved, 3, 0.5) is None
    assert sure_by_both(FrameReading((die(2, 100), die(None, 200), die(6, 300))), three,
                        3, 0.5) is None


def test_a_die_of_another_colour_is_no_sample_and_is_never_scored():
    truth = [(5, 160.0, 200.0, 10.0), (3, 330.0, 250.0, 40.0), (6, 480.0, 300.0, 0.0)]
    blue = draw_scene(truth, seed=1, **BLUE_SET)
    red = draw_scene(truth, seed=1, **RED_SET)
    mixed = blue.copy()
    mixed[:, 400:] = red[:, 400:]  # the third die is red: another set's die
    # Even if both readers were sure of all three, their colours teach nothing together.
    three = FrameReading(tuple(DieReading(face, 0.9, (x, y), 28.0) for face, x, y, _ in truth))
    assert roll_sample(mixed, three) is None
    sample = roll_sample(blue, three)
    assert sample is not None and lab_distance(sample.face, BLUE) < 10
    outcome = study(mixed, LearnedSetup(), TrayCalibration(), first_readings)
    assert outcome.reading is None and outcome.sample is None
    assert outcome.setup == LearnedSetup()
    # Learned blue dice: the red one is not a die of this set; the roll is not scored.
    learned = study(mixed, LearnedSetup(face=BLUE, pip=WHITE), TrayCalibration(), first_readings)
    assert learned.reading is None or learned.reading.faces == (5, 3, 6)


def test_colours_need_several_agreeing_rolls_so_one_odd_set_cannot_set_them():
    rng = np.random.default_rng(9500)
    setup = LearnedSetup()
    faces = []
    # Two rolls of a stranger's red dice, then the group's blue ones.
    for throw, scene in enumerate([RED_SET, RED_SET, BLUE_SET, BLUE_SET, BLUE_SET]):
        outcome = study(draw_scene(scattered(rng), seed=9600 + throw, **scene), setup,
                        TrayCalibration(), first_readings)
        setup = outcome.setup
        faces.append(setup.face)
    assert faces[:4] == [None] * 4  # two red and two blue agree with nothing learned
    assert setup.learned and setup.face is not None and lab_distance(setup.face, BLUE) < 10


def test_a_hand_in_the_frame_teaches_no_colour_and_scores_no_wrong_face():
    rng = np.random.default_rng(9700)
    setup = LearnedSetup()
    wrong = 0
    for throw in range(7):
        truth = scattered(rng)
        frame = draw_scene(truth, seed=9800 + throw, **BLUE_SET)
        if throw % 2 == 0:
            frame = with_hand(frame)
        outcome = study(frame, setup, TrayCalibration(), first_readings)
        setup = outcome.setup
        if outcome.reading is not None:
            wrong += outcome.reading.faces != in_reading_order(truth)
        if outcome.sample is not None:
            assert lab_distance(outcome.sample.face, BLUE) < 15
    assert wrong == 0
    assert setup.learned and lab_distance(setup.face, BLUE) < 10
    look = propose_look(with_hand(draw_scene([], **BLUE_SET)))
    assert look is None or lab_distance(look.face, SKIN) > 20  # a hand is no die


def test_a_moved_camera_forgets_the_tray_and_keeps_the_dice_colours_to_read_with():
    learned = LearnedSetup(face=BLUE, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8), die_width=0.09, rolls=3)
    moved = moved_camera(learned)
    assert not moved.learned and moved.moved and moved.kept == learned.look
    assert (moved.region, moved.die_width, moved.view, moved.samples) == (None, None, None, ())
    assert moved.status() == f"cam moved: learn 0/{LEARN_ROLLS}"
    # read with meanwhile, on the whole frame; calibrated colours still win
    assert applied(moved, TrayCalibration()).look == learned.look
    assert applied(moved, TrayCalibration()).region == TrayCalibration().region
    assert applied(moved, TrayCalibration()).die_width is None
    red = TrayCalibration(dice_colour=RED, pip_colour=WHITE)
    assert applied(moved, red).look == red.look
    assert moved_camera(moved) == moved  # knocked again while learning: the colours still kept
    assert moved_camera(LearnedSetup(moved=True)) == LearnedSetup(moved=True)

    # The group's blue dice, after the knock: scored from the first sure throw, as before it,
    # and the tray learned again from the next agreeing throws.
    rng = np.random.default_rng(9150)
    setup, scored, wrong = moved, [], 0
    for throw in range(LEARN_ROLLS + 1):
        truth = scattered(rng)
        outcome = study(draw_scene(truth, seed=9160 + throw, **BLUE_SET), setup, TrayCalibration(),
                        first_readings)
        setup = outcome.setup
        if outcome.reading is not None:
            scored.append(throw)
            wrong += outcome.reading.faces != in_reading_order(truth)
    assert wrong == 0 and scored == list(range(LEARN_ROLLS + 1))
    assert setup.learned and setup.region is not None and setup.view is not None
    assert setup.kept is None and not setup.moved
    assert lab_distance(setup.face, BLUE) < 10
    # Forgotten instead, the same throws score nothing until the colours are learned again.
    rng = np.random.default_rng(9150)
    forgotten = LearnedSetup(moved=True)
    outcome = study(draw_scene(scattered(rng), seed=9160, **BLUE_SET), forgotten, TrayCalibration(),
                    first_readings)
    assert outcome.reading is None


def test_after_a_move_the_frame_s_own_colours_are_tried_for_a_sample(monkeypatch):
    """White dice under blue colours kept from before a move, one blue throw learned from since:
    mapped by the blue, nothing is sure; in the frame's own colours (plain grey) the throw is a
    sample. (The samples lean to the blue, and the guess from the picture is made the blue too,
    so that only the own colours can give it.)"""
    from bunco_pi.vision import learn
    from bunco_pi.vision.look import DiceLook

    monkeypatch.setattr(learn, "propose_look", lambda frame, region=None: DiceLook(BLUE, WHITE))
    kept = moved_camera(LearnedSetup(face=BLUE, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8),
                                     die_width=0.09, rolls=3))
    kept = replace(kept, samples=(RollSample(BLUE, WHITE, ((0.5, 0.5),), 0.09),), rolls=1)
    frame = draw_scene(scattered(np.random.default_rng(9190)), tray="felt", seed=9191)
    blue = applied(kept, TrayCalibration()).reader_settings()
    assert sure_by_both(*first_readings(frame, blue), 3, 0.5) is None  # not in the colours kept
    outcome = study(frame, kept, TrayCalibration(), first_readings)
    assert outcome.sample is not None and lab_distance(outcome.sample.face, (225, 230, 232)) < 15


def test_a_box_carried_to_a_table_of_other_dice_learns_those():
    """The colours kept after a move are trusted only until rolls agree: a box moved to a
    table of red dice learns red, and reads nothing wrong meanwhile."""
    rng = np.random.default_rng(9170)
    setup = moved_camera(LearnedSetup(face=BLUE, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8),
                                      die_width=0.09, rolls=3))
    wrong = 0
    for throw in range(LEARN_ROLLS + 2):
        truth = scattered(rng)
        outcome = study(draw_scene(truth, seed=9180 + throw, **RED_SET), setup, TrayCalibration(),
                        first_readings)
        setup = outcome.setup
        if outcome.reading is not None:
            wrong += outcome.reading.faces != in_reading_order(truth)
    assert wrong == 0
    assert setup.learned and lab_distance(setup.face, RED) < 10 and setup.kept is None


def test_dice_of_other_colours_thrown_again_and_again_start_the_learning_again():
    """A stranger's throw or two between the table's own change nothing; three in a row of
    one other set make the set-up learn again, the colours learned kept meanwhile (another
    group's dice, for good)."""
    blue = LearnedSetup(face=BLUE, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8), die_width=0.09, rolls=3)
    own = RollSample((172, 78, 24), WHITE, ((0.3, 0.3),), 0.09)  # the blue dice, a little off
    red = RollSample(RED, WHITE, ((0.5, 0.5),), 0.09)
    green = RollSample((40, 160, 40), WHITE, ((0.5, 0.5),), 0.09)
    setup = blue
    for sample in [red, red, own, red, None, red]:  # a throw of its own breaks the row
        setup = other_dice(setup, sample)
    assert setup.learned and setup.look == blue.look and len(setup.strangers) == 2
    assert other_dice(blue, own) is blue and other_dice(blue, None) is blue
    mixed = blue
    for sample in [red, green, red, green]:  # others, but not one set: not learned anew
        mixed = other_dice(mixed, sample)
    assert mixed.learned and mixed.look == blue.look
    # the edges: learning's own (faces within 18 Lab units, pips within 40)
    near = RollSample((152, 88, 38), WHITE, ((0.5, 0.5),), 0.09)  # 17 units off: the same dice
    far = RollSample((151, 89, 39), WHITE, ((0.5, 0.5),), 0.09)  # 19 units off: another set
    dark_pips = RollSample(BLUE, (30, 30, 30), ((0.5, 0.5),), 0.09)  # blue, with dark pips
    for sample, restarts in [(near, False), (far, True), (dark_pips, True)]:
        after = blue
        for _ in range(LEARN_ROLLS):
            after = other_dice(after, sample)
        assert after.learned is not restarts, sample
    setup = other_dice(setup, red)  # the third red throw in a row
    # learning again, the tray forgotten, the colours kept and read with meanwhile
    assert setup == LearnedSetup(kept=blue.look) and setup.status() == "new dice: learn 0/3"
    assert applied(setup, TrayCalibration()).look == blue.look
    assert other_dice(LearnedSetup(), red) == LearnedSetup()  # nothing learned: nothing to unlearn
    assert to_data(replace(blue, strangers=(red, red))) == to_data(blue)  # the row is not kept


def test_the_tray_holds_every_place_a_die_came_to_rest():
    rng = np.random.default_rng(9900)
    setup = LearnedSetup()
    spots = []
    for throw in range(LEARN_ROLLS):
        truth = scattered(rng)
        spots += [(x / 640, y / 480) for _, x, y, _ in truth]
        setup = study(draw_scene(truth, seed=9950 + throw, **BLUE_SET), setup,
                      TrayCalibration(), first_readings).setup
    assert setup.region is not None
    x, y, w, h = setup.region
    assert all(x <= sx <= x + w and y <= sy <= y + h for sx, sy in spots)
    assert setup.die_width == pytest.approx(56 / 640, rel=0.3)


def test_the_learning_lines_fit_the_oled_and_reach_it_as_they_are():
    setup = LearnedSetup()
    for line in (setup.status(), setup.not_scored()):
        assert len(line) <= 21
        assert translate(Unsure(line)) == DiceStatus(True, line)


def test_the_learned_settings_file_round_trips_and_refuses_what_it_did_not_write(tmp_path):
    setup = LearnedSetup(
        samples=(RollSample(BLUE, WHITE, ((0.25, 0.4), (0.5, 0.5)), 0.09),),
        face=BLUE, pip=WHITE, region=(0.1, 0.0, 0.8, 1.0), die_width=0.09, rolls=3)
    path = tmp_path / "dice-learned.json"
    assert load_learned(path) == LearnedSetup()  # no file yet: a fresh start
    save_learned(setup, path)
    assert load_learned(path) == from_data(to_data(setup)) == setup
    assert "kept" not in to_data(setup)  # only while learning again: as older files
    assert [p.name for p in tmp_path.iterdir()] == ["dice-learned.json"]  # no temp file left
    moved = moved_camera(setup)  # the colours kept while the tray is learned again
    save_learned(moved, path)
    assert load_learned(path) == moved and moved.kept == setup.look
    other = LearnedSetup(kept=setup.look)  # another set came: the colours kept, not moved
    save_learned(other, path)
    assert load_learned(path) == other and other.status() == "new dice: learn 0/3"
    legacy = to_data(moved)
    legacy["before_move"] = legacy.pop("kept")  # as the file was written before "kept"
    path.write_text(json.dumps(legacy))
    assert load_learned(path) == moved
    for text, expect in [
        ("{", "not valid JSON"),
        ('{"version": 9}', "version 9"),
        ('{"version": 1, "face": [1, 2]}', "'face' must be"),
        ('{"version": 1, "face": [1, 2, 3]}', "both colours or both null"),
        ('{"version": 1, "region": [0.5, 0, 0.9, 1]}', "inside the frame"),
        ('{"version": 1, "colour": 1}', "unknown setting 'colour'"),
        ('{"version": 1, "kept": [1, 2, 3]}', "'kept' must be an object"),
        ('{"version": 1, "before_move": [1, 2, 3]}', "'before_move' must be an object"),
        ('{"version": 1, "kept": null, "before_move": null}', "one setting: give one"),
        ('{"version": 1, "kept": {"face": [1, 2, 3]}}', "'kept' must be an object"),
        ('{"version": 1, "kept": {"face": [1, 2, 3], "pip": null}}', "must name both colours"),
        ('{"version": 1, "kept": {"face": [1, 2, 300], "pip": [1, 2, 3]}}',
         "'kept face' must be"),
        ('{"version": 1, "face": [1, 2, 3], "pip": [1, 2, 3], "moved": true,'
         ' "kept": {"face": [1, 2, 3], "pip": [1, 2, 3]}}', "null once 'face' is learned"),
    ]:
        path.write_text(text)
        with pytest.raises(UserError, match=expect) as err:
            load_learned(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_write_cut_short_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "dice-learned.json"
    save_learned(LearnedSetup(rolls=1), path)
    before = path.read_text()

    def power_cut(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        save_learned(LearnedSetup(face=BLUE, pip=WHITE, rolls=3), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["dice-learned.json"]


# --- the shell: a camera source of frames, no calibration file ---------------------------


def feed_folder(folder: Path, source: CameraDiceSource) -> dict[str, object]:
    """Each photo of the folder through the camera source; its result by photo name."""
    names = sorted(p.stem for p in folder.iterdir())
    frames = ImageFolderSource(folder, hold=HOLD)
    results: dict[str, object] = {}
    index = 0
    while (frame := frames.read()) is not None:
        result = source.process(frame)
        if result is not None:
            name = names[index // HOLD]
            assert name not in results, f"{name} read twice"  # e.g. when colours were learned
            results[name] = result
        index += 1
    return results


def test_drawn_blue_dice_through_the_camera_source_with_poison_between(tmp_path):
    rng = np.random.default_rng(10100)
    truths = {}
    for throw in range(9):
        truth = scattered(rng)
        scene = RED_SET if throw == 3 else BLUE_SET  # a stranger's set once
        frame = draw_scene(truth, seed=10200 + throw, **scene)
        if throw in (1, 5):
            frame = with_hand(frame)
        cv2.imwrite(str(tmp_path / f"{throw:02d}.png"), frame)
        truths[f"{throw:02d}"] = in_reading_order(truth)
    kept = []
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(),
                              learned=LearnedSetup(), on_learned=kept.append)
    assert source.learning and source.status() == "learning dice 0/3"
    results = feed_folder(tmp_path, source)
    rolls = {name: r for name, r in results.items() if isinstance(r, SettledRoll)}
    assert all(r.faces == truths[name] for name, r in rolls.items())  # never a wrong face
    # The stranger's red set may be scored, read right: while learning, the table's reader
    # reads a throw as it would any tray it has no colours for (looking again reads any
    # colour). It is kept as a sample, one of another colour, which cannot set the colours:
    # those learned are the blue set's (below).
    assert len(rolls) >= 3
    assert any(isinstance(r, Unsure) and r.reason.startswith("learning") for r in results.values())
    assert not source.learning and source.status() == ""
    assert kept and kept[-1].learned and lab_distance(kept[-1].face, BLUE) < 10
    assert source.calibration.look is not None and source.calibration.look.coloured
    # The picture the tray was learned from is kept, its dice where the last sure roll lay,
    # to see a camera moved later (tests/test_tray_view.py).
    view = kept[-1].view
    assert view is not None
    assert np.allclose(view.dice, kept[-1].samples[-1].spots, atol=1e-4)


def test_after_a_move_a_camera_source_sees_and_learns_dice_unlike_the_colours_kept(tmp_path):
    """Through the camera source: a box whose blue dice were learned, its camera moved, now
    over red dice on a white tray. The settle check must not look through the blue kept: by
    them, red dice are as grey as the white tray, and no throw would ever settle."""
    rng = np.random.default_rng(10300)
    cv2.imwrite(str(tmp_path / "00.png"), draw_scene([], seed=10399, **RED_SET))  # the tray at start
    truths = {}
    for throw in range(1, LEARN_ROLLS + 3):
        truth = scattered(rng)
        cv2.imwrite(str(tmp_path / f"{throw:02d}.png"), draw_scene(truth, seed=10400 + throw, **RED_SET))
        truths[f"{throw:02d}"] = in_reading_order(truth)
    blue = LearnedSetup(face=BLUE, pip=WHITE, region=(0.1, 0.1, 0.8, 0.8), die_width=0.09, rolls=3)
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(),
                              learned=moved_camera(blue))
    assert source.status() == "cam moved: learn 0/3"
    results = feed_folder(tmp_path, source)
    assert set(results) == set(truths)  # every throw settled and was said something of
    rolls = {name: r for name, r in results.items() if isinstance(r, SettledRoll)}
    assert all(r.faces == truths[name] for name, r in rolls.items())  # never a wrong face
    assert not source.learning and source.setup is not None
    assert lab_distance(source.setup.face, RED) < 10 and source.setup.kept is None
    assert rolls  # and the throws after it are scored in the colours learned


def test_a_box_that_learned_blue_dice_reads_another_group_s_red_ones(tmp_path):
    """The box that learned one group's blue dice, at the next night over another group's red
    dice on a white tray, its file kept. The settle check sees plain grey beside the grey blue
    dice map to (red is as grey as the tray there), so every throw settles and is said
    something of; the red dice are read in their own colours beside the blue mapping."""
    rng = np.random.default_rng(10500)
    cv2.imwrite(str(tmp_path / "00.png"), draw_scene([], seed=10599, **RED_SET))  # the tray at start
    truths = {}
    for throw in range(1, 6):
        truth = scattered(rng)
        cv2.imwrite(str(tmp_path / f"{throw:02d}.png"), draw_scene(truth, seed=10600 + throw, **RED_SET))
        truths[f"{throw:02d}"] = in_reading_order(truth)
    blue = LearnedSetup(face=BLUE, pip=WHITE, region=FULL_FRAME, die_width=0.09, rolls=3)
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(),
                              learned=blue)
    assert not source.learning and source.calibration.look is not None
    results = feed_folder(tmp_path, source)
    assert set(results) == set(truths)  # every throw settled and was said something of
    rolls = {name: r for name, r in results.items() if isinstance(r, SettledRoll)}
    assert all(r.faces == truths[name] for name, r in rolls.items())  # never a wrong face
    assert len(rolls) >= 3


def test_only_throws_of_a_roll_s_dice_and_not_read_again_count_as_another_set():
    """A throw of two red dice is not a roll's count, and a throw read again at a button's
    asking is the same throw: neither counts toward the row that starts learning again."""
    blue = LearnedSetup(face=BLUE, pip=WHITE, region=FULL_FRAME, die_width=0.09, rolls=3)
    source = CameraDiceSource(None, lambda r: None, TrayCalibration(), learned=blue,
                              reopen=lambda: ImageFolderSource(Path(".")))
    rng = np.random.default_rng(10900)

    def throw(frame: np.ndarray, asked: bool = False) -> None:
        if asked:
            source.rearm()
        for _ in range(HOLD):
            source.process(frame)

    throw(draw_scene([], seed=10901, **RED_SET))  # the tray at start
    for k in range(LEARN_ROLLS):  # two dice, three times
        throw(draw_scene(scattered(rng, count=2), seed=10910 + k, **RED_SET))
    assert not source.learning
    second = draw_scene(scattered(rng), seed=10920, **RED_SET)
    throw(draw_scene(scattered(rng), seed=10921, **RED_SET))
    throw(second)
    throw(second, asked=True)  # read again: the same throw
    assert not source.learning and len(source.setup.strangers) == 2
    throw(draw_scene(scattered(rng), seed=10922, **RED_SET))  # the third throw of three
    assert source.learning and source.status() == "new dice: learn 0/3"


def test_a_box_that_learned_blue_dice_learns_red_ones_thrown_again_and_again(tmp_path):
    """As above, but the red set stays: after three throws of it the box learns again, and
    learns the red dice and the tray, kept in its file, so that they are read in their mapped
    grey too."""
    rng = np.random.default_rng(10700)
    cv2.imwrite(str(tmp_path / "00.png"), draw_scene([], seed=10799, **RED_SET))
    truths = {}
    for throw in range(1, 11):
        truth = scattered(rng)
        cv2.imwrite(str(tmp_path / f"{throw:02d}.png"), draw_scene(truth, seed=10800 + throw, **RED_SET))
        truths[f"{throw:02d}"] = in_reading_order(truth)
    kept = []
    blue = LearnedSetup(face=BLUE, pip=WHITE, region=FULL_FRAME, die_width=0.09, rolls=3)
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(),
                              learned=blue, on_learned=kept.append)
    results = feed_folder(tmp_path, source)
    assert set(results) == set(truths)
    rolls = {name: r for name, r in results.items() if isinstance(r, SettledRoll)}
    assert all(r.faces == truths[name] for name, r in rolls.items())  # never a wrong face
    assert kept, "never began learning again"
    assert kept[0] == LearnedSetup(kept=blue.look)  # learning again, written to the file
    assert not source.learning and kept[-1].learned and lab_distance(kept[-1].face, RED) < 10
    assert source.calibration.look is not None and lab_distance(source.calibration.look.face, RED) < 10


RENDERED = Path(__file__).with_name("fixtures") / "rendered"


def test_while_learning_the_table_reads_what_looking_again_reads_and_learns_nothing_from_it(tmp_path):
    """Green dice, white pips, on dark felt (a render of the set the thresholds were chosen on,
    never trained on): in plain grey neither reader of the first look sees a die, and under
    the colours guessed from the picture neither is sure, so learning alone leaves every such
    throw unscored ("learning 0/3: re-roll") and never learns the dice; looking again reads
    all three."""
    frame = cv2.imread(str(RENDERED / "green.jpg"))
    truth = read_labels(RENDERED / "green.txt", frame.shape[1], frame.shape[0])
    assert not read_pips(frame).dice and not read_net(frame).dice
    cv2.imwrite(str(tmp_path / "00.png"), np.full_like(frame, np.median(frame, axis=(0, 1))))  # empty
    cv2.imwrite(str(tmp_path / "01.png"), frame)
    kept = []
    source = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(),
                              learned=LearnedSetup(), on_learned=kept.append)
    results = feed_folder(tmp_path, source)
    (roll,) = results.values()
    assert isinstance(roll, SettledRoll) and sorted(roll.faces) == sorted(d.face for d in truth)
    assert source.learning and kept == [] and source.status() == "learning dice 0/3"
    # A calibration that narrowed the reader keeps learning's own rule: both readers sure.
    narrowed = CameraDiceSource(ImageFolderSource(tmp_path), lambda r: None, TrayCalibration(reader="first"),
                                learned=LearnedSetup())
    assert list(feed_folder(tmp_path, narrowed).values()) == [Unsure("learning 0/3: re-roll")]


def photos_of_three(photos: Path, count: int) -> list:
    held_out = list_photos(photos, "heldout")
    three = [p for p in held_out
             if len([line for line in p.label_path.read_text().splitlines() if line.strip()]) == 3]
    return three[:count]


def labelled_faces(photo) -> tuple[int, ...]:
    image = cv2.imread(str(photo.image_path))
    truth = read_labels(photo.label_path, image.shape[1], image.shape[0])
    return tuple(sorted(d.face for d in truth))


def test_real_photos_with_no_calibration_file_reach_sure_readings(photos, tmp_path):
    chosen = photos_of_three(photos, 12)
    folder = tmp_path / "tray"
    folder.mkdir()
    truth = {}
    for k, photo in enumerate(chosen):
        shutil.copy(photo.image_path, folder / f"{k:02d}_{photo.name}.jpg")
        truth[f"{k:02d}_{photo.name}"] = labelled_faces(photo)
    # Poison between the rolls: real dice of other colours (red, yellow, green), and one of
    # the group's own photos with a hand reaching in.
    mixed = photos.parent / "dice-photos-mixed"
    if (mixed / "images" / "Image_63.jpg").is_file():
        shutil.copy(mixed / "images" / "Image_63.jpg", folder / "04a_other_colours.jpg")
        image = cv2.imread(str(mixed / "images" / "Image_63.jpg"))
        faces = read_labels(mixed / "labels" / "Image_63.txt", image.shape[1], image.shape[0])
        truth["04a_other_colours"] = tuple(sorted(d.face for d in faces))
    cv2.imwrite(str(folder / "06a_hand.png"), with_hand(cv2.imread(str(chosen[6].image_path))))
    truth["06a_hand"] = labelled_faces(chosen[6])  # if read sure, as the dice under the hand
    kept = []
    source = CameraDiceSource(ImageFolderSource(folder), lambda r: None, TrayCalibration(),
                              learned=LearnedSetup(), on_learned=kept.append)
    results = feed_folder(folder, source)
    rolls = {name: r for name, r in results.items() if isinstance(r, SettledRoll)}
    assert all(tuple(sorted(r.faces)) == truth[name] for name, r in rolls.items()), rolls
    assert len(rolls) >= 8, results  # 11 of the group's rolls read after the start-up photo
    assert not source.learning and kept[-1].learned
    assert kept[-1].look is not None and kept[-1].look.plain_grey  # white dice, dark pips


def run_out(feed: CameraFeed, seconds: float = 120.0) -> None:
    """Wait until the folder's photos ran out (bounded)."""
    deadline = time.monotonic() + seconds
    while feed.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert feed.ran_out
    feed.stop()


def test_the_table_keeps_what_rolling_taught_across_a_restart(photos, tmp_path):
    folder = tmp_path / "tray"
    folder.mkdir()
    for k, photo in enumerate(photos_of_three(photos, 6)):
        shutil.copy(photo.image_path, folder / f"{k:02d}.jpg")
    learned = tmp_path / "dice-learned.json"
    posted: list[object] = []
    feed = CameraFeed(f"folder:{folder}", posted.append, learned_path=learned, frame_timeout=5.0)
    feed.start()
    run_out(feed)
    assert posted[0] == DiceStatus(True, "learning dice 0/3")  # said on the OLED at start
    # ... and, as the dice tumble, how far it got, instead of "rolling...".
    said = [e.detail for e in posted if isinstance(e, DiceStatus)]
    assert "learning dice 1/3" in said and "learning dice 2/3" in said
    assert [e for e in posted if isinstance(e, DiceRoll)]
    data = json.loads(learned.read_text())
    assert data["face"] is not None and data["region"] is not None
    again: list[object] = []
    restarted = CameraFeed(f"folder:{folder}", again.append, learned_path=learned)
    assert restarted.learned.learned
    restarted.start()
    run_out(restarted)
    assert not any(isinstance(e, DiceStatus) and e.detail.startswith("learning") for e in again)


def test_a_table_with_a_camera_source_and_no_calibration_file_scores_real_rolls(
    mock_factory, tmp_path, photos
):
    # "a table with `[camera] source` set and no calibration file must work"
    import io

    from luma.core.device import dummy

    from bunco_pi.rules.house import preset
    from bunco_pi.table.box import TableBox
    from bunco_pi.table.config import load_config
    from bunco_pi.table.standalone_link import StandaloneLink

    folder = tmp_path / "throws"
    folder.mkdir()
    chosen = photos_of_three(photos, 7)
    for k, photo in enumerate(chosen):
        shutil.copy(photo.image_path, folder / f"{k:02d}.jpg")
    config_path = tmp_path / "table.toml"
    config_path.write_text(f'[camera]\nsource = "folder:{folder}"\n'
                           '[table]\nplayers = ["Ann", "Bea", "Cat", "Dot"]\n')
    config = load_config(config_path)
    assert config.camera.calibration is None  # no dice-tray.json anywhere
    rules = preset("classic")
    box = TableBox(config, rules, StandaloneLink(rules, config.players), tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), log=io.StringIO())
    box.start()
    try:
        deadline = time.monotonic() + 120
        while box.node.dice_warning == "" and time.monotonic() < deadline:
            assert box.node.sync()
            time.sleep(0.05)
        assert box.node.dice_warning == "camera stopped"  # the folder ran out
        log = [sorted(e["roll"]) for e in box.node.book.log if "roll" in e]
        expected = [list(labelled_faces(p)) for p in chosen[1:]]  # the first: lying there
        # Each roll scored is the next photo's labelled faces, in order (some may be skipped
        # as not sure, none scored with other faces).
        remaining = iter(expected)
        assert all(any(roll == truth for truth in remaining) for roll in log), (log, expected)
        assert len(log) >= 4
    finally:
        box.stop()
    learned = json.loads((tmp_path / "dice-learned.json").read_text())
    assert learned["face"] is not None  # kept beside the config


def test_learned_colours_do_not_make_the_roll_lying_there_read_again():
    from bunco_pi.vision.look import DiceLook
    from bunco_pi.vision.settle import Event, SettleDetector, SettleSettings

    empty = draw_scene([], tray="felt", face_colour=RED, pip_colour=WHITE)
    roll = draw_scene([(5, 200.0, 200.0, 10.0), (2, 400.0, 260.0, 30.0)], tray="felt",
                      face_colour=RED, pip_colour=WHITE)

    def settle(detector, frame):
        events = [detector.feed(frame) for _ in range(HOLD)]
        return [e for e in events if e is not None]

    def learned_detector(relook: bool) -> SettleDetector:
        detector = SettleDetector()
        settle(detector, empty)  # start-up: taken as read
        settle(detector, roll)  # the roll it learned the colours from
        if relook:
            detector.relook(DiceLook(RED, WHITE), roll)
        else:  # what a plain swap of the settings would do
            detector.settings = SettleSettings(look=DiceLook(RED, WHITE))
        return detector

    # A plain swap once read the roll lying there twice when a hand passed over it; now
    # thumbnails of another shape are taken as read. (Left still, nothing is read either way.)
    swapped = learned_detector(relook=False)
    assert settle(swapped, roll) == []
    assert [e for e in map(swapped.feed, [with_hand(roll)] + [roll] * HOLD) if e] == [Event.ROLLING]
    assert settle(learned_detector(relook=True), roll) == []  # read once, not again
    again = learned_detector(relook=True)
    assert Event.SETTLED in settle(again, empty) + settle(again, roll)  # the next throw is read
