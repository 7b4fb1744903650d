"""The dice network: its file, how its answers become dice, the tray region, real photos."""

import threading

import cv2
import numpy as np
import pytest
from close_ups import close_up, found_whole, large_held_out_dice
from drawn_dice import draw_tray

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import list_photos, read_labels
from bunco_pi.vision.fusion import FusionSettings
from bunco_pi.vision.net import (
    CHANNELS,
    INPUT_WIDTH,
    MODEL_PATH,
    OUTPUTS,
    STRIDE,
    UNCLEAR,
    NetDie,
    as_reading,
    decode,
    detect,
    detect_larger,
    load_net,
    look_again,
    normalise,
    onnx_session,
    prepare,
    read_net,
    shipped_finder,
    shipped_net,
)
from bunco_pi.vision.verdict import SettledRoll, judge


def answers(height=60, width=80):
    """Raw outputs saying 'nothing here' everywhere: presence logit -6, even faces, width 10."""
    out = np.zeros((OUTPUTS, height, width), np.float32)
    out[0] = -6.0
    out[1 + UNCLEAR] = -4.0  # every die readable
    out[-1] = np.log(10 / STRIDE)
    return out


def die_at(out, x, y, face, presence=4.0, certainty=6.0):
    out[0, y, x] = presence
    out[1 + face - 1, y, x] = certainty
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        out[0, y + dy, x + dx] = presence - 1.5  # a real peak has shoulders


def test_a_peak_is_one_die_with_its_face_place_and_width():
    out = answers()
    die_at(out, 20, 10, face=4)
    (die,) = decode(out, (0.5, 0.4))
    assert die.face == 4
    assert die.center == pytest.approx(((20 + 0.5) * STRIDE / 0.5, (10 + 0.5) * STRIDE / 0.4))
    assert die.width == pytest.approx(10 / 0.5)
    assert die.presence == pytest.approx(1 / (1 + np.exp(-4.0)))
    assert die.face_probability > 0.98


def test_shoulders_of_a_peak_and_weak_peaks_are_not_dice():
    out = answers()
    die_at(out, 20, 10, face=2)
    die_at(out, 60, 40, face=5, presence=-1.0)  # p = 0.27: a smudge, not a die
    dice = decode(out, (1.0, 1.0), min_presence=0.5)
    assert [d.face for d in dice] == [2]


def test_a_double_peak_is_one_die_and_touching_dice_are_two():
    out = answers()
    out[-1] = np.log(20 / STRIDE)  # each die 20 px wide at the network's scale: 5 cells
    die_at(out, 20, 10, face=2)
    die_at(out, 22, 11, face=2, presence=3.0)  # a second, lower peak 2.2 cells away: the same die
    die_at(out, 40, 30, face=6)
    die_at(out, 45, 30, face=5, presence=3.0)  # a die's width away: a die touching it
    dice = decode(out, (1.0, 1.0))
    assert sorted((d.face, d.center) for d in dice) == [
        (2, (82.0, 42.0)), (5, (182.0, 122.0)), (6, (162.0, 122.0))
    ]


def test_peaks_nearer_than_apart_are_one_die_and_further_two():
    out = answers()
    out[-1] = np.log(18 / STRIDE)  # each die 18 px wide at the network's scale
    die_at(out, 20, 10, face=2)
    die_at(out, 23, 10, face=4, presence=3.0)  # 12 px away: two thirds of a box width
    assert [d.face for d in decode(out, (1.0, 1.0))] == [2]  # APART: 0.7 of a width is one die
    assert [d.face for d in decode(out, (1.0, 1.0), apart=0.6)] == [2, 4]
    assert [d.face for d in decode(out, (1.0, 1.0), apart=0.68)] == [2]


def test_an_even_spread_over_faces_is_an_unsure_face():
    out = answers()
    die_at(out, 5, 5, face=3, certainty=0.2)
    (die,) = decode(out, (1.0, 1.0))
    assert die.face == 3 and die.face_probability < 0.25


def test_a_die_the_network_cannot_read_has_no_face():
    out = answers()
    die_at(out, 20, 10, face=3, certainty=1.0)
    out[1 + UNCLEAR, 10, 20] = 5.0  # cocked, cut or hidden, more likely than any face
    (die,) = decode(out, (1.0, 1.0))
    assert die.unclear > 0.9 and die.face_probability < 0.1
    reading = as_reading(die)
    assert reading.face is None and reading.problem == "cocked or hidden"


def test_prepare_makes_a_warm_lamp_and_a_cold_one_alike():
    frame = draw_tray([(5, 320, 240, 0)])
    warm = np.clip(frame * np.array([0.7, 0.9, 1.15]), 0, 255).astype(np.uint8)
    a, _ = prepare(frame)
    b, _ = prepare(warm)
    for channel in range(CHANNELS):
        assert np.corrcoef(a[channel].ravel(), b[channel].ravel())[0, 1] > 0.99


def test_prepare_scales_to_the_input_width_in_steps_of_four():
    frame = np.full((481, 641, 3), 120, np.uint8)
    image, (sx, sy) = prepare(frame)
    assert image.shape == (CHANNELS, 240, INPUT_WIDTH)
    assert sx == pytest.approx(INPUT_WIDTH / 641) and sy == pytest.approx(240 / 481)
    assert image.dtype == np.float32


def test_prepare_makes_a_dim_frame_and_a_bright_one_alike():
    frame = draw_tray([(5, 320, 240, 0)])
    dim = (frame * 0.4).astype(np.uint8)
    bright, _ = prepare(frame)
    dark, _ = prepare(dim)
    assert abs(float(bright.mean())) < 1e-3 and abs(float(dark.mean())) < 1e-3
    assert np.corrcoef(bright.ravel(), dark.ravel())[0, 1] > 0.99


def test_normalise_centres_each_channel_and_divides_by_the_spread_of_all_three():
    # The definition the networks were trained with, written the plain way: in 0..1, each
    # channel less its own mean, over the standard deviation of all that is left (plus 0.05).
    rng = np.random.default_rng(3)
    frame = np.clip(draw_tray([(5, 320, 240, 0), (2, 200, 300, 30)]) * rng.uniform(0.5, 1.2, 3)
                    + rng.normal(0, 6, (480, 640, 3)), 0, 255).astype(np.uint8)
    # and a mirrored crop (not contiguous), and floats, as the training scripts may pass
    for image in (frame, frame[40:200, 300:100:-1], frame.astype(np.float32)):
        x = image.astype(np.float64) / 255
        x -= x.mean(axis=(0, 1))
        want = (x / (x.std() + 0.05)).transpose(2, 0, 1)
        got = normalise(image)
        assert got.dtype == np.float32 and got.shape == want.shape and got.flags.c_contiguous
        assert np.abs(got - want).max() < 1e-5


def test_a_missing_or_broken_network_file_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="no such dice network file"):
        load_net(tmp_path / "gone.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(UserError) as caught:
        load_net(broken)
    assert str(broken) in str(caught.value) and "\n" not in str(caught.value)


def test_a_session_runs_on_the_threads_given_and_they_do_not_spin_between_runs():
    """The network, the finder and the face reader take turns on each frame: threads left
    spinning after one session's run take the cores from the next (docs/dice-camera-experiments.md, Speed)."""
    options = onnx_session(MODEL_PATH, 2, "the dice network").get_session_options()
    assert options.intra_op_num_threads == 2 and options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_the_shipped_network_answers_for_every_cell():
    assert MODEL_PATH.is_file()
    image, _ = prepare(np.zeros((480, 640, 3), np.uint8))
    out = shipped_net().forward(image)
    assert out.shape == (OUTPUTS, 240 // STRIDE, INPUT_WIDTH // STRIDE)
    assert np.isfinite(out).all()


def test_threads_sharing_the_network_each_get_their_own_answer(photos):
    frames = [cv2.imread(str(photos / "images" / f"{name}.jpg")) for name in REAL]
    want = [detect(frame) for frame in frames]
    got: dict[int, list] = {}

    def read_all(k):
        got[k] = [detect(frame) for frame in frames * 3]

    threads = [threading.Thread(target=read_all, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(got[k] == want * 3 for k in range(4))


def test_dice_on_trays_unlike_the_photos_desk_are_read():
    """Dark, grey and pale trays, small and large dice, noise: the photos have none of these."""
    rng = np.random.default_rng(7)
    right = total = 0
    for seed in range(24):
        tray, die = int(rng.choice([30, 70, 110, 150])), int(rng.integers(40, 80))
        dice = [(int(rng.integers(1, 7)), 120 + 180 * k + rng.uniform(-20, 20),
                 240 + rng.uniform(-100, 100), rng.uniform(0, 90)) for k in range(3)]
        image = draw_tray(dice, die=die, tray=tray, noise=float(rng.uniform(0, 8)), seed=seed)
        found = detect(image)
        assert len(found) == 3
        for face, x, y, _ in dice:
            (near,) = [d for d in found if np.hypot(d.center[0] - x, d.center[1] - y) < die / 2]
            total += 1
            right += near.face == face and near.face_probability >= 0.9
    assert right >= 0.95 * total


def test_a_blank_tray_has_no_dice():
    assert detect(np.full((480, 640, 3), 90, np.uint8)) == []


# Held-out photos with every face among them (names from the fixed split, never trained on).
REAL = ["dice_33", "two_16", "two_38", "three_22", "four_46", "five_32", "six_56"]


@pytest.mark.parametrize("name", REAL)
def test_real_photos(photos, name):
    image = cv2.imread(str(photos / "images" / f"{name}.jpg"))
    truth = read_labels(photos / "labels" / f"{name}.txt", image.shape[1], image.shape[0])
    result = judge(read_net(image), dice=len(truth))
    assert isinstance(result, SettledRoll) and sorted(result.faces) == sorted(d.face for d in truth)


def test_real_photos_named_here_were_never_trained_on(photos):
    assert set(REAL) <= {p.name for p in list_photos(photos, "heldout")}


def test_a_tray_region_keeps_dice_where_they_are_in_the_frame(photos):
    image = cv2.imread(str(photos / "images" / "three_22.jpg"))
    whole = detect(image)
    region = (0.13, 0.07, 0.8, 0.87)  # a crop whose scaled size must be rounded to steps of 4
    inside = detect(image, region=region)
    assert len(inside) == len(whole) > 0
    by_place = sorted(whole, key=lambda d: d.center), sorted(inside, key=lambda d: d.center)
    for a, b in zip(*by_place, strict=True):
        assert a.face == b.face
        assert np.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1]) < STRIDE * 2


class _Turned:
    """A network that sees, in a turned crop, one die with a face we choose (or none)."""

    def __init__(self, face=None):
        self.face = face

    def forward(self, image):
        out = answers(image.shape[1] // STRIDE, image.shape[2] // STRIDE)
        if self.face is not None:
            die_at(out, out.shape[2] // 2, out.shape[1] // 2, self.face)
        return out


def test_a_second_look_keeps_a_face_the_network_reads_again_turned(photos):
    image = cv2.imread(str(photos / "images" / "three_22.jpg"))
    for die in detect(image):
        again = look_again(image, die)
        assert again.face == die.face and again.face_probability >= 0.9
        assert again.face_probability <= die.face_probability


@pytest.mark.parametrize("seen, left", [(None, 0.0), (2, 0.0), (4, 0.99)])
def test_a_second_look_that_sees_another_face_or_none_makes_the_face_unsure(seen, left):
    image = draw_tray([(4, 320, 240, 0)])
    die = NetDie((320.0, 240.0), 60.0, 0.9, 4, 0.99)
    assert look_again(image, die, _Turned(seen)).face_probability == pytest.approx(left, abs=0.01)


def test_a_second_look_that_sees_another_face_says_which_and_how_sure():
    image = draw_tray([(4, 320, 240, 0)])
    die = NetDie((320.0, 240.0), 60.0, 0.9, 4, 0.99)
    other = look_again(image, die, _Turned(2))
    assert (other.face, other.turned_face) == (4, 2) and other.turned_probability > 0.9
    for seen in (None, 4):  # no die, or the same face: nothing named against it
        assert look_again(image, die, _Turned(seen)).turned_face is None


def test_a_die_too_large_for_the_network_to_see_whole_is_found_at_half_the_scale(photos):
    """Real held-out dice enlarged to 90 pixels of 320 (the network learned dice of 10 to 50):
    looked at only at full scale each is cut short or seen as several dice; looking again at
    half the scale finds each once, at its labelled width."""
    whole = cut_short = total = 0
    for image, die in large_held_out_dice(photos, 16):
        close, (x, y, side) = close_up(image, die)
        total += 1
        for zoom_out in (True, False):
            right = found_whole(detect(close, zoom_out=zoom_out, min_presence=0.3), x, y, side)
            if zoom_out:
                whole += right
            else:
                cut_short += not right
    assert total == 16
    assert whole >= 0.6 * total  # 12 of 16 when written; none without
    assert cut_short >= 0.75 * total  # what the half-scale look is for


def test_a_die_too_large_even_for_half_the_scale_is_found_at_a_quarter(photos):
    """Real held-out dice enlarged to 150 pixels of 320 (a camera far too close): the look at
    a quarter of the scale finds most of them once, at their labelled width; the two finer
    looks find almost none whole."""
    larger = finer = total = 0
    for image, die in large_held_out_dice(photos, 16):
        close, (x, y, side) = close_up(image, die, box=150)
        total += 1
        larger += found_whole(detect_larger(close, shipped_finder(), 0.5), x, y, side)
        finer += found_whole(detect(close, shipped_finder(), 0.3, zoom_out=True), x, y, side)
    assert total == 16
    assert larger >= 0.75 * total  # 14 of 16 when written
    assert finer <= 0.125 * total  # none when written


def test_only_dice_twice_big_come_from_the_quarter_look(photos):
    """On the held-out photos (every die under BIG pixels) the quarter look finds nothing at
    the bar looking again gives it (``FusionSettings.seen``)."""
    for photo in list_photos(photos, "heldout")[:8]:
        assert detect_larger(cv2.imread(str(photo.image_path)), shipped_finder(), FusionSettings().seen) == []


def test_dice_no_larger_than_the_network_learned_are_found_as_at_full_scale(photos):
    """Zooming out only ever replaces large dice: on the photos (dice under BIG pixels) the
    dice found are the same with it and without."""
    for photo in list_photos(photos, "heldout")[:8]:
        image = cv2.imread(str(photo.image_path))
        assert detect(image, zoom_out=True) == detect(image, zoom_out=False)
