"""Real dice as a camera close over the tray sees them: windows of the held-out photos round
one labelled die, enlarged until the die is far larger than the network learned."""

import math

import cv2

from bunco_pi.vision.dataset import list_photos, read_labels
from bunco_pi.vision.net import INPUT_WIDTH


def close_up(image, die, box=None):
    """A window of a photo round one labelled die, enlarged to the network's working width,
    in which the die is about 90 pixels wide (or ``box`` pixels): a camera close over the
    tray. Returns the picture and where the die is in it (x, y, box width)."""
    side = max(die.size)
    half = int(1.8 * side) if box is None else int(side * INPUT_WIDTH / (2 * box))
    x, y = int(die.center[0]), int(die.center[1])
    x0, y0 = max(0, x - half), max(0, y - half)
    window = image[y0:y + half, x0:x + half]
    k = INPUT_WIDTH / window.shape[1]
    close = cv2.resize(window, None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC)
    return close, ((x - x0) * k, (y - y0) * k, side * k)


def large_held_out_dice(photos, count):
    """Held-out photos' dice at least 40 pixels wide (enlarged, mostly their own pixels)."""
    for photo in list_photos(photos, "heldout"):
        image = cv2.imread(str(photo.image_path))
        for die in read_labels(photo.label_path, image.shape[1], image.shape[0]):
            if max(die.size) >= 40:
                yield image, die
                count -= 1
                if count == 0:
                    return


def found_whole(found, x, y, side):
    """Whether the dice ``found`` hold the close-up's die once, at its labelled width (within
    a third): not cut short, nor seen as several dice round its pips."""
    here = [d for d in found if math.hypot(d.center[0] - x, d.center[1] - y) < side / 2]
    return len(here) == 1 and 0.65 < here[0].width / side < 1.35
