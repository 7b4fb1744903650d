"""Drawn dice on a tray, for the camera tests."""

from __future__ import annotations

import math

import cv2
import numpy as np

from bunco_pi.vision.faces import LAYOUTS


def draw_tray(
    dice: list[tuple[int, float, float, float]],
    size: tuple[int, int] = (640, 480),
    die: int = 56,
    tray: int = 70,
    noise: float = 0.0,
    seed: int = 0,
    pip: float = 0.09,
    spread: float = 0.27,
    face_colour: tuple[int, int, int] = (225, 230, 232),
    pip_colour: tuple[int, int, int] = (25, 25, 30),
    light: float = 0.0,
) -> np.ndarray:
    """A BGR picture of a dark tray from above with white dice: (face, x, y, turn in degrees).

    face 0 draws a blank die (no pips); pips sit where a real die has them: ``pip`` is a
    pip's radius and ``spread`` the corner pips' offset from the centre, both in die widths.
    ``light`` brightens the right of the picture and darkens the left by that much.
    """
    width, height = size
    image = np.full((height, width, 3), tray, np.uint8)
    for face, x, y, turn in dice:
        angle = math.radians(turn)
        c, s = math.cos(angle), math.sin(angle)
        half = die / 2
        corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        body = corners @ np.array([[c, s], [-s, c]]) + [x, y]
        cv2.fillConvexPoly(image, body.round().astype(np.int32), face_colour, cv2.LINE_AA)
        if face:
            for u, v in LAYOUTS[face]:
                px = x + spread * die * (u * c - v * s)
                py = y + spread * die * (u * s + v * c)
                centre, radius = (round(px), round(py)), max(1, round(pip * die))
                cv2.circle(image, centre, radius, pip_colour, -1, cv2.LINE_AA)
    if light:
        ramp = np.linspace(-light, light, width)[None, :, None]
        image = np.clip(image + ramp, 0, 255).astype(np.uint8)
    if noise:
        rng = np.random.default_rng(seed)
        image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    return image
