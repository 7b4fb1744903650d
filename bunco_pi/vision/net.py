"""A small convolutional network that finds dice and reads their top faces, in colour.

It is trained here (``scripts/train_dice_net.py``) on rendered trays (``scripts/render_dice.py``:
dice of every colour, marbled and translucent, on felt, wood, cardboard, plastic and paper, in
all kinds of light) and on the training split of two sets of real photos, and shipped as an
ONNX file (``models/dice_net.onnx``) that ``onnxruntime`` runs; nothing is downloaded, and
PyTorch is needed only to train it. The network sees the frame in colour at 320 pixels wide
and answers, for every 4x4 block of pixels, how likely a die's top face is centred there,
which face it is, or that the die there cannot be read (cocked, cut by the frame or the tray's
rim, under a hand: ``unclear``), and how wide its labelled box is (CenterNet's scheme: a die is
a peak in a heat map, so a die with blurred pips is found even where no pip can be made out).
The pip reader is its second opinion (``fusion.py``).

Batch norm is folded into the convolutions when the network is written, so it is nothing
but seven 3x3 convolutions with ReLUs and a 1x1 convolution for the answers.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.look import DiceLook, to_grey
from bunco_pi.vision.reader import region_pixels
from bunco_pi.vision.reading import DieReading, FrameReading

MODEL_PATH = Path(__file__).with_name("models") / "dice_net.onnx"
# The same network trained on with renders of coloured dice: it finds them (its faces are left
# to the face reader), where the shipped network reads the white dice best. fusion.read_again.
FINDER_PATH = Path(__file__).with_name("models") / "dice_finder.onnx"
INPUT_WIDTH = 320  # the network's working width; frames are scaled to it
STRIDE = 4  # one output cell per 4x4 input pixels
CHANNELS = 3  # blue, green, red
UNCLEAR = 6  # the class after the six faces: a die that cannot be read
OUTPUTS = 9  # presence, six faces, unclear, log width
# Pixels (at the working width): a die this wide is read from a look at half the scale
# (``detect(zoom_out=True)``), where it fits what the network sees round a point.
BIG = 56
# The widest die (pixels at the working width) that one look finds as well as two: held-out
# dice enlarged to 50 pixels of 320 were found whole by the finder 39 times of 42 either way, at
# BIG 34 times at one look and 41 at two (docs/dice-camera.md: "Where the tray's die width is
# known"). Where no die can be wider, the look at half the scale is spared (fusion.dice_may_be_big).
ONE_LOOK = 50
# Of two peaks nearer than this share of a die's box width (the wider of the two), only the
# higher is a die: a blurred die can have a double peak. (Two touching dice turned 45 degrees
# are about 0.7 box widths apart, and may be taken for one.) ``detect(apart=...)`` for another.
APART = 0.7
THREADS = 2  # a Pi 4 has four cores; the camera loop and the box's other work keep the rest


class DiceNet:
    """The network, run by onnxruntime (OpenCV does the image work around it)."""

    def __init__(self, path: Path = MODEL_PATH, threads: int = THREADS) -> None:
        self._session = onnx_session(path, threads, "the dice network")
        shape = self._session.get_inputs()[0].shape
        if len(shape) != 4 or shape[1] != CHANNELS:
            raise UserError(f"{path}: not a colour dice network (input {shape})")
        self.path = path
        self._input = self._session.get_inputs()[0].name
        self._lock = threading.Lock()  # a session may run from several threads; kept simple

    def forward(self, image: np.ndarray) -> np.ndarray:
        """(3, H, W) float32 input, H and W multiples of 4 -> (9, H/4, W/4) raw outputs."""
        with self._lock:
            return self._session.run(None, {self._input: image[None].astype(np.float32)})[0][0]


def onnx_session(path: Path, threads: int, what: str) -> Any:
    """An onnxruntime session of a model file on the CPU (a bad file is a one-line error)."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise UserError(f"{what} needs onnxruntime: pip install 'bunco-pi[camera]'") from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Threads that spin after a run, waiting for the next, take the cores from the work between
    # runs and from the other sessions (the network, the finder and the face reader take turns
    # on one frame): without the spin, a settled frame read 1.2 to 2.2 times as fast here.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors for a bad file
        raise UserError(f"{path}: cannot load {what} ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def load_net(path: Path = MODEL_PATH) -> DiceNet:
    if not path.is_file():
        raise UserError(f"{path}: no such dice network file")
    return DiceNet(path)


@lru_cache(maxsize=1)
def shipped_net() -> DiceNet:
    """The network that ships with bunco-pi, loaded once (a missing file is a one-line error)."""
    return load_net(MODEL_PATH)


@lru_cache(maxsize=1)
def shipped_finder() -> DiceNet:
    """The finder network that ships with bunco-pi, loaded once."""
    return load_net(FINDER_PATH)


def prepare(frame: np.ndarray, scale: float | None = None) -> tuple[np.ndarray, tuple[float, float]]:
    """Colour (a grey frame is made three grey channels), scaled (by default to the input
    width) to a multiple of 4 pixels each way.

    ``scale`` is for a crop of a frame: the crop is scaled as the whole frame would be, so a
    die is the size the network learned. Returns the image and the (x, y) scales used.
    """
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    height, width = frame.shape[:2]
    scale = scale or INPUT_WIDTH / width
    out_w = max(STRIDE, int(round(width * scale / STRIDE)) * STRIDE)
    out_h = max(STRIDE, int(round(height * scale / STRIDE)) * STRIDE)
    small = cv2.resize(frame, (out_w, out_h), interpolation=cv2.INTER_AREA)
    return normalise(small), (out_w / width, out_h / height)


def normalise(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 -> (3, H, W): each channel less its mean, over the picture's spread.

    A dim room and a bright one look alike, and so do a warm lamp and a cold one (a channel's
    mean is the white balance); what is left is how the dice stand out from the tray.
    """
    # One pass of OpenCV's for the channels' means and spreads: numpy's mean and std over a
    # float copy took 2 ms a frame, four times this, and the network runs twice or more a throw.
    # The spread is of all three channels each less its own mean: the root of their mean variance.
    means, spreads = cv2.meanStdDev(np.ascontiguousarray(image))
    spread = float(np.sqrt(np.mean(np.square(spreads[:, 0])))) / 255.0
    means32 = means[:, 0].astype(np.float32)
    factor = np.float32(1.0 / (255.0 * (spread + 0.05)))
    # A channel at a time, each written straight into its plane: the same float32 arithmetic
    # as on the interleaved picture, a third of the time (numpy is slow over a last axis of 3).
    out = np.empty((3, *image.shape[:2]), np.float32)
    for plane, channel, mean in zip(out, cv2.split(image), means32, strict=True):
        plane[...] = channel
        plane -= mean
        plane *= factor
    return out


class NetInputs:
    """The networks' inputs made from the frames of one reading, each made once.

    The first look and the finder both see the whole frame at the network's width; shrinking and
    normalising it took as long as a fifth of the finder's look. The frames are kept with their
    inputs, so no frame's ``id`` can be another's while this lives: make one per reading.
    """

    def __init__(self) -> None:
        self._made: dict[tuple[int, tuple[int, int, int, int], float],
                         tuple[np.ndarray, np.ndarray, tuple[float, float]]] = {}

    def prepared(self, frame: np.ndarray, box: tuple[int, int, int, int],
                 scale: float) -> tuple[np.ndarray, tuple[float, float]]:
        """``prepare`` of the ``box`` (x0, y0, x1, y1) of ``frame`` at ``scale``, made once."""
        key = (id(frame), box, scale)
        if key not in self._made:
            x0, y0, x1, y1 = box
            self._made[key] = (frame, *prepare(frame[y0:y1, x0:x1], scale))
        _, image, scales = self._made[key]
        return image, scales


@dataclass(frozen=True)
class NetDie:
    center: tuple[float, float]  # pixels in the frame
    width: float  # pixels: the width of the box the labels put round a die's top face
    presence: float  # 0..1: how sure it is a die's top face is centred here
    face: int  # 1..6, the likeliest
    face_probability: float  # 0..1
    unclear: float = 0.0  # 0..1: how likely this die cannot be read (cocked, cut, hidden)
    # The face the turned second look (``look_again``) named instead, and its belief in it: a
    # view that sees another face is an objection to this one, not only a doubt about it.
    turned_face: int | None = None
    turned_probability: float = 0.0


def decode(
    outputs: np.ndarray, scale: tuple[float, float], min_presence: float = 0.3, apart: float = APART,
) -> list[NetDie]:
    """Peaks of the heat map -> dice in frame pixels, one per die.

    A peak is a cell higher than its 8 neighbours; of two peaks closer than ``apart`` of a die's
    box width (the wider of the two), only the higher is a die (``APART``).
    """
    heat = _sigmoid(outputs[0])
    peaks = heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero(peaks & (heat >= min_presence))
    dice: list[NetDie] = []
    for i in np.argsort(-heat[ys, xs], kind="stable"):
        y, x = ys[i], xs[i]
        logits = outputs[1 : 2 + UNCLEAR, y, x]
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        face = int(np.argmax(probs[:UNCLEAR]))
        width = float(np.exp(outputs[-1, y, x])) * STRIDE / scale[0]
        centre = ((x + 0.5) * STRIDE / scale[0], (y + 0.5) * STRIDE / scale[1])
        if any(math.dist(centre, d.center) < apart * max(width, d.width) for d in dice):
            continue
        dice.append(NetDie(centre, width, float(heat[y, x]), face + 1, float(probs[face]),
                           float(probs[UNCLEAR])))
    return dice


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def detect(
    frame: np.ndarray,
    net: DiceNet | None = None,
    min_presence: float = 0.5,
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    zoom_out: bool = False,
    inputs: NetInputs | None = None,
    apart: float = APART,
) -> list[NetDie]:
    """The dice the network finds in the tray ``region`` (x, y, w, h in 0..1) of a frame.

    ``zoom_out``: look a second time at half the scale (a quarter of the first look's pixels),
    and take from there every die at least ``BIG`` pixels wide (at the working width) in place
    of what the first look made of it. Each answer of the network rests on at most 69 pixels
    round its point, mostly on the middle of them, and it learned from dice of mostly 10 to 50 pixels:
    a die much larger (a camera close over the tray) is seen a part at a time, as several
    small dice or as one whose width, and so the face reader's crop, is cut short. (The
    finder looks so, when it looks again; the first look at every settled frame does not:
    it would cost a third more on every frame for a camera few trays have.)

    ``inputs``: where the networks' inputs of this reading's frames are kept, so that a second
    network looking at the same frame does not make its input again.

    ``apart``: how far apart, in box widths, two of its peaks are two dice (``decode``).
    """
    net = net or shipped_net()
    inputs = inputs or NetInputs()
    dice = _detect_at(frame, net, min_presence, region, 1.0, inputs, apart)
    if not zoom_out:
        return dice
    width = frame.shape[1]
    big = [d for d in _detect_at(frame, net, min_presence, region, 0.5, inputs, apart)
           if d.width * INPUT_WIDTH / width >= BIG]
    rest = [d for d in dice if not any(math.dist(d.center, b.center) < 0.7 * b.width for b in big)]
    return sorted(big + rest, key=lambda d: -d.presence)


def detect_larger(
    frame: np.ndarray,
    net: DiceNet | None = None,
    min_presence: float = 0.5,
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    inputs: NetInputs | None = None,
) -> list[NetDie]:
    """Dice too large even for ``detect``'s look at half the scale, from a look at a quarter of
    it (a sixteenth of the first look's pixels): at least twice ``BIG`` pixels wide at the
    working width, a camera far closer over the tray than the set-up guide asks. There a
    pip with the face round it is what a die showing one looks like at the finer looks' scale."""
    net = net or shipped_net()
    width = frame.shape[1]
    return [d for d in _detect_at(frame, net, min_presence, region, 0.25, inputs or NetInputs())
            if d.width * INPUT_WIDTH / width >= 2 * BIG]


def _detect_at(frame: np.ndarray, net: DiceNet, min_presence: float,
               region: tuple[float, float, float, float], zoom: float, inputs: NetInputs,
               apart: float = APART) -> list[NetDie]:
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = region_pixels(region, width, height)
    # The crop at the scale the whole frame would have: a die is the size the network learned.
    image, scale = inputs.prepared(frame, (x0, y0, x1, y1), zoom * INPUT_WIDTH / width)
    return [
        replace(d, center=(d.center[0] + x0, d.center[1] + y0))
        for d in decode(net.forward(image), scale, min_presence, apart)
    ]


def look_again(frame: np.ndarray, die: NetDie, net: DiceNet | None = None) -> NetDie:
    """The die as the network reads it a second time, in a crop round it turned a quarter.

    A face's pips do not change when it turns, but what the network gets wrong does: a
    reading that holds only at one angle is a guess. Returns the die with the lesser of the
    two views' belief in its face (none if the second view sees another face or no die),
    and the greater of their belief that it cannot be read. A face the second view names
    instead is kept (``turned_face``): a pip count of the first view's face is not backed by a
    network that also sees another.
    """
    net = net or shipped_net()
    height, width = frame.shape[:2]
    half = 1.25 * die.width
    x0, y0 = max(0, int(die.center[0] - half)), max(0, int(die.center[1] - half))
    x1, y1 = min(width, int(die.center[0] + half) + 1), min(height, int(die.center[1] + half) + 1)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return replace(die, face_probability=0.0)
    turned = np.ascontiguousarray(np.rot90(frame[y0:y1, x0:x1]))  # counter-clockwise
    image, scale = prepare(turned, INPUT_WIDTH / width)
    # where the die's centre went: (x, y) in the crop -> (y, crop width - 1 - x) turned
    cx, cy = die.center[0] - x0, die.center[1] - y0
    want = (cy, (x1 - x0) - 1 - cx)
    seen = [d for d in decode(net.forward(image), scale, 0.1) if math.dist(d.center, want) < 0.5 * die.width]
    if not seen:
        return replace(die, face_probability=0.0)
    again = min(seen, key=lambda d: math.dist(d.center, want))
    unclear = max(die.unclear, again.unclear)
    if again.face != die.face:
        return replace(die, face_probability=0.0, unclear=unclear, turned_face=again.face,
                       turned_probability=again.face_probability)
    return replace(die, face_probability=min(die.face_probability, again.face_probability), unclear=unclear)


def as_reading(die: NetDie) -> DieReading:
    """A die the network alone read: its confidence is the lesser of its two answers."""
    if die.unclear >= die.face_probability:
        return DieReading(None, 0.0, die.center, die.width / 2, "cocked or hidden")
    return DieReading(die.face, min(die.presence, die.face_probability), die.center, die.width / 2)


def as_frame_reading(dice: list[NetDie]) -> FrameReading:
    """The network's dice as a reading of their own, top of the tray first."""
    return FrameReading(tuple(as_reading(d) for d in sorted(dice, key=lambda d: (d.center[1], d.center[0]))))


def read_net(
    frame: np.ndarray,
    net: DiceNet | None = None,
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    look: object = None,
) -> FrameReading:
    """The network alone, as a reader. It reads colour itself; for dice whose colours are
    known (``look``, calibrated or learned), it is shown the picture the pip reader sees
    (faces bright, pips and tray dark), as ``fusion.read_both`` shows it."""
    if isinstance(look, DiceLook) and not look.plain_grey:
        frame = to_grey(frame, look)
    return as_frame_reading(detect(frame, net, region=region))
