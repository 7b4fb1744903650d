"""Tray calibration: what it measures from an empty tray, and its file's errors."""

import json

import numpy as np
import pytest
from drawn_dice import draw_tray

from bunco_pi.errors import UserError
from bunco_pi.vision.calibration import (
    TrayCalibration,
    calibrate,
    find_tray,
    load_calibration,
    save_calibration,
)


def empty_tray_on_a_table():
    image = np.full((480, 640, 3), 170, np.uint8)  # a light table
    image[60:420, 100:560] = 70  # the dark tray floor
    return image


def test_the_tray_is_found_around_the_middle_of_the_frame():
    region = find_tray(empty_tray_on_a_table()[:, :, 0])
    assert region == pytest.approx((100 / 640, 60 / 480, 460 / 640, 360 / 480), abs=0.01)


def test_a_featureless_frame_is_all_tray():
    assert find_tray(np.full((480, 640), 80, np.uint8)) == (0.0, 0.0, 1.0, 1.0)


def test_calibration_saves_and_loads_the_same_settings(tmp_path):
    result = calibrate([empty_tray_on_a_table()], die_size=56)
    path = tmp_path / "tray.json"
    save_calibration(result.calibration, path)
    assert load_calibration(path) == result.calibration
    assert result.calibration.region[0] == pytest.approx(100 / 640, abs=0.01)
    assert result.calibration.pip_block == 39  # 0.7 x 56 px, odd
    assert any("exposure left automatic" in note for note in result.notes)


def test_the_calibrated_region_is_what_the_reader_looks_at():
    frame = empty_tray_on_a_table()
    calibration = calibrate([frame]).calibration
    settings = calibration.reader_settings()
    assert settings.region == calibration.region
    assert settings.pips.block == calibration.pip_block


def test_several_frames_set_the_pixel_threshold_from_their_flicker():
    steady = [draw_tray([], noise=3.0, seed=i) for i in range(4)]
    flickering = [draw_tray([], tray=70 + step) for step in (0, 10, -8, 5)]
    assert calibrate(steady).calibration.pixel_threshold == 12.0
    assert calibrate(flickering).calibration.pixel_threshold == 29.0  # 1.5 x 18 + 2


def test_exposure_is_scaled_to_put_the_tray_at_the_target_level():
    frame = np.full((480, 640, 3), 180, np.uint8)
    result = calibrate([frame], exposure={"ExposureTime": 20000.0, "AnalogueGain": 2.0})
    assert result.calibration.exposure == {"ExposureTime": 10000.0, "AnalogueGain": 2.0}


def test_a_tray_too_bright_for_white_dice_is_refused():
    with pytest.raises(UserError, match="too bright"):
        calibrate([np.full((480, 640, 3), 230, np.uint8)])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", r"tray\.json:1: not valid JSON"),
        ("[]", "expected a JSON object"),
        ('{"colour": 1}', "unknown setting 'colour'"),
        ('{"region": [0, 0, 2, 1]}', "setting 'region' must be"),
        ('{"settle_frames": 0}', "setting 'settle_frames' must be a whole number"),
        ('{"min_confidence": "high"}', "setting 'min_confidence' must be a number"),
        ('{"version": 9}', "version 9"),
        ('{"reader": "magic"}', "setting 'reader' must be 'both' or 'first' or 'pips', got 'magic'"),
    ],
)
def test_a_bad_calibration_file_is_a_one_line_error_naming_it(tmp_path, content, message):
    path = tmp_path / "tray.json"
    path.write_text(content)
    with pytest.raises(UserError, match=message) as caught:
        load_calibration(path)
    assert "\n" not in str(caught.value) and "tray.json" in str(caught.value)


def test_a_file_naming_the_reader_that_looks_again_by_its_old_name_reads_as_the_table_does(tmp_path):
    """Looking again was the reader "again" before the table's reader "both" did it."""
    path = tmp_path / "tray.json"
    path.write_text(json.dumps({"reader": "again"}))
    assert load_calibration(path).reader == "both"


def test_a_hand_written_file_may_give_only_some_settings(tmp_path):
    path = tmp_path / "tray.json"
    path.write_text(json.dumps({"dice": 2, "settle_frames": 8}))
    assert load_calibration(path) == TrayCalibration(dice=2, settle_frames=8)
