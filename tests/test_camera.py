"""The camera source: real OpenCV capture of image sequences, one result per settled throw."""

import queue
import sys
import threading

import cv2
import numpy as np
import pytest
from drawn_dice import draw_tray

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import (
    CameraBack,
    CameraDiceSource,
    ImageFolderSource,
    OpenCVSource,
    PicameraSource,
)
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import read_labels
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


@pytest.mark.parametrize(("reader", "faces"), [("both", [2, 2, 2]), ("pips", [2, 2, 3]),
                                              ("first", [2, 2, 2])])
def test_the_calibration_picks_the_reader_the_table_uses(photos, reader, faces):
    # A two beside a side pip: the pip reader alone is sure of a three. With the network, the
    # pip reader looks only at the top face the network found, and both read the labelled two.
    photo = cv2.imread(str(photos / "images" / "two_28.jpg"))
    assert sorted(d.face for d in read_labels(photos / "labels" / "two_28.txt", 640, 480)) == [2, 2, 2]
    empty = np.full_like(photo, int(np.median(photo)))
    got = []
    frames = ScriptedCamera(*[empty] * 6, *[photo] * 6)
    CameraDiceSource(frames, got.append, TrayCalibration(reader=reader)).run()
    assert len(got) == 1 and isinstance(got[0], SettledRoll)
    assert sorted(got[0].faces) == faces


def test_the_table_looks_again_where_the_two_readers_leave_dice_unscored_unless_set_not_to(monkeypatch):
    from bunco_pi.vision import fusion

    asked = []
    monkeypatch.setattr(fusion, "look_for_more", lambda frame, *_, **__: asked.append(frame) or [])
    blank = np.full((480, 640, 3), 90, np.uint8)  # no die seen: worth looking again
    for reader, looked in (("first", 0), ("both", 1)):
        source = CameraDiceSource(ScriptedCamera(), lambda _: None, TrayCalibration(reader=reader))
        assert source._read(blank).dice == ()
        assert len(asked) == looked
    two = draw_tray([(5, 150, 150, 10), (2, 400, 300, 40)])  # both read sure
    for dice, looked in ((2, 1), (3, 2)):  # a roll of three a die short: the third looked for
        source = CameraDiceSource(ScriptedCamera(), lambda _: None, TrayCalibration(dice=dice))
        assert [d.face for d in source._read(two).dice] == [5, 2]
        assert len(asked) == looked


def test_every_reader_the_table_uses_counts_the_roll_s_dice(monkeypatch):
    """Dice of known colours are read twice, and the count decides which reading is the roll
    (``fusion.in_both_pictures``): the reader "first" counts them too."""
    from bunco_pi.hardware import camera
    from bunco_pi.vision.reading import FrameReading

    counted = []
    monkeypatch.setattr(camera, "read_both", lambda frame, settings, **options: counted.append(
        options.get("dice")) or FrameReading(()))
    for reader in ("first", "both"):
        source = CameraDiceSource(ScriptedCamera(), lambda _: None, TrayCalibration(reader=reader, dice=5))
        source._read(draw_tray([]))
    assert counted == [5, 5]


class ScriptedCamera:
    """A frame source that follows a script: a frame, an exception to raise, an Event to
    block on (a hung read; once set, the read comes back with a frame), or None (no more)."""

    def __init__(self, *steps) -> None:
        self.steps = list(steps)
        self.blocked = threading.Event()
        self.closed = threading.Event()

    def read(self):
        step = self.steps.pop(0) if self.steps else None
        if isinstance(step, Exception):
            raise step
        if isinstance(step, threading.Event):
            self.blocked.set()
            assert step.wait(10)
            return draw_tray([])
        return step

    def close(self) -> None:
        self.closed.set()


class Opener:
    """Opens the next camera of a list; an exception in the list is a camera still gone."""

    def __init__(self, *cameras) -> None:
        self.cameras = list(cameras)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        camera = self.cameras.pop(0)
        if isinstance(camera, Exception):
            raise camera
        return camera


# Short waits before reopening; a hang is taken after 1 s where the test hangs a read, and
# never by accident elsewhere (frames are ready in memory, a slow machine gets 10 s).
FAST = {"frame_timeout": 10.0, "retry": (0.01, 0.04)}
HANG = {**FAST, "frame_timeout": 1.0}


def test_a_camera_that_raises_is_reported_once_reopened_and_read_again():
    first = ScriptedCamera(*still(ROLL_A, 7), *tumbling(5, 1), *still(ROLL_B, 8, 10),
                           *tumbling(3, 2), OSError("USB camera gone"))
    # Gone mid-throw, back with dice lying there: not read (the camera did not see them
    # land; the buttons count that throw); the next throw is.
    second = ScriptedCamera(*still(ROLL_A, 8, 60), *tumbling(5, 7), *still(ROLL_B, 8, 70))
    opener = Opener(OSError("no camera yet"), OSError("no camera yet"), second)
    results: queue.Queue = queue.Queue()
    source = CameraDiceSource(first, results, reopen=opener, **FAST)
    source.start()
    source.join(timeout=30)
    assert not source.running
    got = drain(results)
    assert got == [
        SettledRoll((6, 2, 4), got[0].confidence, seq=0),
        Unsure("camera failed"),
        CameraBack(),
        SettledRoll((6, 2, 4), got[3].confidence, seq=1),
    ]
    # The second camera ran out of frames: an end, not a failure, so nothing reopened it.
    assert opener.calls == 3 and opener.cameras == []
    assert first.closed.is_set() and second.closed.is_set()


def test_a_hung_camera_is_a_failure_and_is_left_behind_until_its_read_returns():
    release, release_again = threading.Event(), threading.Event()
    hung = ScriptedCamera(*still(ROLL_A, 7), release)
    again = ScriptedCamera(*still(ROLL_A, 8), *tumbling(5, 3), *still(ROLL_B, 8, 80),
                           release_again)  # and hangs again later
    third = ScriptedCamera(*still(ROLL_B, 8, 90))
    opener = Opener(again, third)
    results: queue.Queue = queue.Queue()
    source = CameraDiceSource(hung, results, reopen=opener, **HANG)
    source.start()
    try:
        source.join(timeout=30)
        assert not source.running
        got = drain(results)
        assert got == [Unsure("camera failed"), CameraBack(),
                       SettledRoll((6, 2, 4), got[2].confidence, seq=0),
                       Unsure("camera failed"), CameraBack()]
        assert opener.calls == 2
        assert not hung.closed.is_set()  # nobody touched it while its read was stuck
    finally:
        release.set()
        release_again.set()
    assert hung.closed.wait(5)  # its own thread closes it when the read comes back


def test_stop_returns_while_a_read_is_hung():
    release = threading.Event()
    camera = ScriptedCamera(*still(ROLL_A, 3), release)
    opener = Opener()
    source = CameraDiceSource(camera, lambda result: None, reopen=opener, frame_timeout=60)
    source.start()
    try:
        assert camera.blocked.wait(10)
        source.stop(timeout=3)
        assert not source.running and opener.calls == 0
    finally:
        release.set()


def test_a_camera_that_cannot_be_opened_is_retried_until_stopped():
    opener = Opener(*[OSError("no camera")] * 1000)
    got = []
    source = CameraDiceSource(None, got.append, reopen=opener, retry=(0.001, 0.002))
    source.start()
    try:
        for _ in range(500):
            if opener.calls >= 5:
                break
            threading.Event().wait(0.01)
    finally:
        source.stop(timeout=3)
    assert not source.running
    assert opener.calls >= 5 and got == [Unsure("camera failed")]


def test_a_source_that_runs_out_is_not_reopened():
    opener = Opener(ScriptedCamera())
    got = []
    camera = ScriptedCamera(*still(ROLL_A, 3))
    CameraDiceSource(camera, got.append, reopen=opener, **FAST).run()
    assert got == [] and opener.calls == 0 and camera.closed.is_set()
    with pytest.raises(ValueError, match="needs frames"):
        CameraDiceSource(None, got.append)


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
