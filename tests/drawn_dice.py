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


# Trays groups really use, as BGR base colours; each is drawn with its own texture.
TRAYS = {
    "white": (232, 234, 236),
    "felt": (55, 115, 40),  # green felt
    "wood": (70, 125, 170),  # a light wooden bowl
    "dark": (60, 60, 62),
}


def _tray(kind: str | tuple[int, int, int], size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """The tray's floor, float BGR (a key of TRAYS, or a plain BGR colour); ``rng`` makes its
    texture (felt fibres, wood grain)."""
    width, height = size
    image = np.empty((height, width, 3), np.float32)
    image[:] = TRAYS.get(kind, kind)
    if kind == "felt":
        image += cv2.GaussianBlur(rng.normal(0, 9, (height, width)).astype(np.float32),
                                  (0, 0), 1.2)[..., None]
    elif kind == "wood":
        y = np.arange(height, dtype=np.float32)[:, None]
        x = np.arange(width, dtype=np.float32)[None, :]
        grain = np.sin(y / 5.0 + 2.0 * np.sin(x / 90.0 + rng.uniform(0, 6)))
        image += (18 * grain)[..., None] * np.array([0.6, 0.8, 1.0], np.float32)
    return image


def _placer(x: float, y: float, turn: float, die: float):
    """(u, v) in die widths from a die's centre, along its turned sides -> picture (x, y)."""
    c, s = math.cos(math.radians(turn)), math.sin(math.radians(turn))
    return lambda u, v: (x + die * (u * c - v * s), y + die * (u * s + v * c))


def draw_scene(
    dice: list[tuple[int, float, float, float]],
    tray: str | tuple[int, int, int] = "dark",
    face_colour: tuple[int, int, int] = (225, 230, 232),
    pip_colour: tuple[int, int, int] = (25, 25, 30),
    translucent: bool = False,
    glare: bool = False,
    die: int = 56,
    size: tuple[int, int] = (640, 480),
    seed: int = 0,
) -> np.ndarray:
    """A BGR picture of dice (face, x, y, turn) on a textured ``tray`` (a key of TRAYS).

    ``translucent``: the tray shows through a little and the pips of the faces below show
    through the body as soft spots a little off the top face's (the opposite face, seen
    through the die). ``glare``: a lamp's soft reflection across the tray and a highlight on
    a corner of each die. Light falls unevenly, and the camera adds noise.
    """
    rng = np.random.default_rng(seed)
    image = _tray(tray, size, np.random.default_rng(len(str(tray))))  # one tray, one texture
    width, height = size
    face = np.array(face_colour, np.float32)
    for value, x, y, turn in dice:
        at = _placer(x, y, turn, die)
        body = np.array([at(u, v) for u, v in ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))])
        mask = np.zeros((height, width), np.float32)
        cv2.fillConvexPoly(mask, body.round().astype(np.int32), 1.0, cv2.LINE_AA)
        alpha = (0.8 if translucent else 1.0) * mask[..., None]
        image = image * (1 - alpha) + face * alpha
        if translucent and value:
            back = np.zeros((height, width), np.float32)
            shift = (0.06 * die, 0.04 * die)
            for u, v in LAYOUTS[7 - value]:
                px, py = at(-0.27 * u, 0.27 * v)
                cv2.circle(back, (round(px + shift[0]), round(py + shift[1])),
                           max(1, round(0.09 * die)), 1.0, -1, cv2.LINE_AA)
            back = cv2.GaussianBlur(back, (0, 0), 0.07 * die) * mask * 0.3
            image = image * (1 - back[..., None]) + np.array(pip_colour, np.float32) * back[..., None]
        if value:
            pips = np.zeros((height, width), np.float32)
            for u, v in LAYOUTS[value]:
                px, py = at(0.27 * u, 0.27 * v)
                cv2.circle(pips, (round(px), round(py)), max(1, round(0.09 * die)), 1.0, -1,
                           cv2.LINE_AA)
            image = image * (1 - pips[..., None]) + np.array(pip_colour, np.float32) * pips[..., None]
        if glare:
            spot = np.zeros((height, width), np.float32)
            gx, gy = at(0.36, -0.36)
            cv2.circle(spot, (round(gx), round(gy)), max(2, round(0.1 * die)), 0.6, -1)
            spot = cv2.GaussianBlur(spot, (0, 0), 0.05 * die) * mask
            image = image * (1 - spot[..., None]) + 255.0 * spot[..., None]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    light = 1.0 + 0.12 * (xx / width - 0.5)  # a lamp to one side
    image *= light[..., None]
    if glare:
        reflection = np.exp(-(((xx - 0.7 * width) / (0.18 * width)) ** 2
                              + ((yy - 0.3 * height) / (0.12 * height)) ** 2))
        image += (70.0 * reflection)[..., None]
    image += rng.normal(0, 3.0, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def scattered(rng: np.random.Generator, count: int = 3, die: int = 56,
              size: tuple[int, int] = (640, 480)) -> list[tuple[int, float, float, float]]:
    """``count`` dice of random faces and turns, apart from each other and the edges."""
    width, height = size
    dice: list[tuple[int, float, float, float]] = []
    while len(dice) < count:
        x = float(rng.uniform(1.2 * die, width - 1.2 * die))
        y = float(rng.uniform(1.2 * die, height - 1.2 * die))
        if all(math.hypot(x - ox, y - oy) > 1.9 * die for _, ox, oy, _ in dice):
            dice.append((int(rng.integers(1, 7)), x, y, float(rng.uniform(0, 90))))
    return dice
