"""A tray's settings: where it is in the frame, how bright it is, how still is "still".

``calibrate`` derives them from a picture of the empty tray under the light it will be used
in; they are saved as JSON and read by ``bunco-pi dice read/eval`` and the camera source.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.pips import PipSettings
from bunco_pi.vision.reader import ReaderSettings, region_pixels
from bunco_pi.vision.settle import SettleSettings, thumbnail

FORMAT_VERSION = 1
READERS = ("both", "pips")  # what reads a settled tray at the table (docs/dice-camera.md)
TARGET_TRAY_LEVEL = 90.0  # grey level to expose the empty tray at: white dice stay unclipped
BRIGHTEST_TRAY = 200.0  # above this, white dice cannot stand out from the tray


@dataclass(frozen=True)
class TrayCalibration:
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)  # x, y, w, h in 0..1
    tray_level: float | None = None  # None: judge each frame by its own median
    face_above_tray: float = 10.0
    pip_block: int = 31
    pip_offset: float = 20.0
    min_confidence: float = 0.5
    pixel_threshold: float = 20.0
    motion_fraction: float = 0.002
    change_fraction: float = 0.003
    settle_frames: int = 5
    dice: int = 3
    exposure: dict[str, float] = field(default_factory=dict)  # picamera2 controls; {} = auto
    reader: str = "both"  # "both": pip reader and network together; "pips": the pip reader alone

    def reader_settings(self) -> ReaderSettings:
        return ReaderSettings(
            region=self.region,
            pips=PipSettings(block=self.pip_block, offset=self.pip_offset),
            min_confidence=self.min_confidence,
            tray_level=self.tray_level,
            face_above_tray=self.face_above_tray,
        )

    def settle_settings(self) -> SettleSettings:
        return SettleSettings(
            self.pixel_threshold, self.motion_fraction, self.change_fraction, self.settle_frames
        )


def save_calibration(calibration: TrayCalibration, path: Path) -> None:
    data = {"version": FORMAT_VERSION, **asdict(calibration)}
    data["region"] = list(calibration.region)
    try:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot write calibration ({exc.strerror})") from None


def load_calibration(path: Path) -> TrayCalibration:
    """Read a calibration file; any wrong or unknown setting is a one-line error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read calibration ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object of settings")
    version = data.pop("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise UserError(f"{path}: calibration version {version!r} is not {FORMAT_VERSION}")
    known = {f.name: f for f in fields(TrayCalibration)}
    values = {}
    for key, value in data.items():
        if key not in known:
            raise UserError(f"{path}: unknown setting {key!r}")
        values[key] = _checked(path, key, value)
    return TrayCalibration(**values)


def _checked(path: Path, key: str, value: object) -> object:
    def bad(expected: str) -> UserError:
        return UserError(f"{path}: setting {key!r} must be {expected}, got {value!r}")

    def number(v: object) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise bad("a number")
        return float(v)

    if key == "region":
        if not isinstance(value, list) or len(value) != 4:
            raise bad("[x, y, width, height] as fractions of the frame")
        x, y, w, h = (number(v) for v in value)
        if not (0 <= x < 1 and 0 <= y < 1 and 0 < w <= 1 - x + 1e-9 and 0 < h <= 1 - y + 1e-9):
            raise bad("[x, y, width, height] inside 0..1")
        return (x, y, w, h)
    if key == "exposure":
        if not isinstance(value, dict):
            raise bad("an object of camera controls")
        return {str(k): number(v) for k, v in value.items()}
    if key == "min_confidence":
        result = number(value)
        if not 0 < result <= 1:
            raise bad("more than 0 and at most 1")
        return result
    if key == "reader":
        if value not in READERS:
            raise bad(" or ".join(repr(r) for r in READERS))
        return value
    if key == "tray_level":
        return None if value is None else number(value)
    if key in ("pip_block", "settle_frames", "dice"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad("a whole number of at least 1")
        return value
    result = number(value)
    if result < 0:
        raise bad("a number of at least 0")
    return result


def find_tray(gray: np.ndarray) -> tuple[float, float, float, float]:
    """The region (fractions) of the even-toned area around the frame's centre: the tray floor.

    The full frame if nothing clear stands out (a tray filling the view is the best set-up).
    """
    height, width = gray.shape
    middle = gray[height // 3 : 2 * height // 3, width // 3 : 2 * width // 3]
    level = float(np.median(middle))
    spread = float(np.median(np.abs(middle.astype(np.float32) - level)))
    alike = (np.abs(gray.astype(np.float32) - level) <= 3.0 * spread + 12.0).astype(np.uint8)
    kernel = np.ones((9, 9), np.uint8)
    alike = cv2.morphologyEx(alike, cv2.MORPH_OPEN, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(alike)
    centre_label = labels[height // 2, width // 2]
    if centre_label == 0:
        return (0.0, 0.0, 1.0, 1.0)
    x, y, w, h, area = (int(v) for v in stats[centre_label])
    if area < 0.25 * width * height:
        return (0.0, 0.0, 1.0, 1.0)
    return (x / width, y / height, w / width, h / height)


@dataclass(frozen=True)
class CalibrationResult:
    calibration: TrayCalibration
    notes: tuple[str, ...]  # what was measured or assumed, for the person calibrating


def calibrate(
    frames: list[np.ndarray],
    region: tuple[float, float, float, float] | None = None,
    die_size: float | None = None,
    exposure: dict[str, float] | None = None,
    dice: int = 3,
) -> CalibrationResult:
    """Settings for a tray from one or more frames of it empty.

    ``region``: fractions of the frame, or None to find the tray. ``die_size``: a die's width
    in pixels of these frames, to size the pip search. ``exposure``: the camera's controls
    when the frames were taken (None for a photo), from which a fixed exposure is set.
    """
    if not frames:
        raise UserError("calibrate: no picture of the empty tray")
    frame = frames[-1]
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    height, width = gray.shape
    notes = []
    if region is None:
        region = find_tray(gray)
        notes.append("tray found at x={:.2f} y={:.2f} w={:.2f} h={:.2f}".format(*region))
    base = ReaderSettings(region=region)
    x0, y0, x1, y1 = region_pixels(region, width, height)
    floor = gray[y0:y1, x0:x1]
    tray_level = float(np.median(floor))
    notes.append(f"tray brightness {tray_level:.0f} of 255")
    if tray_level > BRIGHTEST_TRAY:
        raise UserError(
            f"calibrate: the empty tray is too bright ({tray_level:.0f} of 255) for white dice:"
            " use a darker tray lining or less light"
        )
    pip_block = base.pips.block
    if die_size is not None:
        if die_size <= 0:
            raise UserError(f"calibrate: --die-size must be positive, got {die_size}")
        working = die_size * base.working_width / width
        pip_block = max(11, int(round(0.7 * working)) | 1)
        notes.append(f"pip window {pip_block} px at the working width for {die_size:.0f} px dice")
    pixel_threshold = SettleSettings().pixel_threshold
    if len(frames) >= 2:
        smalls = [thumbnail(f) for f in frames]
        # The most a still tray's pixel flickers (noise, mains-lit lamps), with room to spare.
        noise = max(
            float(np.percentile(np.abs(a - b), 99))
            for a, b in zip(smalls, smalls[1:], strict=False)
        )
        pixel_threshold = round(max(12.0, 1.5 * noise + 2.0), 1)
        notes.append(f"still-tray flicker up to {noise:.0f}: pixel threshold {pixel_threshold}")
    controls: dict[str, float] = {}
    if exposure and exposure.get("ExposureTime"):
        scale = TARGET_TRAY_LEVEL / max(tray_level, 1.0)
        controls = {
            "ExposureTime": float(int(exposure["ExposureTime"] * scale)),
            "AnalogueGain": float(exposure.get("AnalogueGain", 1.0)),
        }
        notes.append(f"exposure fixed at {controls['ExposureTime']:.0f} us")
    else:
        notes.append("exposure left automatic (no camera settings with this picture)")
    # The tray's level is not fixed: light changes over an evening, and each frame's own
    # median (mostly tray) follows it.
    calibration = TrayCalibration(
        region=region,
        pip_block=pip_block,
        pixel_threshold=pixel_threshold,
        dice=dice,
        exposure=controls,
    )
    return CalibrationResult(calibration, tuple(notes))
