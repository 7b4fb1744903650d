"""An affine map that averages a picture down where it shrinks it, and is warpAffine elsewhere."""

import cv2
import numpy as np

from bunco_pi.vision.resample import warp_averaged


def checks(height=1200, width=1600):
    """Pixel-fine grain: black and white in turn, 127.5 on average."""
    board = (np.indices((height, width)).sum(axis=0) % 2 * 255).astype(np.uint8)
    return cv2.merge([board] * 3)


def test_a_shrinking_map_averages_fine_grain_to_its_grey():
    matrix = cv2.getRotationMatrix2D((800.0, 600.0), 30.0, 0.1)
    matrix[:, 2] += (20.0 - 800.0, 20.0 - 600.0)
    view = warp_averaged(checks(), matrix, (40, 40)).astype(float)
    assert abs(view.mean() - 127.5) < 3 and view.std() < 6
    sampled = cv2.warpAffine(checks(), matrix, (40, 40), flags=cv2.INTER_LINEAR).astype(float)
    assert sampled.std() > 40  # what it replaces: the grain aliased


def test_a_map_that_does_not_shrink_is_warp_affine_itself():
    rng = np.random.default_rng(2)
    image = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
    matrix = cv2.getRotationMatrix2D((80.0, 60.0), 17.0, 1.5)
    want = cv2.warpAffine(image, matrix, (100, 90), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101)
    assert np.array_equal(warp_averaged(image, matrix, (100, 90)), want)


def test_a_shrunk_picture_lands_where_the_map_puts_it():
    image = np.zeros((1000, 1000, 3), np.uint8)
    image[400:500, 600:700] = 255  # a square whose centre is (649.5, 449.5)
    matrix = np.array([[0.2, 0.0, 5.0], [0.0, 0.2, 7.0]])
    view = warp_averaged(image, matrix, (200, 200))[..., 0].astype(float)
    rows, columns = np.indices(view.shape)
    assert abs((columns * view).sum() / view.sum() - (0.2 * 649.5 + 5.0)) < 0.05
    assert abs((rows * view).sum() / view.sum() - (0.2 * 449.5 + 7.0)) < 0.05


def test_a_view_off_the_picture_or_at_its_corner_is_still_made():
    matrix = np.array([[0.1, 0.0, -500.0], [0.0, 0.1, -500.0]])  # far off the picture
    assert warp_averaged(checks(), matrix, (40, 40)).shape == (40, 40, 3)
    corner = np.array([[0.1, 0.0, 17.0], [0.0, 0.1, 17.0]])  # the picture's corner in the middle
    view = warp_averaged(checks(), corner, (40, 40)).astype(float)
    assert abs(view.mean() - 127.5) < 3 and view.std() < 6
