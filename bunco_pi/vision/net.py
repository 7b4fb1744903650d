"""A small convolutional network that finds dice and reads their top faces.

It is trained here from the labelled photos (``scripts/train_dice_net.py``) and shipped as an
ONNX file (``models/dice_net.onnx``, about 350 KB) that OpenCV's dnn module runs; nothing is
downloaded, and PyTorch is needed only to train it. The network sees the frame in grey at 320
pixels wide and answers, for every 4x4 block of pixels, how likely a die's top face is
centred there, which face it is, and how wide its labelled box is (CenterNet's scheme: a die
is a peak in a heat map, so a die with blurred pips is found even where no pip can be made
out). It was never shown touching dice and often sees two as one; the pip reader keeps those
apart (``fusion.py``).

Batch norm is folded into the convolutions when the network is written, so it is nothing
but seven 3x3 convolutions with ReLUs and a 1x1 convolution for the answers.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.look import DiceLook, to_grey
from bunco_pi.vision.reader import region_pixels
from bunco_pi.vision.reading import DieReading, FrameReading

MODEL_PATH = Path(__file__).with_name("models") / "dice_net.onnx"
INPUT_WIDTH = 320  # the network's working width; frames are scaled to it
STRIDE = 4  # one output cell per 4x4 input pixels


class DiceNet:
    """The network, run by OpenCV's dnn module (no other library at run time).

    OpenCV's network object keeps its input and buffers between calls, so two threads using
    it at once would read each other's frames: ``forward`` holds a lock.
    """

    def __init__(self, path: Path = MODEL_PATH) -> None:
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            raise UserError(f"{path}: cannot load the dice network ({_first_line(exc)})") from None
        self.path = path
        self._lock = threading.Lock()

    def forward(self, image: np.ndarray) -> np.ndarray:
        """(1, H, W) float32 input, H and W multiples of 4 -> (8, H/4, W/4) raw outputs."""
        with self._lock:
            self._net.setInput(image[None])
            return self._net.forward()[0].copy()


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


def prepare(
    frame: np.ndarray, scale: float | None = None, look: DiceLook | None = None
) -> tuple[np.ndarray, tuple[float, float]]:
    """Grey (faces bright: ``look.to_grey``), scaled (by default to the input width) to a
    multiple of 4 pixels each way.

    ``scale`` is for a crop of a frame: the crop is scaled as the whole frame would be, so a
    die is the size the network learned. Returns the image and the (x, y) scales used.
    """
    gray = to_grey(frame, look)
    height, width = gray.shape
    scale = scale or INPUT_WIDTH / width
    out_w = max(STRIDE, int(round(width * scale / STRIDE)) * STRIDE)
    out_h = max(STRIDE, int(round(height * scale / STRIDE)) * STRIDE)
    small = cv2.resize(gray, (out_w, out_h), interpolation=cv2.INTER_AREA)
    return normalise(small), (out_w / width, out_h / height)


def normalise(gray: np.ndarray) -> np.ndarray:
    """By the picture's own mean and spread: a dim room and a bright one look alike."""
    x = gray.astype(np.float32) / 255.0
    return ((x - x.mean()) / (x.std() + 0.05))[None]


@dataclass(frozen=True)
class NetDie:
    center: tuple[float, float]  # pixels in the frame
    width: float  # pixels: the width of the box the labels put round a die's top face
    presence: float  # 0..1: how sure it is a die's top face is centred here
    face: int  # 1..6, the likeliest
    face_probability: float  # 0..1


def decode(
    outputs: np.ndarray, scale: tuple[float, float], min_presence: float = 0.3
) -> list[NetDie]:
    """Peaks of the heat map -> dice in frame pixels, one per die.

    A peak is a cell higher than its 8 neighbours; of two peaks closer than 0.7 of a die's box
    width, only the higher is a die: a blurred die can have a double peak. (Two touching dice
    turned 45 degrees are about 0.7 box widths apart, and may be taken for one here.)
    """
    heat = _sigmoid(outputs[0])
    peaks = heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero(peaks & (heat >= min_presence))
    dice: list[NetDie] = []
    for i in np.argsort(-heat[ys, xs], kind="stable"):
        y, x = ys[i], xs[i]
        logits = outputs[1:7, y, x]
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        face = int(np.argmax(probs))
        width = float(np.exp(outputs[7, y, x])) * STRIDE / scale[0]
        centre = ((x + 0.5) * STRIDE / scale[0], (y + 0.5) * STRIDE / scale[1])
        if any(math.dist(centre, d.center) < 0.7 * max(width, d.width) for d in dice):
            continue
        dice.append(NetDie(centre, width, float(heat[y, x]), face + 1, float(probs[face])))
    return dice


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def detect(
    frame: np.ndarray,
    net: DiceNet | None = None,
    min_presence: float = 0.5,
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    look: DiceLook | None = None,
) -> list[NetDie]:
    """The dice the network finds in the tray ``region`` (x, y, w, h in 0..1) of a frame."""
    net = net or shipped_net()
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = region_pixels(region, width, height)
    # The crop at the scale the whole frame would have: a die is the size the network learned.
    image, scale = prepare(frame[y0:y1, x0:x1], INPUT_WIDTH / width, look)
    return [
        replace(d, center=(d.center[0] + x0, d.center[1] + y0))
        for d in decode(net.forward(image), scale, min_presence)
    ]


def read_net(
    frame: np.ndarray,
    net: DiceNet | None = None,
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    look: DiceLook | None = None,
) -> FrameReading:
    """The network alone, as a reader: a die's confidence is the lesser of its two answers."""
    dice = detect(frame, net, region=region, look=look)
    return FrameReading(
        tuple(
            DieReading(d.face, min(d.presence, d.face_probability), d.center, d.width / 2)
            for d in sorted(dice, key=lambda d: (d.center[1], d.center[0]))
        )
    )
