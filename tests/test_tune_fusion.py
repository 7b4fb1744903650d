"""The fusion tuner's count of dice whose labels look wrong (``DOUBTED``): apart from the wrong
ones only when read as the photo shows them, so "fewest wrong" is the fewest real mistakes."""

import importlib.util
import sys
from pathlib import Path

import cv2
import pytest
from drawn_dice import draw_tray

from bunco_pi.vision.evaluate import Mistake, load_image

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def labelled_tray(folder: Path) -> Path:
    """A folder holding one drawn tray of three dice, labelled."""
    dice = [(6, 200, 200, 0), (4, 420, 260, 20), (2, 300, 330, 10)]
    (folder / "images").mkdir(parents=True)
    (folder / "labels").mkdir()
    cv2.imwrite(str(folder / "images" / "a.png"), draw_tray(dice, die=50, pip=0.08))
    (folder / "labels" / "a.txt").write_text(
        "".join(f"{f - 1} {x / 640} {y / 480} 0.08 0.1\n" for f, x, y, _ in dice))
    return folder


@pytest.fixture(scope="module")
def tune():
    spec = importlib.util.spec_from_file_location("tune_fusion", SCRIPTS / "tune_fusion.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tune_fusion"] = module
    spec.loader.exec_module(module)
    return module


def test_a_doubted_label_read_as_its_top_shows_is_counted_apart(tune):
    # IMG_20191112_111903 (312,338): labelled 2, a blue die whose top shows one pip
    assert tune.DOUBTED[("dice-photos-mixed", "IMG_20191112_111903", (312, 338))] == 1
    read_as_shown = Mistake("wrong and sure", (311.6, 338.4), 2, 1, 1.0)
    assert tune.doubted("dice-photos-mixed", "IMG_20191112_111903", (read_as_shown,)) == 1


@pytest.mark.parametrize("folder, photo, mistake", [
    ("dice-photos-mixed", "IMG_20191112_111903", Mistake("wrong and sure", (312.0, 338.0), 2, 4, 1.0)),
    ("dice-photos-mixed", "IMG_20191112_111903", Mistake("not sure", (312.0, 338.0), 2, None)),
    ("dice-photos-mixed", "IMG_20191112_111903", Mistake("wrong and sure", (330.0, 338.0), 2, 1, 1.0)),
    ("dice-photos", "IMG_20191112_111903", Mistake("wrong and sure", (312.0, 338.0), 2, 1, 1.0)),
])
def test_any_other_reading_or_place_is_as_the_label_says(tune, folder, photo, mistake):
    """Another face, no face, another die of the photo, or another folder: not doubted."""
    assert tune.doubted(folder, photo, (mistake,)) == 0


def test_photos_made_harder_are_read_and_counted_as_a_folder_of_their_own(tune, tmp_path, monkeypatch,
                                                                          capsys):
    photos, renders = labelled_tray(tmp_path / "photos"), labelled_tray(tmp_path / "renders")
    seen = []
    monkeypatch.setattr(tune, "load_image", lambda path: seen.append(path) or load_image(path))
    made = []
    # made so hard that nothing is left of it: none of its dice can be read
    monkeypatch.setitem(tune.HARDER, "negative", lambda image: made.append(image) or 0 * image + 90)
    # one setting of each, the present one, so that the grid is read in a moment
    base = tune.FusionSettings()
    monkeypatch.setattr(tune, "AGAIN", {k: (getattr(base, k),) for k in tune.AGAIN})
    monkeypatch.setattr(tune, "GRID", {k: (getattr(base, k),) for k in tune.GRID})
    argv = ["tune_fusion.py", str(photos), "--split", "all", "--renders", str(renders),
            "--harder", "negative", "--harder", "negative"]
    monkeypatch.setattr(sys, "argv", argv)
    assert tune.main() == 0
    out = capsys.readouterr().out
    # the photo read as it is and once made harder (named twice, read once); the render as it is
    assert len(seen) == 3 and len(made) == 1
    assert f"3 photos of {photos} (all, +negative), {renders} (all)" in out
    present = [line for line in out.splitlines() if line.endswith("(present)")][0]
    assert "photos 100.0%/0  photos+negative 0.0%/0  renders 100.0%/0" in present


@pytest.fixture
def tried(tune, monkeypatch):
    """Every setting the tuner scores, in order, the looking-again's grid one row of the present
    values but for what a test names."""
    base = tune.FusionSettings()
    monkeypatch.setattr(tune, "AGAIN", {k: (getattr(base, k),) for k in tune.AGAIN})
    scored = []
    score = tune.score
    monkeypatch.setattr(tune, "score", lambda readings, fusion, settings: scored.append(fusion)
                        or score(readings, fusion, settings))
    return scored


def test_again_tries_only_the_values_named(tune, tried, tmp_path, monkeypatch, capsys):
    one_photo = labelled_tray(tmp_path / "photos")
    base = tune.FusionSettings()
    monkeypatch.setattr(sys, "argv", ["tune_fusion.py", str(one_photo), "--split", "all",
                                      "--again", "again_sure=0.9,0.97", "--again", "again_alone=1.01",
                                      "--again-only"])
    assert tune.main() == 0
    out = capsys.readouterr().out
    looked_again = [f for f in tried if f.again and f != base]
    assert sorted(f.again_sure for f in looked_again) == [0.9, 0.97]
    assert {f.again_alone for f in looked_again} == {1.01}
    assert {f.again_agree for f in looked_again} == {base.again_agree}  # not named: the grid's
    assert "the first look alone" not in out and not any(not f.again for f in tried)


def test_first_tries_a_first_look_threshold_with_the_looking_again(tune, tried, tmp_path, monkeypatch,
                                                                    capsys):
    one_photo = labelled_tray(tmp_path / "photos")
    base = tune.FusionSettings()
    monkeypatch.setattr(sys, "argv", ["tune_fusion.py", str(one_photo), "--split", "all", "--again-only",
                                      "--first", "sure=0.9,0.95", "--first", "sure_alone=0.99"])
    assert tune.main() == 0
    out = capsys.readouterr().out
    graded = [f for f in tried if f != base]
    assert sorted(f.sure for f in graded) == [0.9, 0.95]  # with the looking-again, as the table reads
    assert all(f.again and f.sure_alone == 0.99 for f in graded)
    assert {f.objection for f in graded} == {base.objection}  # not named: held at its present value
    rows = [line.split() for line in out.splitlines()[3:]]  # after the count, title and heads
    assert sorted((r[1], r[2]) for r in rows if r[-1] != "(present)") == [("0.9", "0.99"), ("0.95", "0.99")]


def test_a_value_named_twice_is_tried_once(tune):
    assert tune.held_to(["again_sure=0.9,0.97,0.9"])["again_sure"] == (0.9, 0.97)


@pytest.mark.parametrize("option, held, says", [
    ("--again", ["again_surely=0.9"], "--again again_surely=0.9: no looking-again threshold 'again_surely'"),
    ("--again", ["again_sure=high"], "--again again_sure=high: the values must be numbers"),
    ("--again", ["again_sure"], "--again again_sure: expected NAME=V,V"),
    ("--again", ["again_sure="], "--again again_sure=: the values must be numbers"),
    ("--again", ["again_sure=nan"], "--again again_sure=nan: a threshold lies from 0 to 1.01"),
    ("--again", ["again_sure=1.5"], "--again again_sure=1.5: a threshold lies from 0 to 1.01"),
    ("--again", ["again_sure=0.9", "again_sure=0.95"], "--again again_sure=0.95: again_sure is named twice"),
    ("--first", ["again_sure=0.9"], "--first again_sure=0.9: no first-look threshold 'again_sure' (sure,"),
    ("--first", ["seen=0.3"], "--first seen=0.3: no first-look threshold 'seen'"),  # read once, not tried
    ("--first", ["sure"], "--first sure: expected NAME=V,V, as sure=0.95,0.97"),
    ("--first", ["sure=-1"], "--first sure=-1: a threshold lies from 0 to 1.01"),
    ("--first", ["sure=0.9", "sure=0.95"], "--first sure=0.95: sure is named twice"),
])
def test_a_bad_again_or_first_is_one_line_naming_it(tune, monkeypatch, option, held, says):
    argv = ["tune_fusion.py", "photos"]  # refused before any photo is read
    for one in held:
        argv += [option, one]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit:
        tune.main()
    message = str(exit.value.code)
    assert message.startswith(says) and "\n" not in message
