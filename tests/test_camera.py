"""The camera source: real OpenCV capture of image sequences, one result per settled throw."""

import queue
import sys

import cv2
import numpy as np
import pytest
from drawn_dice import draw_tray

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import (
    CameraDiceSource,
    ImageFolderSource,
    OpenCVSource,
    PicameraSource,
)
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.verdict import SettledRoll, Unsure

ROLL_A = [(3, 150, 150, 10), (5, 420, 160, 35), (1, 300, 360, 60)]
ROLL_B = [(6, 200, 120, 0), (2, 480, 300, 20), (4, 160, 380, 45)]
TWO = [(6, 200, 120, 0), (2, 480, 300, 20)]


def tumbling(count, seed):
    rng = np.random.default_rng(seed)
    return [draw_tray([(int(rng.integers(1, 7)), *rng.uniform(60, 420, 2), rng.uniform(0, 90))
                       for _ in range(3)]) for _ in range(count)]


def still(dice, count, seed=0):
    return [draw_tray(dice, noise=2.0, seed=seed + i) for i in range(count)]


def night_at_the_tray():
    """Start-up with a roll lying there, then throws: 3 dice, 2 dice, picked up, 3 dice."""
    return (
        still(ROLL_A, 7)
        + tumbling(5, 1) + still(ROLL_B, 8, 10)
        + tumbling(5, 2) + still(TWO, 8, 20)
        + tumbling(5, 3) + still([], 8, 30)
        + tumbling(5, 4) + still(ROLL_A, 8, 40)
    )


def write_sequence(folder, frames):
    for i, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"frame_{i:03d}.png"), frame)
    return str(folder / "frame_%03d.png")


def drain(results):
    out = []
    while True:
        try:
            out.append(results.get_nowait())
        except queue.Empty:
            return out


def test_a_night_through_opencv_gives_one_result_per_throw_on_a_queue(tmp_path):
    pattern = write_sequence(tmp_path, night_at_the_tray())
    results: queue.Queue = queue.Queue()
    rolling = []
    source = CameraDiceSource(OpenCVSource(pattern), results, TrayCalibration(),
                              on_rolling=lambda: rolling.append(1))
    source.start()
    source.join(timeout=60)
    assert not source.running
    got = drain(results)
    assert got == [
        SettledRoll((6, 2, 4), got[0].confidence, seq=0),
        Unsure("saw 2 dice, not 3"),
        SettledRoll((3, 5, 1), got[2].confidence, seq=1),
    ]
    assert len(rolling) == 4


def test_a_callback_gets_results_and_rearm_reads_the_same_tray_again(tmp_path):
    frames = still(ROLL_A, 7) + tumbling(4, 5) + still(ROLL_B, 8, 10)
    got = []
    pattern = write_sequence(tmp_path, frames)
    source = CameraDiceSource(OpenCVSource(pattern), got.append)
    source.run()
    assert [r.faces for r in got] == [(6, 2, 4)]
    again = CameraDiceSource(OpenCVSource(pattern), got.append)
    for frame in frames:
        again.process(frame)
    again.rearm()
    results = [again.process(frame) for frame in still(ROLL_B, 8, 50)]
    assert [r for r in results if r] == [SettledRoll((6, 2, 4), 1.0, seq=1)]


def test_roll_numbers_continue_from_first_seq_and_wrap(tmp_path):
    frames = (still(ROLL_A, 7) + tumbling(4, 5) + still(ROLL_B, 8, 10)
              + tumbling(4, 6) + still(ROLL_A, 8, 30))
    source = CameraDiceSource(OpenCVSource(write_sequence(tmp_path, frames)), lambda r: None,
                              first_seq=65535)
    rolls = [r for r in map(source.process, frames) if r]
    assert [(r.seq, r.faces) for r in rolls] == [(65535, (6, 2, 4)), (0, (3, 5, 1))]


def test_a_folder_of_photos_holds_each_photo_for_some_frames(tmp_path):
    cv2.imwrite(str(tmp_path / "b.png"), draw_tray(ROLL_B))
    cv2.imwrite(str(tmp_path / "a.png"), draw_tray(ROLL_A))
    (tmp_path / "notes.txt").write_text("not a photo")
    folder = ImageFolderSource(tmp_path, hold=3)
    frames = []
    while (frame := folder.read()) is not None:
        frames.append(frame)
    assert len(frames) == 6
    assert np.array_equal(frames[0], frames[2]) and not np.array_equal(frames[2], frames[3])


def test_a_broken_camera_is_reported_not_scored():
    class Broken:
        def read(self):
            raise OSError("camera unplugged")

        def close(self):
            self.closed = True

    broken = Broken()
    got = []
    CameraDiceSource(broken, got.append).run()
    assert got == [Unsure("camera failed")] and broken.closed


def test_sources_that_cannot_open_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="OpenCV cannot open"):
        OpenCVSource(str(tmp_path / "none_%03d.png"))
    with pytest.raises(UserError, match="no .jpg/.png images"):
        ImageFolderSource(tmp_path)
    with pytest.raises(UserError, match="not a folder"):
        ImageFolderSource(tmp_path / "nowhere")


@pytest.mark.skipif("picamera2" in sys.modules, reason="picamera2 is installed here")
def test_without_picamera2_the_pi_camera_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails as on a PC
    with pytest.raises(UserError, match="sudo apt install python3-picamera2"):
        PicameraSource()
