"""The face reader: how a die is cut out, how its two views make one reading, its file, real dice."""

import cv2
import numpy as np
import pytest

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import list_photos, read_labels
from bunco_pi.vision.face_reader import (
    MODEL_PATH,
    PATCH,
    REACH,
    SEEN,
    UNCLEAR,
    FaceReader,
    cut,
    shipped_face_reader,
)
from bunco_pi.vision.net import MODEL_PATH as NET_PATH
from bunco_pi.vision.net import NetDie


def frame_with_die(width=41, marker=(15, 0)):
    """A white square die on black, a red dot beside its centre."""
    frame = np.zeros((480, 640, 3), np.uint8)
    half = width // 2
    cv2.rectangle(frame, (320 - half, 240 - half), (320 + half, 240 + half), (255, 255, 255), -1)
    cv2.circle(frame, (320 + marker[0], 240 + marker[1]), 3, (0, 0, 255), -1)
    return frame


def test_a_die_is_cut_out_in_the_middle_at_the_readers_own_scale():
    for width in (20, 41, 90):  # a die far from the camera, near it, a 12 MP photo's
        crop = cut(frame_with_die(width, marker=(0, 0)), (320.0, 240.0), float(width))
        assert crop.shape == (SEEN, SEEN, 3)
        ys, xs = np.nonzero(crop[..., 1] > 128)
        assert xs.max() - xs.min() + 1 == pytest.approx(PATCH / REACH, abs=2)
        assert (xs.min() + xs.max()) / 2 == pytest.approx(SEEN / 2, abs=1.5)
        assert (ys.min() + ys.max()) / 2 == pytest.approx(SEEN / 2, abs=1.5)


def test_a_quarter_turn_moves_what_is_right_of_a_die_above_it():
    image = frame_with_die()
    for turns, (x, y) in ((0, (SEEN / 2 + 11, SEEN / 2)), (1, (SEEN / 2, SEEN / 2 - 11))):
        crop = cut(image, (320.0, 240.0), 41.0, turns)
        ys, xs = np.nonzero((crop[..., 2] > 100) & (crop[..., 1] < 100))
        assert xs.mean() == pytest.approx(x, abs=1.5) and ys.mean() == pytest.approx(y, abs=1.5)


def test_a_grey_frame_is_cut_in_three_channels():
    grey = cv2.cvtColor(frame_with_die(), cv2.COLOR_BGR2GRAY)
    assert cut(grey, (320.0, 240.0), 41.0).shape == (SEEN, SEEN, 3)


def test_a_missing_or_wrong_file_is_a_one_line_error(tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    for path, says in ((tmp_path / "none.onnx", "no such dice face reader file"),
                       (broken, "cannot load the dice face reader"),
                       (NET_PATH, "not a dice face reader")):
        with pytest.raises(UserError) as error:
            FaceReader(path)
        assert says in str(error.value) and str(path) in str(error.value)
        assert "\n" not in str(error.value)


def test_the_shipped_reader_answers_each_crop_with_seven_beliefs():
    crops = [cut(frame_with_die(), (320.0, 240.0), 41.0, turns) for turns in range(3)]
    beliefs = shipped_face_reader().beliefs(crops)
    assert beliefs.shape == (3, UNCLEAR + 1)
    assert np.allclose(beliefs.sum(axis=1), 1.0, atol=1e-5)
    assert shipped_face_reader().beliefs([]).shape == (0, UNCLEAR + 1)


class _Views(FaceReader):
    """A reader whose two views of each die say what a test chooses."""

    def __init__(self, *views):
        self.views = np.array(views, np.float32)

    def beliefs(self, crops):
        assert len(crops) == len(self.views)
        return self.views


def belief(face=None, p=0.0, unclear=0.0):
    row = np.full(UNCLEAR + 1, (1.0 - p - unclear) / (UNCLEAR + 1), np.float32)
    if face is not None:
        row[face - 1] += p
    row[UNCLEAR] += unclear
    return row


DIE = NetDie((320.0, 240.0), 41.0, 0.9, 2, 0.99, 0.01)


def test_two_views_of_one_face_are_believed_as_the_doubtful_one_believes_it():
    (die,) = _Views(belief(5, 0.97), belief(5, 0.8)).read(frame_with_die(), [DIE])
    assert die.face == 5 and die.face_probability == pytest.approx(0.8 + 0.2 / 7, abs=1e-4)
    assert die.center == DIE.center and die.presence == DIE.presence


def test_two_views_of_different_faces_are_no_belief_at_all():
    (die,) = _Views(belief(5, 0.99), belief(3, 0.6)).read(frame_with_die(), [DIE])
    assert die.face_probability == 0.0


def test_either_view_seeing_a_die_that_cannot_be_read_is_enough():
    (die,) = _Views(belief(4, 0.9), belief(4, 0.1, unclear=0.8)).read(frame_with_die(), [DIE])
    assert die.unclear == pytest.approx(0.8 + 0.1 / 7, abs=1e-4)


def held_out_dice(photos):
    for photo in list_photos(photos, "heldout"):
        image = cv2.imread(str(photo.image_path))
        for die in read_labels(photo.label_path, image.shape[1], image.shape[0]):
            yield image, die


def test_the_held_out_photos_dice_are_read_where_the_labels_put_them(photos):
    """Photos never trained on: each labelled die, cut out as if the network had found it."""
    right = wrong = total = 0
    for image, label in held_out_dice(photos):
        (die,) = shipped_face_reader().read(image, [NetDie(label.center, max(label.size), 1.0, 1, 0.0)])
        total += 1
        if die.face_probability >= 0.9:
            right += die.face == label.face
            wrong += die.face != label.face
    assert total > 200 and wrong == 0 and right >= 0.95 * total  # 263 of 268 when it shipped


def test_the_model_file_ships_with_the_package():
    assert MODEL_PATH.is_file() and MODEL_PATH.stat().st_size < 2_000_000
