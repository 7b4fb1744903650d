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
from bunco_pi.vision.look import DiceLook, to_grey
from bunco_pi.vision.pips import PipSettings
from bunco_pi.vision.reader import ReaderSettings, region_pixels
from bunco_pi.vision.settle import SettleSettings, thumbnail

FORMAT_VERSION = 1
READERS = ("both", "first", "pips")  # what reads a settled tray at the table (docs/dice-camera.md)
# Older files name the reader that looks again "again": it is "both" now.
OLD_READERS = {"again": "both"}
TARGET_TRAY_LEVEL = 90.0  # grey level to expose the empty tray at: white dice stay unclipped
BRIGHTEST_TRAY = 200.0  # above this, white dice cannot stand out from the tray
MIN_TRAY_CONTRAST = 0.15  # faces this much (of 255) brighter than the tray, in the readers' grey
SMALLEST_DIE = 35.0  # pixels across at the working width: smaller dice are not read reliably


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
    # "both": pip reader and network together, then the finder network and the face reader look
    # again at the dice they leave unscored; "first": the first look alone, without looking
    # again; "pips": the pip reader alone
    reader: str = "both"
    # Measured from a picture of the dice in the tray (None: white dice, dark pips, unmeasured).
    dice_colour: tuple[float, float, float] | None = None  # BGR of a face
    pip_colour: tuple[float, float, float] | None = None  # BGR of a pip
    tray_contrast: float | None = None  # 0..1: faces above the tray, in the readers' grey
    die_width: float | None = None  # pixels across at the working width (640)
    tray_brighter: bool = False  # the tray is lighter than the dice's faces

    @property
    def look(self) -> DiceLook | None:
        if self.dice_colour is None or self.pip_colour is None:
            return None
        return DiceLook(self.dice_colour, self.pip_colour)

    def warnings(self) -> list[tuple[str, str]]:
        """What to change in the set-up: (one OLED line, the full sentence), worst first."""
        found = []
        if self.tray_contrast is not None and self.tray_contrast < MIN_TRAY_CONTRAST:
            look = self.look
            if self.tray_brighter:
                line, change = "use a darker tray", "a darker tray lining"
            elif look is not None and look.coloured:
                line = "tray: other colour"
                change = "a tray lining of another colour than the dice (grey, or darker)"
            else:
                line = "darker tray or a lamp"
                change = "a darker tray lining of another colour than the dice, or a lamp on the dice"
            found.append((
                line,
                f"the tray is too close to the dice's colour and brightness (contrast "
                f"{self.tray_contrast:.2f}, needs {MIN_TRAY_CONTRAST}): use {change}",
            ))
        if self.die_width is not None and self.die_width < SMALLEST_DIE:
            height = self.die_width / SMALLEST_DIE
            found.append((
                "dice small: cam lower",
                f"the dice are {self.die_width:.0f} px across at the reader's 640-px width,"
                f" below the {SMALLEST_DIE:.0f} it can trust: mount the camera at most"
                f" {height:.2f} of its present height above the tray (or zoom in)",
            ))
        return found

    def reader_settings(self) -> ReaderSettings:
        return ReaderSettings(
            region=self.region,
            pips=PipSettings(block=self.pip_block, offset=self.pip_offset),
            min_confidence=self.min_confidence,
            tray_level=self.tray_level,
            face_above_tray=self.face_above_tray,
            look=self.look,
            die_width=self.die_width,
        )

    def settle_settings(self) -> SettleSettings:
        return SettleSettings(
            self.pixel_threshold,
            self.motion_fraction,
            self.change_fraction,
            self.settle_frames,
            self.look,
        )


def save_calibration(calibration: TrayCalibration, path: Path) -> None:
    data = {"version": FORMAT_VERSION, **asdict(calibration)}
    data["region"] = list(calibration.region)
    for key in ("dice_colour", "pip_colour"):
        if data[key] is not None:
            data[key] = [round(v, 1) for v in data[key]]
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
        value = OLD_READERS.get(value, value) if isinstance(value, str) else value
        if value not in READERS:
            raise bad(" or ".join(repr(r) for r in READERS))
        return value
    if key in ("tray_level", "tray_contrast", "die_width"):
        return None if value is None else number(value)
    if key in ("dice_colour", "pip_colour"):
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 3:
            raise bad("[blue, green, red] in 0..255, or null")
        colour = tuple(number(v) for v in value)
        if not all(0 <= v <= 255 for v in colour):
            raise bad("[blue, green, red] in 0..255, or null")
        return colour
    if key == "tray_brighter":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
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
    dice_frame: np.ndarray | None = None,
) -> CalibrationResult:
    """Settings for a tray from one or more frames of it empty.

    ``region``: fractions of the frame, or None to find the tray. ``die_size``: a die's width
    in pixels of these frames, to size the pip search. ``exposure``: the camera's controls
    when the frames were taken (None for a photo), from which a fixed exposure is set.
    ``dice_frame``: the same view with the dice lying in the tray, from which the dice's
    colours, the tray's contrast with them and their size are measured.
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
    measured: dict[str, object] = {}
    if dice_frame is not None:
        if frame.ndim != 3 or dice_frame.shape != frame.shape:
            raise UserError(
                "calibrate: the dice picture must be a colour picture of the same view as the"
                f" empty tray's ({width}x{height})"
            )
        found = measure_dice(frame, dice_frame, region)
        measured, more = _dice_settings(found, frame, region)
        notes.extend(more)
        if die_size is None:
            die_size = found.width
    elif tray_level > BRIGHTEST_TRAY:
        raise UserError(
            f"calibrate: the empty tray is too bright ({tray_level:.0f} of 255) for white dice:"
            " use a darker tray lining or less light (for coloured dice, add --dice-image)"
        )
    pip_block = base.pips.block
    if die_size is not None:
        if die_size <= 0:
            raise UserError(f"calibrate: --die-size must be positive, got {die_size}")
        measured["die_width"] = round(die_size * base.working_width / width, 1)
        if die_size < SMALLEST_DIE and width < base.working_width:
            notes.append(
                f"the camera gives {width}x{height}: use at least {base.working_width} px wide"
            )
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
        # With the dice measured, the exposure they were measured at: their colours hold.
        scale = TARGET_TRAY_LEVEL / max(tray_level, 1.0) if dice_frame is None else 1.0
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
        **measured,
    )
    notes.extend(f"warning: {sentence}" for _, sentence in calibration.warnings())
    return CalibrationResult(calibration, tuple(notes))


@dataclass(frozen=True)
class DiceSeen:
    face: tuple[float, float, float]  # BGR
    pip: tuple[float, float, float]  # BGR
    width: float  # a die's median width, pixels of the frame
    count: int


def measure_dice(
    empty: np.ndarray, with_dice: np.ndarray, region: tuple[float, float, float, float]
) -> DiceSeen:
    """The dice's face and pip colours and size: what differs between the two pictures.

    The dice are the square, die-sized patches where the pictures differ; a face's colour is
    that of most of a die's inner part, its pips' the colour farthest from it there.
    """
    height, width = empty.shape[:2]
    x0, y0, x1, y1 = region_pixels(region, width, height)
    before = _lab(cv2.GaussianBlur(empty[y0:y1, x0:x1], (5, 5), 0))
    after_bgr = with_dice[y0:y1, x0:x1]
    after = _lab(cv2.GaussianBlur(after_bgr, (5, 5), 0))
    changed = (np.linalg.norm(after - before, axis=2) > 10.0).astype(np.uint8)
    contours, _ = cv2.findContours(changed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(changed)
    cv2.drawContours(filled, contours, -1, 1, -1)  # pips as light as the tray are die too
    filled = cv2.morphologyEx(filled, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(filled)
    smallest, largest = (0.025 * width) ** 2, (0.3 * width) ** 2  # 16 to 190 px at 640
    inner = np.zeros_like(filled)
    sizes = []
    for i in range(1, count):
        area = float(stats[i, cv2.CC_STAT_AREA])
        box_w, box_h = stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]
        if not smallest <= area <= largest or max(box_w, box_h) > 2.2 * min(box_w, box_h):
            continue
        mask = (labels == i).astype(np.uint8)
        side = math.sqrt(area)
        # The inner part: away from the die's edges, where tray and shadow blend in.
        core = cv2.erode(mask, np.ones((3, 3), np.uint8), iterations=max(1, int(0.12 * side)))
        inner |= core
        sizes.append(side)
    if not sizes:
        raise UserError(
            "calibrate: no dice found in the dice picture: put them in the tray, apart, with"
            " the camera and light as for the empty one (dice of the tray's colour: use a darker"
            " tray or one of another colour)"
        )
    pixels_lab = after.reshape(-1, 3)[inner.reshape(-1) > 0]
    pixels_bgr = after_bgr.reshape(-1, 3)[inner.reshape(-1) > 0].astype(np.float32)
    centre = np.median(pixels_lab, axis=0)
    distance = np.linalg.norm(pixels_lab - centre, axis=1)
    apart = max(20.0, 0.5 * float(np.percentile(distance, 99.5)))
    face = np.median(pixels_bgr[distance < apart], axis=0)
    far = distance >= apart
    pip = np.median(pixels_bgr[far], axis=0) if far.any() else 255.0 - face
    return DiceSeen(_bgr(face), _bgr(pip), float(np.median(sizes)), len(sizes))


def _dice_settings(
    seen: DiceSeen, empty: np.ndarray, region: tuple[float, float, float, float]
) -> tuple[dict[str, object], list[str]]:
    look = DiceLook(seen.face, seen.pip)
    height, width = empty.shape[:2]
    x0, y0, x1, y1 = region_pixels(region, width, height)
    tray = float(np.median(to_grey(empty[y0:y1, x0:x1], look)))
    face = float(to_grey(np.array([[seen.face]], np.uint8), look)[0, 0])
    grey_face = float(cv2.cvtColor(np.array([[seen.face]], np.uint8), cv2.COLOR_BGR2GRAY)[0, 0])
    grey_tray = float(np.median(cv2.cvtColor(empty[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)))
    kind = "coloured" if look.coloured else "white" if look.pips == "dark" else "dark"
    notes = [
        f"{seen.count} dice seen, {seen.width:.0f} px across: {kind} dice with {look.pips} pips"
        " (face BGR {:.0f},{:.0f},{:.0f}; pips {:.0f},{:.0f},{:.0f})".format(*seen.face, *seen.pip),
        f"tray contrast with the dice {(face - tray) / 255:.2f} (at least {MIN_TRAY_CONTRAST})",
    ]
    settings: dict[str, object] = {
        "dice_colour": seen.face,
        "pip_colour": seen.pip,
        "tray_contrast": round((face - tray) / 255, 3),
        "tray_brighter": grey_tray > grey_face,
    }
    return settings, notes


def _lab(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)


def _bgr(colour: np.ndarray) -> tuple[float, float, float]:
    return (round(float(colour[0]), 1), round(float(colour[1]), 1), round(float(colour[2]), 1))
