"""Scoring readings against labels: right, wrong, unsure, missed and invented dice."""

import cv2
import numpy as np
import pytest
from drawn_dice import draw_tray

from bunco_pi.cli import parser_for
from bunco_pi.commands.camera import HARDER_KINDS
from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import list_photos
from bunco_pi.vision.evaluate import HARDER, evaluate, evaluate_rolls, load_image, score_photo
from bunco_pi.vision.reader import read_pips
from bunco_pi.vision.reading import DieReading, FrameReading


def die(face, x, y, confidence=0.9):
    return DieReading(face, confidence, (x, y), 20.0)


def test_each_kind_of_outcome_is_counted(tmp_path):
    labels = tmp_path / "a.txt"
    # Four dice at (100,100) (200,100) (300,100) (400,100) showing 1, 2, 3, 4.
    labels.write_text("".join(f"{f} {x / 640} {100 / 480} 0.03 0.04\n" for f, x in
                              [(0, 100), (1, 200), (2, 300), (3, 400)]))
    reading = FrameReading((
        die(1, 101, 99),  # right
        die(5, 199, 102),  # wrong
        die(3, 300, 100, confidence=0.2),  # unsure
        die(6, 600, 400),  # invented; the 4 is missed
    ))
    result = score_photo("a", reading, labels, (640, 480), min_confidence=0.5)
    assert (result.right, result.wrong, result.unsure, result.missed, result.invented) == (
        1, 1, 1, 1, 1)
    assert not result.all_right


def test_evaluate_on_a_folder_of_drawn_trays(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    scenes = {
        "a": [(2, 150, 150, 0), (6, 420, 170, 20)],
        "b": [(5, 300, 300, 10)],
    }
    for name, dice in scenes.items():
        cv2.imwrite(str(tmp_path / "images" / f"{name}.png"), draw_tray(dice))
        (tmp_path / "labels" / f"{name}.txt").write_text(
            "".join(f"{f - 1} {x / 640} {y / 480} 0.06 0.08\n" for f, x, y, _ in dice)
        )
    result = evaluate(list_photos(tmp_path), read_pips, 0.5)
    assert result.total("dice") == 3
    assert result.die_accuracy == 1.0 and result.photo_accuracy == 1.0


@pytest.mark.parametrize("harder", sorted(set(HARDER) - {"large"}))
def test_harder_photos_keep_their_size_and_change(harder):
    image = draw_tray([(5, 300, 240, 10)])
    made = HARDER[harder](image)
    assert made.shape == image.shape and made.dtype == image.dtype
    assert (made.astype(int) - image).any()


@pytest.mark.parametrize("harder", sorted(HARDER))
def test_the_command_line_offers_every_kind_of_harder_photo(harder):
    argv = ["dice", "eval", "photos", "--harder", harder]
    assert parser_for(argv).parse_args(argv).harder == harder


def test_the_command_line_offers_no_kind_of_harder_photo_that_is_not_made(capsys):
    assert tuple(HARDER) == HARDER_KINDS  # its list, kept apart from OpenCV, names every kind and no other
    argv = ["dice", "eval", "photos", "--harder", "fog"]
    with pytest.raises(SystemExit):
        parser_for(argv).parse_args(argv)
    assert "invalid choice: 'fog'" in capsys.readouterr().err


def pixel(bgr):
    return np.full((4, 4, 3), bgr, np.uint8)


def test_large_makes_a_12_megapixel_phone_photo_of_the_same_tray():
    image = draw_tray([(5, 300, 240, 10)])  # 640x480
    large = HARDER["large"](image)
    assert large.shape == (3024, 4032, 3)
    assert np.abs(cv2.resize(large, (640, 480), interpolation=cv2.INTER_AREA).astype(int) - image).mean() < 2


def test_the_hue_turned_a_third_makes_red_dice_green_and_blue_ones_red():
    red, green, blue = pixel((30, 30, 200)), pixel((30, 200, 30)), pixel((200, 30, 30))
    assert np.abs(HARDER["hue"](red).astype(int) - green).max() <= 3
    assert np.abs(HARDER["hue"](green).astype(int) - blue).max() <= 3
    assert np.abs(HARDER["hue"](blue).astype(int) - red).max() <= 3
    white = pixel((240, 240, 240))
    assert (HARDER["hue"](white) == white).all()  # white dice stay white; only colours turn


def test_the_negative_gives_dark_dice_light_pips():
    face, pip = pixel((235, 235, 235)), pixel((20, 20, 20))
    assert (HARDER["negative"](face) == 20).all() and (HARDER["negative"](pip) == 235).all()


def test_grey_takes_the_colour_away_and_keeps_the_lightness():
    made = HARDER["grey"](pixel((30, 30, 200)))
    assert (made[..., 0] == made[..., 1]).all() and (made[..., 1] == made[..., 2]).all()
    assert abs(int(made[0, 0, 0]) - int(cv2.cvtColor(pixel((30, 30, 200)), cv2.COLOR_BGR2GRAY)[0, 0])) <= 1


def test_a_warm_lamp_is_redder_and_a_cold_one_bluer():
    white = pixel((200, 200, 200))
    assert tuple(HARDER["warm"](white)[0, 0]) == (120, 180, 220)  # blue, green, red x 0.6, 0.9, 1.1
    assert tuple(HARDER["cold"](white)[0, 0]) == (230, 190, 120)  # x 1.15, 0.95, 0.6
    assert (HARDER["warm"](pixel((250, 250, 250)))[..., 2] == 255).all()  # clipped, never wrapped


def test_harder_photos_are_read_harder_and_an_unknown_kind_is_an_error(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    dice = [(6, 200, 200, 0), (4, 420, 260, 20)]
    cv2.imwrite(str(tmp_path / "images" / "a.png"), draw_tray(dice, die=40, pip=0.07))
    (tmp_path / "labels" / "a.txt").write_text(
        "".join(f"{f - 1} {x / 640} {y / 480} 0.06 0.08\n" for f, x, y, _ in dice)
    )
    photos = list_photos(tmp_path)
    seen = []
    evaluate(photos, lambda image: seen.append(image) or FrameReading(()), 0.5)
    evaluate(photos, lambda image: seen.append(image) or FrameReading(()), 0.5, "motion")
    assert seen[0].std() > seen[1].std()  # what the reader was given was the blurred photo
    with pytest.raises(UserError, match="--harder: unknown 'fog'"):
        evaluate(photos, read_pips, 0.5, "fog")


def test_load_image_errors_name_the_file(tmp_path):
    with pytest.raises(UserError, match=r"missing\.jpg: no such image file"):
        load_image(tmp_path / "missing.jpg")
    junk = tmp_path / "junk.jpg"
    junk.write_text("not a picture")
    with pytest.raises(UserError, match=r"junk\.jpg: not an image OpenCV can read"):
        load_image(junk)


def test_each_mistake_is_kept_with_its_place_label_and_reading(tmp_path):
    labels = tmp_path / "a.txt"
    labels.write_text("".join(f"{f} {x / 640} {100 / 480} 0.03 0.04\n" for f, x in
                              [(0, 100), (1, 200), (2, 300), (3, 400)]))
    reading = FrameReading((
        die(1, 101, 99),  # right: not a mistake
        die(5, 199, 102),  # wrong and sure
        DieReading(None, 0.0, (300, 100), 20.0, "unsure: two readings"),  # not sure
        die(6, 600, 400),  # extra; the 4 is missed
    ))
    result = score_photo("a", reading, labels, (640, 480), 0.5, file="a.jpg")
    assert result.file == "a.jpg"
    assert [m.describe() for m in result.mistakes] == [
        "(200,100) wrong and sure: label 2, read 5 (0.90)",
        "(300,100) not sure: label 3, read ? (0.00, unsure: two readings)",
        "(400,100) missed: label 4, nothing read",
        "(600,400) extra: no die labelled, read 6 (0.90)",
    ]
    assert len(result.mistakes) == result.wrong + result.unsure + result.missed + result.invented


def labelled_trays(root, trays, unclear=()):
    """A folder of blank pictures labelled with ``trays`` (name -> faces, a die every 100 pixels
    along y=100); ``unclear``: names given an unclear box too."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for name, faces in trays.items():
        cv2.imwrite(str(root / "images" / f"{name}.png"), np.full((480, 640, 3), 128, np.uint8))
        (root / "labels" / f"{name}.txt").write_text(
            "".join(f"{f - 1} {(100 + 100 * i) / 640} {100 / 480} 0.03 0.04\n" for i, f in enumerate(faces)))
    if unclear:
        (root / "labels_unclear").mkdir()
        for name in unclear:
            (root / "labels_unclear" / f"{name}.txt").write_text("6 0.5 0.8 0.03 0.04\n")
    return list_photos(root)


def test_each_photo_is_judged_as_a_roll_of_its_dice_and_of_a_die_fewer(tmp_path):
    photos = labelled_trays(tmp_path, {"a": (2, 5, 5), "b": (1, 3, 6), "c": (4, 4, 2), "d": (6,)})
    scripted = {  # (photo's first label, dice the table expects) -> the faces read, all sure
        (2, 3): (5, 2, 5),  # right in another order: a score counts faces, not places
        (2, 2): (2, 5),  # a die too many, scored: wrong, though each face read is right
        (1, 3): (1, 3, 5),  # wrong
        (1, 2): (1, 3, 6),  # a die too many, refused: "saw 3 dice, not 2"
        (4, 3): (4, 4),  # refused: a die short
        (4, 2): (4, 4),
        (6, 1): (6,),
    }
    asked = []

    def read(image, dice):
        first = int(photos[len(asked) // 2].label_path.read_text().split()[0]) + 1
        asked.append(dice)
        faces = scripted[(first, dice)]
        return FrameReading(tuple(die(f, 100 + 100 * i, 100) for i, f in enumerate(faces)))

    rolls = evaluate_rolls(photos, read, 0.5)
    assert asked == [3, 2, 3, 2, 3, 2, 1]  # a photo of one die has no die fewer to be read as
    assert [(r.name, r.held, r.dice, r.outcome) for r in rolls] == [
        ("a", 3, 3, "right"), ("a", 3, 2, "wrong"),
        ("b", 3, 3, "wrong"), ("b", 3, 2, "refused"),
        ("c", 3, 3, "refused"), ("c", 3, 2, "wrong"),
        ("d", 1, 1, "right"),
    ]
    assert rolls[1].describe() == "holds 3 (2 5 5), read as a roll of 2: scored 2 5"
    assert rolls[3].describe() == "holds 3 (1 3 6), read as a roll of 2: refused (saw 3 dice, not 2)"
    assert rolls[4].describe() == "holds 3 (2 4 4), read as a roll of 3: refused (saw 2 dice, not 3)"


def test_a_roll_is_refused_when_a_die_is_not_sure(tmp_path):
    photos = labelled_trays(tmp_path, {"a": (3, 3, 3)})
    sure_but_one = FrameReading((die(3, 100, 100), die(3, 200, 100), die(3, 300, 100, confidence=0.4)))
    unsure = evaluate_rolls(photos, lambda image, dice: sure_but_one, 0.5)
    assert [(r.outcome, r.reason) for r in unsure] == [
        ("refused", "unsure: low confiden~"), ("refused", "saw 3 dice, not 2")]
    assert [r.outcome for r in evaluate_rolls(photos, lambda image, dice: sure_but_one, 0.3)] == [
        "right", "refused"]


def test_a_photo_with_a_die_nobody_could_label_or_with_no_die_is_no_roll(tmp_path):
    photos = labelled_trays(tmp_path, {"a": (1, 2, 3), "b": (4, 5, 6), "c": ()}, unclear=("a",))
    rolls = evaluate_rolls(photos, lambda image, dice: FrameReading(()), 0.5)
    assert [(r.name, r.dice) for r in rolls] == [("b", 3), ("b", 2)]


def test_rolls_read_the_harder_photo_and_an_unknown_kind_is_an_error(tmp_path):
    photos = labelled_trays(tmp_path, {"a": (1, 2)})
    seen = []
    evaluate_rolls(photos, lambda image, dice: seen.append(image) or FrameReading(()), 0.5, "negative")
    assert all((image == 255 - 128).all() for image in seen) and len(seen) == 2
    with pytest.raises(UserError, match="--harder: unknown 'fog'"):
        evaluate_rolls(photos, lambda image, dice: FrameReading(()), 0.5, "fog")
