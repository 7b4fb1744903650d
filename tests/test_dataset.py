"""Labelled photos: the fixed split, YOLO labels and their errors, matching found to labelled."""

import pytest

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import (
    LabelledDie,
    list_photos,
    match_dice,
    parse_labels,
    read_labels,
    set_aside,
    split_of,
)


def test_the_split_depends_only_on_the_name():
    names = [f"photo_{i}" for i in range(2000)]
    first = [split_of(n) for n in names]
    assert first == [split_of(n) for n in reversed(names)][::-1]
    held_out = first.count("heldout") / len(names)
    assert 0.25 < held_out < 0.35


def test_a_fifth_of_training_photos_is_set_aside_by_name_alone():
    names = [f"photo_{i}" for i in range(2000)]
    aside = [set_aside(n) for n in names]
    assert aside == [set_aside(n) for n in names]
    assert 0.15 < sum(aside) / len(names) < 0.25
    # not the same photos as the held-out split picks: it is drawn apart from it
    training = [n for n in names if split_of(n) == "train"]
    assert 0.15 < sum(set_aside(n) for n in training) / len(training) < 0.25


def test_the_real_set_aside_photos(photos):
    assert len(list_photos(photos, "train")) == 226
    assert len(list_photos(photos, "setaside")) == 38


def test_labels_become_pixels_and_faces():
    dice = parse_labels("0 0.5 0.5 0.1 0.2\n5 0.25 0.75 0.05 0.05\n\n", 640, 480)
    assert dice == [
        LabelledDie(1, (320.0, 240.0), (64.0, 96.0)),
        LabelledDie(6, (160.0, 360.0), (32.0, 24.0)),
    ]


@pytest.mark.parametrize("line", ["6 0.5 0.5 0.1 0.1", "1 0.5 0.5", "x 0.5 0.5 0.1 0.1"])
def test_a_bad_label_line_names_the_file_and_line(line):
    with pytest.raises(UserError, match=r"^tray\.txt:2: expected 'class x y w h'"):
        parse_labels("0 0.5 0.5 0.1 0.1\n" + line, 640, 480, source="tray.txt")


def test_a_missing_label_file_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="cannot read label file"):
        read_labels(tmp_path / "none.txt", 640, 480)


def test_listing_pairs_images_with_labels_and_splits_them(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    for i in range(40):
        (tmp_path / "images" / f"p{i}.jpg").write_bytes(b"")
        if i != 3:
            (tmp_path / "labels" / f"p{i}.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    every = list_photos(tmp_path, "all")
    assert len(every) == 39 and "p3" not in {p.name for p in every}
    train, held = list_photos(tmp_path, "train"), list_photos(tmp_path, "heldout")
    assert {p.name for p in train} | {p.name for p in held} == {p.name for p in every}
    assert not {p.name for p in train} & {p.name for p in held}
    aside = list_photos(tmp_path, "setaside")
    assert {p.name for p in aside} == {p.name for p in train if set_aside(p.name)}


def test_a_folder_without_images_and_labels_is_an_error(tmp_path):
    with pytest.raises(UserError, match="expected images/ and labels/"):
        list_photos(tmp_path)


def test_matching_pairs_nearest_first_and_each_die_once():
    truth = [LabelledDie(1, (100, 100), (20, 20)), LabelledDie(2, (200, 100), (20, 20))]
    found = [(195, 98, 25), (104, 103, 25), (400, 400, 25), (102, 99, 25)]
    assert sorted(match_dice(found, truth)) == [(0, 1), (3, 0)]
