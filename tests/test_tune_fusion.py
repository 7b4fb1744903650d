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


def test_a_doubted_label_counts_apart_in_the_photo_made_harder_too(tune):
    read_as_shown = Mistake("wrong and sure", (312.0, 338.0), 2, 1, 1.0)
    assert tune.doubted("dice-photos-mixed+negative", "IMG_20191112_111903", (read_as_shown,)) == 1
    assert tune.doubted("dice-photos+negative", "IMG_20191112_111903", (read_as_shown,)) == 0


def test_photos_made_harder_are_read_and_counted_as_a_folder_of_their_own(tune, tmp_path, monkeypatch,
                                                                          capsys):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    dice = [(6, 200, 200, 0), (4, 420, 260, 20), (2, 300, 330, 10)]
    cv2.imwrite(str(tmp_path / "images" / "a.png"), draw_tray(dice, die=50, pip=0.08))
    (tmp_path / "labels" / "a.txt").write_text(
        "".join(f"{f - 1} {x / 640} {y / 480} 0.08 0.1\n" for f, x, y, _ in dice))
    seen = []
    monkeypatch.setattr(tune, "load_image", lambda path: seen.append(path) or load_image(path))
    made = []
    monkeypatch.setitem(tune.HARDER, "negative", lambda image: made.append(image) or 255 - image)
    # one setting of each, the present one, so that the grid is read in a moment
    base = tune.FusionSettings()
    monkeypatch.setattr(tune, "AGAIN", {k: (getattr(base, k),) for k in tune.AGAIN})
    monkeypatch.setattr(tune, "GRID", {k: (getattr(base, k),) for k in tune.GRID})
    argv = ["tune_fusion.py", str(tmp_path), "--split", "all", "--harder", "negative"]
    monkeypatch.setattr(sys, "argv", argv)
    assert tune.main() == 0
    out = capsys.readouterr().out
    assert len(seen) == 2 and len(made) == 1  # the photo read as it is, and again made harder
    assert f"2 photos of {tmp_path} (all, +negative)" in out
    present = [line for line in out.splitlines() if line.endswith("(present)")][0]
    assert f"{tmp_path.name} " in present and f"{tmp_path.name}+negative " in present
