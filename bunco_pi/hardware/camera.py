"""The camera over the dice tray: frames in, one reading per settled throw out.

Frame sources: a Raspberry Pi camera (picamera2, from Raspberry Pi OS's python3-picamera2;
imported only when used), anything OpenCV's VideoCapture opens (a USB webcam, a video file,
an image sequence such as ``frames/%03d.png``), or a folder of photos.

``CameraDiceSource`` runs the source on its own thread and hands each result to one place
(a ``queue.Queue`` or a callback): ``SettledRoll`` (the faces, to score exactly like a
serial sensor's ROLL) or ``Unsure`` (a reason for the OLED; nothing to score, wait for a
re-roll or a button). A camera that raises or hangs is ``Unsure("camera failed")`` once; given
a way to open it again, it is reopened with a growing wait until it gives frames, and then
``CameraBack`` says so.

Import this module only when a camera is configured: it needs the ``camera`` extra
(OpenCV, numpy), which a box with buttons or a serial sensor does without.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from bunco_pi.atomic_file import write_atomically
from bunco_pi.errors import UserError
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.face_reader import shipped_face_reader
from bunco_pi.vision.fusion import FusionSettings, first_readings, read_both
from bunco_pi.vision.learn import (
    FULL_FRAME,
    LEARN_ROLLS,
    LearnedSetup,
    applied,
    from_data,
    moved_camera,
    other_dice,
    roll_sample,
    study,
    to_data,
)
from bunco_pi.vision.look import warm_up
from bunco_pi.vision.net import shipped_finder, shipped_net
from bunco_pi.vision.reader import read_pips
from bunco_pi.vision.reading import FrameReading
from bunco_pi.vision.settle import Event, SettleDetector
from bunco_pi.vision.tray_view import THROWS, Comparison, compare, moved_for_good
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")


class FrameSource(Protocol):
    def read(self) -> np.ndarray | None:
        """The next BGR frame, or None when there are no more."""

    def close(self) -> None: ...


class PicameraSource:
    """The Raspberry Pi camera through picamera2, at a fixed exposure if calibrated."""

    def __init__(
        self, size: tuple[int, int] = (1280, 960), controls: dict[str, float] | None = None
    ) -> None:
        try:
            from picamera2 import Picamera2  # only on a Pi, from apt: import when used
        except ImportError:
            raise UserError(
                "picamera2 is not installed: on Raspberry Pi OS run"
                " 'sudo apt install python3-picamera2', or use a USB webcam through OpenCV"
            ) from None
        self._camera = Picamera2()
        try:
            # picamera2's "RGB888" is stored B, G, R in memory: the order OpenCV expects.
            config = self._camera.create_video_configuration(
                main={"size": size, "format": "RGB888"})
            self._camera.configure(config)
            if controls:
                self._camera.set_controls({**controls, "AeEnable": False})
            self._camera.start()
        except BaseException:
            self._camera.close()  # else the camera stays taken, and reopening it fails
            raise

    def read(self) -> np.ndarray | None:
        return self._camera.capture_array("main")

    def exposure(self) -> dict[str, float]:
        """The exposure the camera is using now (for calibration)."""
        metadata = self._camera.capture_metadata()
        return {k: float(metadata[k]) for k in ("ExposureTime", "AnalogueGain") if k in metadata}

    def close(self) -> None:
        self._camera.stop()
        self._camera.close()


class OpenCVSource:
    """A webcam (device number), a video file or an image sequence (``name_%03d.png``)."""

    def __init__(self, source: int | str) -> None:
        self._capture = cv2.VideoCapture(source)
        if not self._capture.isOpened():
            raise UserError(f"{source}: OpenCV cannot open this camera, video or image sequence")

    def read(self) -> np.ndarray | None:
        ok, frame = self._capture.read()
        return frame if ok else None

    def close(self) -> None:
        self._capture.release()


class ImageFolderSource:
    """The photos in a folder in name order, each given ``hold`` times (a still tray)."""

    def __init__(self, folder: Path, hold: int = 1) -> None:
        if not folder.is_dir():
            raise UserError(f"{folder}: not a folder of images")
        self._paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self._paths:
            raise UserError(f"{folder}: no .jpg/.png images in it")
        self._hold = max(1, hold)
        self._index = 0

    def read(self) -> np.ndarray | None:
        position = self._index // self._hold
        if position >= len(self._paths):
            return None
        self._index += 1
        return load_image(self._paths[position])

    def close(self) -> None:
        pass


LEARNED_FILE = "dice-learned.json"  # beside the table's config: what rolling taught


def load_learned(path: Path) -> LearnedSetup:
    """What rolling taught this tray, from its file; no file yet is a fresh start.

    A file that is not what ``save_learned`` writes is a one-line error naming it (delete it
    to learn the dice again).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LearnedSetup()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the learned dice settings ({exc.strerror})") from None
    try:
        return from_data(json.loads(text))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); delete it to learn"
                        " the dice again") from None
    except ValueError as exc:
        raise UserError(f"{path}: {exc}; delete it to learn the dice again") from None


def save_learned(setup: LearnedSetup, path: Path) -> None:
    """Write atomically: a power cut leaves the old file or the new one, never half of one."""
    write_atomically(path, [json.dumps(to_data(setup), indent=2) + "\n"])


@dataclass(frozen=True)
class CameraBack:
    """The camera gives frames again after ``Unsure("camera failed")``: the table's warning
    can go. Nothing to score; the tray as it lies now is not read (a roll lying there was
    thrown while the camera was away, and counted with the buttons if at all)."""


CameraResult = SettledRoll | Unsure | CameraBack
FAILED = Unsure("camera failed")
DEFAULT_FRAME_TIMEOUT = 5.0  # seconds without a frame that make a camera hung
DEFAULT_RETRY = (1.0, 30.0)  # first wait before reopening, and the longest (doubling between)
POLL = 0.1  # how often a waiting thread looks whether it was asked to stop


class _FrameReader:
    """One frame source read on a thread of its own, into a small queue.

    picamera2 and V4L2 can block in ``read`` for good (a loose ribbon cable): the thread
    owns the source alone, so a hung read can be left behind (a daemon thread) without
    anyone else touching the source; it closes the source itself if the read ever returns.
    """

    def __init__(self, frames: FrameSource) -> None:
        self._frames = frames
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=2)
        self._quit = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dice-camera-read", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        item: tuple[str, object]
        try:
            while not self._quit.is_set():
                frame = self._frames.read()
                if frame is None:
                    item = ("end", None)
                    break
                self._put(("frame", frame))
            else:
                return
        except Exception as exc:  # noqa: BLE001 - any camera error is a failure to report
            item = ("error", exc)
        finally:
            self._close()
        self._put(item)

    def _close(self) -> None:
        try:
            self._frames.close()
        except Exception:  # noqa: BLE001 - a broken camera may fail to close as well
            log.warning("dice camera: closing the frame source failed", exc_info=True)

    def _put(self, item: tuple[str, object]) -> None:
        while not self._quit.is_set():
            try:
                self._queue.put(item, timeout=POLL)
                return
            except queue.Full:
                continue

    def next(self, timeout: float, stop: threading.Event) -> tuple[str, object]:
        """("frame", array), ("end", None), ("error", exception), ("hung", seconds) or
        ("stopped", None), whichever comes first."""
        deadline = time.monotonic() + timeout
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return ("hung", timeout)
            try:
                return self._queue.get(timeout=min(POLL, left))
            except queue.Empty:
                continue
        return ("stopped", None)

    def quit(self, wait: float) -> None:
        """Stop reading; wait up to ``wait`` s for the source to close (not at all if hung)."""
        self._quit.set()
        self._thread.join(wait)


class CameraDiceSource:
    """Watches the tray on a thread of its own; one result per settled throw (see module doc).

    ``deliver`` is a ``queue.Queue`` (results are ``put`` on it) or a callable; either way it
    is called on the camera's thread, so a callable must only hand the result on (e.g.
    ``loop.call_soon_threadsafe``). ``on_rolling``, if given, is called the same way when the
    dice start to tumble. An empty tray (dice picked up) is not a result.

    Rolls are numbered from ``first_seq`` (0..65535, wrapping) like the serial sensor's ROLL
    seq; a table that journals seqs passes one past the last it stored. Dice lying in the
    tray when the source starts are not read (see ``SettleDetector``): after a restart the
    last roll is not scored twice.

    A source that raises, or gives no frame for ``frame_timeout`` seconds, has failed:
    ``Unsure("camera failed")`` is delivered once. Without ``reopen`` that is the end; with
    it (a callable opening the camera again) the source is reopened after 1, 2, 4 ... s
    (``retry``: the first wait and the longest) until frames come again, then ``CameraBack``
    is delivered and the tray is watched as at start-up. ``frames`` may be None when
    ``reopen`` is given: the first open is then done on the camera's thread. A source that
    runs out (``read`` gives None: a video or folder at its end) is not a failure: it ends.

    ``learned`` (what earlier rolls taught, ``LearnedSetup()`` for none yet) sets the tray up
    by rolling when the calibration does not know the dice's colours (``vision/learn.py``):
    until enough sure rolls agree on them, a roll is scored only if both readers are sure of
    every die, or if the table's reader (which looks again) reads it sure in the colours
    trusted so far, and any other is ``Unsure("learning 1/3: re-roll")``. ``on_learned`` is
    called (on the camera's thread) whenever that changes, to keep it.
    """

    def __init__(
        self,
        frames: FrameSource | None,
        deliver: queue.Queue[CameraResult] | Callable[[CameraResult], None],
        calibration: TrayCalibration | None = None,
        read: Callable[[np.ndarray], FrameReading] | None = None,
        on_rolling: Callable[[], None] | None = None,
        first_seq: int = 0,
        *,
        reopen: Callable[[], FrameSource] | None = None,
        frame_timeout: float = DEFAULT_FRAME_TIMEOUT,
        retry: tuple[float, float] = DEFAULT_RETRY,
        learned: LearnedSetup | None = None,
        on_learned: Callable[[LearnedSetup], None] | None = None,
    ) -> None:
        if frames is None and reopen is None:
            raise ValueError("CameraDiceSource needs frames or a way to open them (reopen)")
        self._given = calibration or TrayCalibration()
        # Dice colours measured by calibration are used as they are: nothing to learn, and a
        # set-up learned before the calibration (its tray too) is left aside.
        self._setup = learned if self._given.look is None else None
        self._on_learned = on_learned
        self.calibration = (self._given if self._setup is None
                            else applied(self._setup, self._given))
        self._custom_read = read
        self._frames = frames
        self._reopen = reopen
        self._frame_timeout = frame_timeout
        self._retry = retry
        self._deliver = deliver.put if isinstance(deliver, queue.Queue) else deliver
        # A set-up that may be learned again (it kept a view to see a moved camera) needs the
        # network then, whatever reads it now.
        if read is None and (self.calibration.reader != "pips" or self.learning or self._watched()):
            shipped_net()  # a missing or broken network file is said now, not at the first throw
        self._read = self._reader()
        self._on_rolling = on_rolling
        self._detector = SettleDetector(self.calibration.settle_settings())
        self._stop = threading.Event()
        self._rearm = threading.Event()
        self._thread: threading.Thread | None = None
        self._seq = first_seq % 65536
        # the last settled pictures against the learned tray's view, and one not yet compared
        self._last_seen: deque[Comparison] = deque(maxlen=THROWS)
        self._unchecked: tuple[np.ndarray, FrameReading] | None = None
        self._asked = False  # the next settled frame is one a button asked to read again

    def _reader(self) -> Callable[[np.ndarray], FrameReading]:
        """What reads a settled tray with the calibration as it stands (learned colours too)."""
        settings = self.calibration.reader_settings()
        if settings.look is not None:
            warm_up(settings.look)  # the colour table is made now, not at the first throw
        if self._custom_read is not None:
            return self._custom_read
        if self.calibration.reader == "pips":
            return lambda frame: read_pips(frame, settings)
        if self.calibration.reader == "first":
            return lambda frame: read_both(frame, settings, fusion=FusionSettings(again=False),
                                           dice=self.calibration.dice)
        shipped_finder()  # a missing file is said now, not at the first throw
        shipped_face_reader()
        dice = self.calibration.dice  # a roll short of a die is looked at again too
        return lambda frame: read_both(frame, settings, dice=dice)

    @property
    def learning(self) -> bool:
        """Still setting up by rolling: only rolls both readers are sure of teach, and only
        those, or those the table's reader reads sure in the colours trusted, are scored."""
        return self._setup is not None and not self._setup.learned

    @property
    def setup(self) -> LearnedSetup | None:
        """What rolling has taught (None: not learning, e.g. the dice were calibrated)."""
        return self._setup

    def status(self) -> str:
        """The OLED line while the set-up is learned (``learning dice 1/3``), else ""."""
        return self._setup.status() if self.learning and self._setup is not None else ""

    def _study(self, frame: np.ndarray) -> FrameReading | Unsure | None:
        """A settled frame while learning: the reading to judge, a "not scored" line, or
        None for an empty tray."""
        assert self._setup is not None
        outcome = study(frame, self._setup, self._given, first_readings)
        if outcome.setup != self._setup:
            self._setup = outcome.setup
            if self._setup.learned:
                self.calibration = applied(self._setup, self._given)
                self._read = self._reader()
                self._detector.relook(self.calibration.look, frame)
                log.warning("dice camera: dice colours learned from %d rolls: face %s, pips %s,"
                            " tray %s", self._setup.rolls, self._setup.face, self._setup.pip,
                            self._setup.region)
            if self._on_learned is not None:
                self._on_learned(self._setup)
        if outcome.reading is not None:
            return outcome.reading
        # Not sure to both readers in the colours trusted now: the table's reader, which looks
        # again, may still read it in those same colours (it reads dice of colours the first
        # look does not know, which would otherwise never be scored). What it reads is scored
        # as at any time, and teaches nothing. Not a reader the calibration narrowed ("first",
        # "pips") or one given: while learning, those score only what both readers are sure of.
        if self._custom_read is None and self.calibration.reader == "both":
            reading = self._read(frame)
            if isinstance(judge(reading, self._given.dice, self.calibration.min_confidence), SettledRoll):
                return reading
        if not outcome.seen.dice and not outcome.noticed:
            return None
        if outcome.seen.dice and len(outcome.seen.dice) != self._given.dice:
            return judge(outcome.seen, self._given.dice)  # "saw 2 dice, not 3": re-roll
        return Unsure(outcome.setup.not_scored())

    def _watched(self) -> bool:
        """Whether the camera is watched for a move: a tray learned by rolling, with its view.
        Not a calibrated region: that is the calibration's to mend."""
        setup = self._setup
        return (setup is not None and setup.learned and setup.view is not None
                and tuple(self._given.region) == FULL_FRAME)

    def _look_for_a_move(self, frame: np.ndarray, reading: FrameReading) -> None:
        """Learn the tray anew once the camera is seen moved since it was learned
        (``vision/tray_view.py``): the learned region and die width no longer fit the picture."""
        setup = self._setup
        if (not self._watched() or setup is None or setup.view is None or setup.region is None
                or setup.die_width is None):
            return
        height, width = frame.shape[:2]
        dice = tuple((d.center[0] / width, d.center[1] / height) for d in reading.dice)
        comparison = compare(setup.view, frame, dice, setup.region, setup.die_width)
        self._last_seen.append(comparison)
        if not moved_for_good(list(self._last_seen)):
            return
        how = (f"the tray's corners by up to {comparison.shift} die widths"
               if comparison.shift is not None else "pictures of another shape")
        log.warning("dice camera: the camera has moved since the tray was learned (%s): learning"
                    " the tray again, reading with the dice's colours as learned meanwhile", how)
        self._learn_again(moved_camera(setup), frame)

    def _look_at_the_dice(self, frame: np.ndarray, reading: FrameReading) -> None:
        """Learn again once the dice thrown, throw after throw, are not of the colours learned
        (``learn.other_dice``): another group's set. The throw itself is judged as read."""
        setup = self._setup
        if setup is None or not setup.learned:
            return
        sample = roll_sample(frame, reading) if len(reading.dice) == self.calibration.dice else None
        seen = other_dice(setup, sample)
        if seen.learned:
            self._setup = seen  # the row of other dice, not kept in the file
            return
        log.warning("dice camera: %d throws in a row of dice unlike those learned (face %s, pips"
                    " %s): learning the dice and the tray again, reading with the colours learned"
                    " meanwhile", LEARN_ROLLS, setup.face, setup.pip)
        self._learn_again(seen, frame)

    def _learn_again(self, setup: LearnedSetup, frame: np.ndarray) -> None:
        """Start learning ``setup`` (the colours kept) from the settled ``frame`` on: read and
        settle by it, the roll lying there taken as read, and keep it."""
        self._setup = setup
        self._last_seen.clear()
        self.calibration = applied(setup, self._given)
        self._read = self._reader()
        self._detector.relook(self.calibration.look, frame)
        if self._on_learned is not None:
            self._on_learned(setup)

    def process(self, frame: np.ndarray) -> CameraResult | None:
        """Feed one frame (the thread does this); the result it yields, if any."""
        if self._unchecked is not None:
            # The last settled picture against the learned tray's view: at the frame after it,
            # so that the throw's result does not wait for it (tens of milliseconds here).
            (then, reading), self._unchecked = self._unchecked, None
            self._look_for_a_move(then, reading)
        if self._rearm.is_set():
            self._rearm.clear()
            self._detector.rearm()
            self._asked = True
        event = self._detector.feed(frame)
        if event is Event.ROLLING:
            if self._on_rolling:
                self._on_rolling()
            return None
        if event is not Event.SETTLED:
            return None
        asked, self._asked = self._asked, False
        if self.learning:
            studied = self._study(frame)
            if studied is None or isinstance(studied, Unsure):
                return studied
            reading = studied
        else:
            reading = self._read(frame)
            # Compared at every settled picture (a throw, or the tray emptied after it: a
            # moved camera's throw may show no die at all), but not the same throw read again
            # at a button's asking: the same picture twice is no second look.
            if self._watched() and not asked:
                self._unchecked = (frame, reading)
            if not asked:
                self._look_at_the_dice(frame, reading)
        if not reading.dice:
            return None  # the tray is empty: dice picked up for the next throw
        result = judge(reading, self.calibration.dice, self.calibration.min_confidence)
        if isinstance(result, SettledRoll):
            result = replace(result, seq=self._seq)
            self._seq = (self._seq + 1) % 65536
        return result

    def rearm(self) -> None:
        """Read the tray again when it is still (a button asked), from any thread."""
        self._rearm.set()

    def run(self) -> None:
        """Read frames until the source ends or ``stop`` is called (reopening on failures)."""
        frames, self._frames = self._frames, None
        down = False
        wait = self._retry[0]
        while not self._stop.is_set():
            if frames is None:
                assert self._reopen is not None
                try:
                    frames = self._reopen()
                except Exception as exc:  # noqa: BLE001 - still gone: try again later
                    log.warning("dice camera: cannot open it (%s); next try in %.0f s", exc, wait)
                    if not down:
                        down = True
                        self._deliver(FAILED)
                    if self._stop.wait(wait):
                        return
                    wait = min(wait * 2, self._retry[1])
                    continue
            outcome, saw_frames = self._watch(frames, back=down)
            frames = None
            if saw_frames:
                down, wait = False, self._retry[0]
            if outcome != "failed":
                return
            if not down:
                down = True
                self._deliver(FAILED)
            if self._reopen is None or self._stop.wait(wait):
                return
            wait = min(wait * 2, self._retry[1])

    def _watch(self, frames: FrameSource, back: bool) -> tuple[str, bool]:
        """Read one opened source until it ends ("end"), ``stop`` ("stopped") or it fails
        ("failed"); and whether it gave any frame."""
        reader = _FrameReader(frames)
        saw_frames = False
        close_wait = min(self._frame_timeout, 1.0)  # a working camera closes in a frame's time
        try:
            while True:
                kind, value = reader.next(self._frame_timeout, self._stop)
                if kind == "frame":
                    if not saw_frames and back:
                        # Watched as at start-up: what lies there now is not a new throw.
                        self._detector = SettleDetector(self.calibration.settle_settings())
                        log.warning("dice camera: frames again")
                        self._deliver(CameraBack())
                    saw_frames = True
                    result = self.process(value)  # type: ignore[arg-type]
                    if result is not None:
                        self._deliver(result)
                elif kind == "error":
                    log.error("dice camera failed", exc_info=value)  # type: ignore[arg-type]
                    return "failed", saw_frames
                elif kind == "hung":
                    log.error("dice camera: no frame for %.1f s; taken as failed", value)
                    close_wait = 0.0  # left to its daemon thread: it may never return
                    return "failed", saw_frames
                else:
                    return kind, saw_frames  # "end" or "stopped"
        except Exception:
            log.exception("dice camera: a frame could not be read")
            return "failed", saw_frames
        finally:
            reader.quit(wait=close_wait)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="dice-camera", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the source to run out of frames (a video or folder) or to be stopped."""
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; returns within about ``timeout`` s even if a read is hung."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
