"""The dice network's training script: drawn trays, targets, and a written network that runs
in OpenCV as it ran in PyTorch. Skipped where PyTorch is not installed (``.[train]``)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "train_dice_net.py"


@pytest.fixture(scope="module")
def train():
    spec = importlib.util.spec_from_file_location("train_dice_net", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_dice_net"] = module
    spec.loader.exec_module(module)
    return module


def test_drawn_trays_have_their_dice_inside_and_labelled(train):
    rng = np.random.default_rng(5)
    for _ in range(20):
        view, dice = train.synthesise(rng)
        assert view.shape == (train.CROP[1], train.CROP[0]) and view.dtype == np.uint8
        for x, y, size, face in dice:
            assert 0 <= x < view.shape[1] and 0 <= y < view.shape[0] and 1 <= face <= 6
            # a die's face is brighter than the tray (the pips are too small to change that)
            r = max(2, int(size / 3))
            patch = view[max(0, int(y) - r) : int(y) + r, max(0, int(x) - r) : int(x) + r]
            assert np.median(patch) > np.median(view)


def test_targets_mark_each_die_centre_with_its_face_and_width(train):
    dice = [(42.0, 30.0, 24.0, 5), (130.0, 90.0, 36.0, 2)]
    heat, face, width, mask = train.targets(dice, (192, 256))
    assert heat.shape == (48, 64)
    for x, y, size, f in dice:
        cx, cy = round(x / 4 - 0.5), round(y / 4 - 0.5)
        assert heat[cy, cx] == 1.0 and face[cy, cx] == f - 1 and mask[cy, cx]
        assert np.exp(width[cy, cx]) * 4 == pytest.approx(size)
    assert (heat == 1.0).sum() == 2 and mask.sum() == 18


def test_the_written_network_runs_in_opencv_as_in_pytorch(train, tmp_path):
    torch.manual_seed(0)
    model = train.build()
    model.train()
    for _ in range(3):  # move batch norm's running figures off their defaults
        model(torch.randn(2, 1, 64, 96))
    path = tmp_path / "net.onnx"
    train.export(train.folded(model), path)
    image = np.random.default_rng(1).integers(0, 255, (120, 160), dtype=np.uint8)
    train.check_export(model, path, image)  # raises SystemExit if they differ
    broken = train.folded(model)
    weight, bias, stride, dilation, relu = broken[2]
    broken[2] = (weight * 1.5, bias, stride, dilation, relu)
    train.export(broken, path)
    with pytest.raises(SystemExit, match="differs"):
        train.check_export(model, path, image)
