"""The camera over the dice tray: frames in, one reading per settled throw out.

Frame sources: a Raspberry Pi camera (picamera2, from Raspberry Pi OS's python3-picamera2;
imported only when used), anything OpenCV's VideoCapture opens (a USB webcam, a video file,
an image sequence such as ``frames/%03d.png``), or a folder of photos.

``CameraDiceSource`` runs the source on its own thread and hands each result to one place
(a ``queue.Queue`` or a callback): ``SettledRoll`` (the faces, to score exactly like a
serial sensor's ROLL) or ``Unsure`` (a reason for the OLED; nothing to score, wait for a
re-roll or a button).

Import this module only when a camera is configured: it needs the ``camera`` extra
(OpenCV, numpy), which a box with buttons or a serial sensor does without.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.reader import read_pips
from bunco_pi.vision.reading import FrameReading
from bunco_pi.vision.settle import Event, SettleDetector
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge

log = logging.getLogger(__name__)

CameraResult = SettledRoll | Unsure
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
                " 'sudo apt install python3-picamera2' (or use --video/--image)"
            ) from None
        self._camera = Picamera2()
        # picamera2's "RGB888" is stored B, G, R in memory: the order OpenCV expects.
        config = self._camera.create_video_configuration(main={"size": size, "format": "RGB888"})
        self._camera.configure(config)
        if controls:
            self._camera.set_controls({**controls, "AeEnable": False})
        self._camera.start()

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
    """

    def __init__(
        self,
        frames: FrameSource,
        deliver: queue.Queue[CameraResult] | Callable[[CameraResult], None],
        calibration: TrayCalibration | None = None,
        read: Callable[[np.ndarray], FrameReading] | None = None,
        on_rolling: Callable[[], None] | None = None,
        first_seq: int = 0,
    ) -> None:
        self.calibration = calibration or TrayCalibration()
        settings = self.calibration.reader_settings()
        self._frames = frames
        self._deliver = deliver.put if isinstance(deliver, queue.Queue) else deliver
        self._read = read or (lambda frame: read_pips(frame, settings))
        self._on_rolling = on_rolling
        self._detector = SettleDetector(self.calibration.settle_settings())
        self._stop = threading.Event()
        self._rearm = threading.Event()
        self._thread: threading.Thread | None = None
        self._seq = first_seq % 65536

    def process(self, frame: np.ndarray) -> CameraResult | None:
        """Feed one frame (the thread does this); the result it yields, if any."""
        if self._rearm.is_set():
            self._rearm.clear()
            self._detector.rearm()
        event = self._detector.feed(frame)
        if event is Event.ROLLING:
            if self._on_rolling:
                self._on_rolling()
            return None
        if event is not Event.SETTLED:
            return None
        reading = self._read(frame)
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
        """Read frames until the source ends or ``stop`` is called."""
        try:
            while not self._stop.is_set():
                frame = self._frames.read()
                if frame is None:
                    break
                result = self.process(frame)
                if result is not None:
                    self._deliver(result)
        except Exception:
            log.exception("dice camera stopped")
            self._deliver(Unsure("camera failed"))
        finally:
            self._frames.close()

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
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
