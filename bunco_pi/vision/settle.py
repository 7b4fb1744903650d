"""When to read the tray: once per throw, after the dice have stopped, never while they tumble.

Fed one frame at a time, with no clock: "settled" means ``settle_frames`` frames in a row in
which almost no pixel changed from the frame before, so the wait scales with the frame rate
the camera actually delivers. A pixel "changed" if it moved by more than ``pixel_threshold``
grey levels (well above sensor noise); frames differ if more than a small fraction of pixels
did (a die is about 1% of a tray, so a mean over the frame would hardly see one move).

After a reading, the detector is disarmed until the tray changes again (motion first, then a
still tray that differs from the one read), so a roll is read once however long it lies
there, and a hand passing over still dice reads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

from bunco_pi.vision.look import DiceLook, to_grey

SMALL_WIDTH = 80  # frames are compared at this width: enough to see a die move, cheap on a Pi


class Event(Enum):
    ROLLING = "rolling"  # the tray started moving (the serial sensor's ROLLING)
    SETTLED = "settled"  # the tray is still and differs from the last reading: read this frame


@dataclass(frozen=True)
class SettleSettings:
    pixel_threshold: float = 20.0  # grey levels a pixel must change by to count as changed
    motion_fraction: float = 0.002  # changed pixels between neighbouring frames: moving
    change_fraction: float = 0.003  # changed pixels since the last reading: a new roll
    settle_frames: int = 5  # still frames in a row before reading (about 1/3 s at 15 fps)
    look: DiceLook | None = None  # the dice's colours (calibration): see ``thumbnail``


def thumbnail(frame: np.ndarray, look: DiceLook | None = None) -> np.ndarray:
    """A small, blurred grey copy: sensor noise and JPEG blocks average out before comparing.

    In plain grey, and for dice of known colours (``look``) in the grey they map to as well
    (``look.to_grey``), stacked: red dice on green felt are one grey in a plain grey picture,
    and would come and go unseen; in the grey blue dice map to, red dice on a white tray are
    as grey as the tray, and a table that learned one group's blue dice would never see
    another group's red ones settle. A change in either counts (``difference``). Shrunk
    first, so the mapping is cheap.
    """
    height, width = frame.shape[:2]
    small_height = max(1, round(height * SMALL_WIDTH / width))
    small = cv2.resize(frame, (SMALL_WIDTH, small_height), interpolation=cv2.INTER_AREA)
    greys = [to_grey(small)]
    if look is not None and not look.plain_grey and frame.ndim == 3:
        greys.append(to_grey(small, look))
    blurred = [cv2.GaussianBlur(grey, (3, 3), 0).astype(np.int16) for grey in greys]
    return blurred[0] if len(blurred) == 1 else np.stack(blurred)


def difference(a: np.ndarray, b: np.ndarray, pixel_threshold: float) -> float:
    """The fraction of pixels that changed by more than ``pixel_threshold`` grey levels in
    any grey of the thumbnails."""
    changed = np.abs(a - b) > pixel_threshold
    return float((changed.any(axis=0) if changed.ndim == 3 else changed).mean())


class SettleDetector:
    """Turns a stream of frames into ROLLING and SETTLED events (see the module's docstring).

    The first still tray after start-up is taken as already read: dice left lying there
    from before a restart were scored before it, and must not be scored again.
    """

    def __init__(self, settings: SettleSettings | None = None) -> None:
        self.settings = settings or SettleSettings()
        self._previous: np.ndarray | None = None
        self._last_read: np.ndarray | None = None
        self._still = 0
        self._moving = False
        self._armed = False
        self._forced = False

    def feed(self, frame: np.ndarray) -> Event | None:
        small = thumbnail(frame, self.settings.look)
        previous, self._previous = self._previous, small
        if previous is None or previous.shape != small.shape:
            self._still = 0
            if self._last_read is not None and self._last_read.shape != small.shape:
                # Seen another way now (a look set without ``relook``): thumbnails of two ways
                # cannot be compared, and what lies there must not be read again.
                self._last_read = small
            return None
        motion = difference(previous, small, self.settings.pixel_threshold)
        if motion > self.settings.motion_fraction:
            self._still = 0
            self._armed = True
            if not self._moving:
                self._moving = True
                return Event.ROLLING
            return None
        self._moving = False
        self._still += 1
        if self._still != self.settings.settle_frames:
            return None  # not settled yet, or settled and already judged
        if self._last_read is None and not self._forced:
            self._last_read = small  # start-up: see the class docstring
            return None
        if not (self._armed or self._forced):
            return None
        forced, self._forced, self._armed = self._forced, False, False
        change = difference(self._last_read, small, self.settings.pixel_threshold)
        if not forced and change <= self.settings.change_fraction:
            return None  # moved and came back as it was: the same roll
        self._last_read = small
        return Event.SETTLED

    def relook(self, look: DiceLook | None, frame: np.ndarray) -> None:
        """See frames in new colours (learned by rolling) from now on, ``frame`` (the tray as
        just read) taken as the last reading: thumbnails mapped the old way would all look
        changed, and the roll lying there would be read again."""
        self.settings = SettleSettings(
            self.settings.pixel_threshold, self.settings.motion_fraction,
            self.settings.change_fraction, self.settings.settle_frames, look)
        small = thumbnail(frame, look)
        self._previous = small
        self._last_read = small

    def rearm(self) -> None:
        """Read the tray again as soon as it is still, even if it looks like the last reading."""
        self._forced = True
        self._still = min(self._still, self.settings.settle_frames - 1)
