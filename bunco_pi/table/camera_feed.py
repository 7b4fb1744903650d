"""The dice camera, seen from the table: camera results in, the dice sensor's node events out.

A settled roll becomes the same ``DiceRoll`` a serial sensor's ROLL becomes, so the node
scores it the same way; a "not sure" becomes a ``DiceStatus`` line on the OLED and scores
nothing (re-roll, or use the buttons). A camera that fails or stops giving frames mid-game
is a ``DiceStatus`` down: the OLED says so once, full screen, and the buttons keep counting.

The camera runs on its own thread (``CameraDiceSource.run``); this feed only translates and
posts, so the node's thread stays the only one with state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.table.config import SPECS
from bunco_pi.table.events import DiceRoll, DiceStatus

Post = Callable[[object], None]
log = logging.getLogger(__name__)

CAMERA = "dice camera"
FAILED = "camera failed"  # the reason CameraDiceSource gives when its frame source failed
BACK = "dice camera back"
MAX_LINE = 21  # characters across the OLED's bottom line


def down(detail: str) -> DiceStatus:
    return DiceStatus(False, detail, device=CAMERA, alert=(detail, "keep using buttons"))


def translate(result: object) -> object | None:
    """The node event for a camera result (``SettledRoll``, ``Unsure``, ``CameraBack``), or None."""
    from bunco_pi.hardware.camera import CameraBack
    from bunco_pi.vision.verdict import SettledRoll, Unsure

    if isinstance(result, CameraBack):
        return DiceStatus(True, BACK)
    if isinstance(result, SettledRoll):
        if len(result.faces) != 3:
            return DiceStatus(True, _line(f"saw {len(result.faces)} dice, not 3"))
        return DiceRoll(result.seq, (result.faces[0], result.faces[1], result.faces[2]))
    if isinstance(result, Unsure):
        if result.reason == FAILED:
            return down("camera failed")
        return DiceStatus(True, _line(result.reason))
    return None


def _line(reason: str) -> str:
    """The reason as one OLED line that says nothing was scored."""
    if reason.startswith(("unsure", "learning")):  # learning: vision/learn.py says so itself
        return reason[:MAX_LINE]
    text = f"unsure: {reason}"
    return text if len(text) <= MAX_LINE else f"? {reason}"[:MAX_LINE]


def open_frames(spec: str, calibration: object):
    """The frame source named by ``spec`` (see ``SPECS``); a bad one is a one-line error."""
    from bunco_pi.hardware.camera import ImageFolderSource, OpenCVSource, PicameraSource

    kind, _, where = spec.partition(":")
    if kind == "picamera" and not where:
        return PicameraSource(controls=getattr(calibration, "exposure", None) or None)
    if kind == "opencv" and where:
        return OpenCVSource(int(where) if where.isdigit() else where)
    if kind == "folder" and where:
        # Each photo held long enough to settle, as a still tray would be.
        hold = getattr(calibration, "settle_frames", 5) + 2
        return ImageFolderSource(Path(where), hold=hold)
    raise UserError(f"--camera {spec!r}: expected {SPECS}")


class CameraFeed:
    """A dice camera posting node events.

    The camera is opened from ``spec`` (see ``open_frames``), and opened again the same way
    after a failure. ``frames`` replaces ``spec`` (tests, other sources): a frame source,
    used once (a failure is the end), or a callable that opens one (then reopened too).
    ``frame_timeout`` and ``retry`` (first and longest wait before reopening) are passed to
    ``CameraDiceSource``.
    """

    def __init__(
        self,
        spec: str,
        post: Post,
        calibration_path: Path | None = None,
        last_seq: int | None = None,
        frames: object | None = None,
        *,
        frame_timeout: float | None = None,
        retry: tuple[float, float] | None = None,
        learned_path: Path | None = None,
    ) -> None:
        from bunco_pi.hardware.camera import load_learned
        from bunco_pi.vision.calibration import TrayCalibration, load_calibration
        from bunco_pi.vision.learn import LearnedSetup

        self.spec = spec
        self.calibration = (load_calibration(calibration_path) if calibration_path is not None
                            else TrayCalibration())
        self._post = post
        self._frames = frames
        # No empty-tray photo needed: without calibrated dice colours, the first sure rolls
        # teach them (kept in ``learned_path`` across reboots; in memory without one).
        self.learned_path = learned_path
        self.learned = (load_learned(learned_path) if learned_path is not None
                        else LearnedSetup())
        self._timing: dict[str, object] = {}
        if frame_timeout is not None:
            self._timing["frame_timeout"] = frame_timeout
        if retry is not None:
            self._timing["retry"] = retry
        self._first_seq = 0 if last_seq is None else last_seq + 1
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.source: object | None = None
        # Counted on the camera's thread (``_run``); read them after ``stop``.
        self.rolls = 0
        self.unsure = 0
        self.failures = 0
        self.recoveries = 0
        self.down = False
        self.ran_out = False

    def start(self) -> None:
        """Open the camera now (a missing one is a one-line UserError), then watch on."""
        from bunco_pi.hardware.camera import CameraDiceSource

        if self._frames is None:
            def opener() -> object:
                return open_frames(self.spec, self.calibration)
        elif callable(self._frames) and not hasattr(self._frames, "read"):
            opener = self._frames
        else:
            opener = None
        frames = opener() if opener is not None else self._frames
        self.source = CameraDiceSource(frames, self._sink, self.calibration,
                                       on_rolling=lambda: self._post(DiceStatus(True,
                                                                                self._rolling())),
                                       first_seq=self._first_seq, reopen=opener,
                                       learned=self.learned, on_learned=self._keep,
                                       **self._timing)
        # A set-up calibration warned about (a tray too like the dice, dice too small), or a
        # set-up still being learned, is said at start and, instead of "rolling...", at every
        # throw: until it is put right.
        line = self._rolling()
        if line != "rolling...":
            self._post(DiceStatus(True, line))
        self._thread = threading.Thread(target=self._run, name="dice-camera", daemon=True)
        self._thread.start()

    def _rolling(self) -> str:
        """The OLED line while the dice tumble: the worst set-up warning, else what is still
        being learned, else "rolling..."."""
        source = self.source
        calibration = source.calibration if source is not None else self.calibration
        warnings = calibration.warnings()
        if warnings:
            return warnings[0][0]
        return (source.status() if source is not None else "") or "rolling..."

    def _keep(self, setup: object) -> None:
        """What rolling taught, kept beside the config (on the camera's thread)."""
        from bunco_pi.hardware.camera import save_learned

        self.learned = setup
        if self.learned_path is None:
            return
        try:
            save_learned(setup, self.learned_path)  # type: ignore[arg-type]
        except OSError as exc:
            log.warning("dice camera: cannot keep what it learned in %s (%s)",
                        self.learned_path, exc.strerror)

    def _sink(self, result: object) -> None:
        event = translate(result)
        if isinstance(event, DiceRoll):
            self.rolls += 1
        elif isinstance(event, DiceStatus):
            if not event.up:
                self.failures += 1
                self.down = True
            elif event.detail == BACK:
                self.recoveries += 1
                self.down = False
            else:
                self.unsure += 1
        if event is not None:
            self._post(event)

    def _run(self) -> None:
        assert self.source is not None
        self.source.run()
        if not self._stopping.is_set() and not self.down:
            # No more frames, not asked to stop: a video or folder ran out.
            self.ran_out = True
            self._post(down("camera stopped"))

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def rearm(self) -> None:
        """Read the still tray again (after a button says the last reading was wrong)."""
        if self.source is not None:
            self.source.rearm()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; returns within ``timeout`` s even if the camera hangs in a read."""
        self._stopping.set()
        if self.source is not None:
            self.source.stop(timeout=0)
        if self._thread is not None:
            self._thread.join(timeout)

    def summary(self) -> str:
        """One line of counters, for the log when the table stops."""
        state = ""
        if self.failures:
            state += f"; it failed {self.failures} time(s), came back {self.recoveries}"
        if self.ran_out:
            state += "; its frames ran out mid-game"
        return (f"dice camera {self.spec}: {self.rolls} rolls, {self.unsure} not-sure "
                f"readings{state}")
