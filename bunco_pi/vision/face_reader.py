"""The face reader: a die already found is cut out and its face read alone.

A dice network (``net.py``) reads every face off one map of the whole frame at 320 pixels
wide, where the size of a die, its colours and the tray around it all vary; the finder finds
dice of any colour far better than it reads them (on coloured dice it never trained on, its
likeliest face was right for three dice in four). So each die it finds is cut out at its own
scale (the box the network gives it, 2.2 times over, made 64 pixels across, of which the classifier sees the
middle 40) and read by a small classifier trained on nothing but such crops
(``scripts/train_die_faces.py``): six faces, and "cannot be read" (cocked, cut, hidden, or
seen so far from the side that the face it shows is not its top).

Each die is read twice, as cut and mirrored (or, by a model trained turned any way, turned a
quarter: the model file says which); a face is believed only as much as the lesser of the two
views believes it. A face does not change when it is mirrored or turned, but what the
classifier gets wrong does. The shipped reader is kept upright: a slanted die shows its top
face above the side faces it turns to the camera, and a quarter turn would put them beside it.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.net import NetDie, normalise, onnx_session
from bunco_pi.vision.resample import warp_averaged

MODEL_PATH = Path(__file__).with_name("models") / "die_faces.onnx"
PATCH = 64  # a die's crop: its box 2.2 times over, so the die is about 29 pixels wide
SEEN = 40  # the middle of the crop the classifier sees
REACH = 2.2  # the crop's side in box widths
UNCLEAR = 6  # the class after the six faces: a die that cannot be read
THREADS = 2
# A model turned any way in training reads a die turned a quarter as a second view; one kept
# upright (the side faces of a slanted view below the top) reads it mirrored, which keeps up up.
SECOND_VIEWS = ("turned", "mirrored")


def cut(frame: np.ndarray, center: tuple[float, float], width: float, turns: int = 0,
        shift: tuple[float, float] = (0.0, 0.0), zoom: float = 1.0, angle: float = 0.0,
        side: int = SEEN) -> np.ndarray:
    """The middle ``side`` x ``side`` pixels of a die's crop at the reader's scale (a die's box
    is PATCH / REACH pixels wide), turned ``turns`` quarters counter-clockwise (and, for
    training, moved, zoomed, turned by ``angle`` degrees and kept wider with ``side``)."""
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    scale = PATCH / max(REACH * width, 1.0) * zoom  # crop pixels per frame pixel
    middle = (side - 1) / 2  # the crop's middle, in pixel centres
    matrix = cv2.getRotationMatrix2D(center, 90.0 * turns + angle, scale)
    matrix[:, 2] += (middle + shift[0] - center[0], middle + shift[1] - center[1])
    return warp_averaged(frame, matrix, (side, side))  # a large die averaged, not sampled


def views(frame: np.ndarray, center: tuple[float, float], width: float, second_view: str) -> list[np.ndarray]:
    """A die's two crops for a reader whose second view is ``second_view`` (``SECOND_VIEWS``):
    as cut, and turned a quarter or mirrored."""
    if second_view == "mirrored":
        crop = cut(frame, center, width)
        return [crop, np.ascontiguousarray(crop[:, ::-1])]
    return [cut(frame, center, width, turns) for turns in (0, 1)]


class FaceReader:
    """The classifier, run by onnxruntime: crops in, each die's belief in each answer out."""

    def __init__(self, path: Path = MODEL_PATH, threads: int = THREADS) -> None:
        if not path.is_file():
            raise UserError(f"{path}: no such dice face reader file")
        self._session = onnx_session(path, threads, "the dice face reader")
        shape = self._session.get_inputs()[0].shape
        if len(shape) != 4 or shape[1:] != [3, SEEN, SEEN]:
            raise UserError(f"{path}: not a dice face reader (input {shape})")
        self.path = path
        second = self._session.get_modelmeta().custom_metadata_map.get("second_view", "turned")
        if second not in SECOND_VIEWS:
            raise UserError(f"{path}: unknown second view {second!r} (expected {' or '.join(SECOND_VIEWS)})")
        self.second_view = second
        self._input = self._session.get_inputs()[0].name
        self._lock = threading.Lock()

    def beliefs(self, crops: list[np.ndarray]) -> np.ndarray:
        """(N, 7) probabilities of faces 1..6 and "cannot be read", one row per crop."""
        if not crops:
            return np.zeros((0, UNCLEAR + 1), np.float32)
        x = np.stack([normalise(c) for c in crops])
        with self._lock:
            logits = self._session.run(None, {self._input: x})[0]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def views(self, frame: np.ndarray, center: tuple[float, float], width: float) -> list[np.ndarray]:
        """A die's two crops: as cut, and turned a quarter or mirrored, as the model learned."""
        return views(frame, center, width, self.second_view)

    def read(self, frame: np.ndarray, dice: list[NetDie]) -> list[NetDie]:
        """Each die with its face as the two views read it: the likeliest face of both views
        together, believed as the lesser view believes it (nothing if they differ); "cannot
        be read" as the greater view believes it."""
        crops = []
        for d in dice:
            crops += self.views(frame, d.center, d.width)
        both = self.beliefs(crops).reshape(len(dice), 2, UNCLEAR + 1)
        out = []
        for die, beliefs in zip(dice, both, strict=True):
            face, belief, unclear = judged(beliefs)
            out.append(replace(die, face=face, face_probability=belief, unclear=unclear))
        return out


def judged(beliefs: np.ndarray) -> tuple[int, float, float]:
    """A die's reading from its views' beliefs (one row of ``FaceReader.beliefs`` a view): the
    likeliest face (1..6) of the views together, believed as the least of them believes it
    (0 if any view's likeliest face is another), and "cannot be read" as the most of them
    believes it. The training script measures a reader by it, so that it measures the face
    reader's verdict as the table gets it (the table weighs the finder's too)."""
    face = int(np.argmax(beliefs[:, :UNCLEAR].sum(axis=0)))
    agree = all(int(np.argmax(view[:UNCLEAR])) == face for view in beliefs)
    belief = float(beliefs[:, face].min()) if agree else 0.0
    return face + 1, belief, float(beliefs[:, UNCLEAR].max())


@lru_cache(maxsize=1)
def shipped_face_reader() -> FaceReader:
    """The face reader that ships with bunco-pi, loaded once."""
    return FaceReader(MODEL_PATH)
