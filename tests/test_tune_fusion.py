"""The fusion tuner's count of dice whose labels look wrong (``DOUBTED``): apart from the wrong
ones only when read as the photo shows them, so "fewest wrong" is the fewest real mistakes."""

import importlib.util
import sys
from pathlib import Path

import pytest

from bunco_pi.vision.evaluate import Mistake

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
