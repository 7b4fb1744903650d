"""A picture moved, turned and scaled (an affine map) the way a network's input is shrunk.

OpenCV's ``warpAffine`` samples bilinearly whatever the scale (it reads ``INTER_AREA`` as
``INTER_LINEAR``): a die many times larger than its crop, as in a 12 MP frame, is sampled
every few pixels and its pips alias into noise, where ``cv2.resize`` with ``INTER_AREA`` (how
``net.prepare`` shrinks a frame) averages them. So a map that shrinks first averages the part
of the picture it reaches down to its scale, then samples that.
"""

from __future__ import annotations

import math

import cv2
import numpy as np


def warp_averaged(image: np.ndarray, matrix: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``cv2.warpAffine(image, matrix, size)`` (bilinear, edges mirrored), averaged by area
    first where ``matrix`` shrinks the picture."""
    scale = math.sqrt(abs(np.linalg.det(matrix[:, :2])))
    if scale < 1.0:
        image, matrix = _shrunk_part(image, matrix, size, scale)
    return cv2.warpAffine(image, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101)


def _shrunk_part(image: np.ndarray, matrix: np.ndarray, size: tuple[int, int],
                 scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The part of ``image`` the output reaches, averaged down to ``scale``, and the map from it."""
    h, w = image.shape[:2]
    corners = cv2.invertAffineTransform(matrix) @ np.array(
        [[0, size[0], 0, size[0]], [0, 0, size[1], size[1]], [1, 1, 1, 1]], np.float64)
    x0, y0 = (max(math.floor(v) - 2, 0) for v in corners.min(axis=1))
    x1, y1 = min(math.ceil(corners[0].max()) + 3, w), min(math.ceil(corners[1].max()) + 3, h)
    if x1 - x0 < 2 or y1 - y0 < 2:  # the output lies off the picture: only its mirrored edges
        return image, matrix
    part = image[y0:y1, x0:x1]
    small = cv2.resize(part, (max(round((x1 - x0) * scale), 1), max(round((y1 - y0) * scale), 1)),
                       interpolation=cv2.INTER_AREA)
    sx, sy = small.shape[1] / (x1 - x0), small.shape[0] / (y1 - y0)
    # resize keeps pixel centres: the small picture's pixel q is the image's x0 + (q + 0.5) / sx - 0.5
    back = np.array([[1 / sx, 0, x0 + 0.5 / sx - 0.5], [0, 1 / sy, y0 + 0.5 / sy - 0.5], [0, 0, 1]])
    return small, matrix @ back
