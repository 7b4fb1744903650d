"""The face reader's training script: crops cut as the reader cuts them, batches of the asked mix,
and a written reader that runs in onnxruntime as it ran in PyTorch. Skipped where PyTorch is not
installed (``.[train]``)."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from drawn_dice import draw_tray

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from bunco_pi.vision.face_reader import SEEN, UNCLEAR, FaceReader, cut  # noqa: E402
from bunco_pi.vision.net import NetDie  # noqa: E402

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def train():
    sys.path.insert(0, str(SCRIPTS))  # it borrows train_dice_net's augmentations
    spec = importlib.util.spec_from_file_location("train_die_faces", SCRIPTS / "train_die_faces.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_die_faces"] = module
    spec.loader.exec_module(module)
    return module


def labelled_tray(root: Path, name: str, dice: list[tuple[int, float, float, float]]) -> None:
    """A drawn tray with YOLO labels (class x y w h) round each 56-pixel die."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(exist_ok=True)
    cv2.imwrite(str(root / "images" / f"{name}.png"), draw_tray(dice))
    (root / "labels" / f"{name}.txt").write_text(
        "".join(f"{face - 1} {x / 640} {y / 480} {56 / 640} {56 / 480}\n" for face, x, y, _ in dice))


def untrained(build, seed: int):
    """A reader of random weights (``build()``, seeded) whose batch norm has statistics of its
    own, so that folding it into the written file is tested."""
    torch.manual_seed(seed)
    model = build()
    with torch.no_grad():
        model.train()
        for _ in range(3):
            model(torch.randn(16, 3, SEEN, SEEN))
    return model


def bright_centre(crop: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(crop.mean(axis=2) > 150)
    return xs.mean(), ys.mean()


def test_a_kept_crop_seen_plainly_is_the_crop_the_reader_cuts(train):
    image = draw_tray([(1, 210, 226, 0)])  # a die's face, one pip, off the place it is cut at
    (kept, face), = train.crops(("tray", image, [(200.0, 220.0, 56.0, 0)], []))
    assert face == 0
    assert kept.shape == (train.ROOM, train.ROOM, 3)
    seen = train.view(kept, None)
    want = cut(image, (200.0, 220.0), 56.0)
    assert seen.shape == want.shape == (SEEN, SEEN, 3)
    assert np.allclose(bright_centre(seen), bright_centre(want), atol=0.5)
    assert bright_centre(want)[0] > SEEN / 2 + 2  # the die's offset survives: a real check
    assert np.abs(seen.astype(int) - want.astype(int)).mean() < 8  # averaged on two grids, not one


def test_training_views_are_mirrored_and_turned_a_little_but_never_upside_down(train):
    """Up stays up: a slanted die's top face is above the sides it shows the camera."""
    image = draw_tray([(1, 212, 202, 0)])  # a die's face up and right of where it is cut
    (kept, _), = train.crops(("tray", image, [(200.0, 220.0, 56.0, 0)], []))
    rng = np.random.default_rng(7)
    sides = set()
    for _ in range(200):
        seen = train.view(kept, rng).mean(axis=2)
        tray = seen[-3:, 15:25].mean()  # below the die: the tray, however it was relit
        ys, xs = np.nonzero(np.abs(seen - tray) > 50)
        assert ys.mean() < SEEN / 2 - 3  # the die is above the middle, turned at most TILT
        sides.add(bool(xs.mean() > SEEN / 2))
    assert sides == {True, False}  # and mirrored, about half the time


def kept_die(train, face: int) -> np.ndarray:
    """A drawn die of ``face`` kept as training keeps it, centred."""
    image = draw_tray([(face, 200, 220, 0)])
    (kept, _), = train.crops(("tray", image, [(200.0, 220.0, 56.0, 0)], []))
    return kept


def die_pixels(seen: np.ndarray) -> np.ndarray:
    """Where a grey view differs from its corners (the tray) by more than 50."""
    return np.abs(seen - np.median(seen[[0, 0, -1, -1], [0, -1, 0, -1]])) > 50


def die_middles(train, kept: np.ndarray, jitter, crops: int, seed: int = 5) -> np.ndarray:
    """(x, y) of the die's middle in each of ``crops`` views of a kept crop, from the view's middle."""
    rng = np.random.default_rng(seed)
    at = []
    for _ in range(crops):
        ys, xs = np.nonzero(die_pixels(train.view(kept, rng, jitter).mean(axis=2)))
        at.append((xs.mean() - (SEEN - 1) / 2, ys.mean() - (SEEN - 1) / 2))
    return np.array(at)


def test_a_wider_jitter_moves_the_die_further_from_the_middle(train):
    """--shift and --zoom: the boxes the finder gives are off by more than the labels' (a fifth of
    a die's width at the 90th percentile), so a reader can be taught boxes that far off."""
    kept = kept_die(train, 1)

    def furthest(jitter):
        return np.percentile(np.hypot(*die_middles(train, kept, jitter, 150).T), 90)

    assert furthest(train.Jitter(shift=7.0)) > furthest(train.AS_BEFORE) + 1.5
    assert furthest(train.Jitter(shift=0.0, zoom=0.0)) < furthest(train.AS_BEFORE)


def test_a_lower_box_shows_the_die_higher_in_the_view(train):
    """--lower: the finder centres a die seen low on its front face, below its top, so a reader
    can be taught boxes moved down and still name the top. With no other move, the crops show
    the die higher in the view (none lower than an unmoved crop), by up to the pixels asked, and
    no further sideways."""
    kept = kept_die(train, 1)
    # The die's middle moves a little in a crop not moved at all (turned, mirrored, relit): the
    # unmoved crops' spread is the baseline.
    still = die_middles(train, kept, train.Jitter(shift=0.0, zoom=0.0), 120)
    lower = die_middles(train, kept, train.Jitter(shift=0.0, zoom=0.0, lower=6.0), 120)
    assert lower[:, 1].max() < still[:, 1].max() + 0.5  # never lower in the view
    assert lower[:, 1].min() > still[:, 1].min() - 6.5  # no more than asked
    assert np.mean(lower[:, 1]) < np.mean(still[:, 1]) - 2.0  # on average half of it: the box went down
    assert np.std(lower[:, 0]) < np.std(still[:, 0]) + 0.5  # not sideways


def sharpness(crop: np.ndarray) -> float:
    return float(np.abs(cv2.Laplacian(crop, cv2.CV_32F)).mean())


def test_a_resampled_crop_is_the_same_die_blurred_or_sharpened(train):
    kept = kept_die(train, 5)
    plain = train.view(kept, None)
    rng = np.random.default_rng(2)
    sharper = softer = 0
    for _ in range(60):
        out = train.resampled(plain, rng)
        assert out.shape == plain.shape and out.dtype == np.uint8
        assert np.abs(out.astype(int) - plain.astype(int)).mean() < 20  # the same die, not another
        edges = sharpness(out) / sharpness(plain)
        sharper += edges > 1.05
        softer += edges < 0.95
    assert sharper > 5 and softer > 20  # both ways: a large die's crop and a small one's
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    cut_alike = train.placed(kept, rng_a, train.Jitter(resample=0.0))
    resampled = train.placed(kept, rng_b, train.Jitter(resample=1.0))  # the same box, then resampled
    assert not np.array_equal(cut_alike, resampled)
    assert abs(sharpness(resampled) / sharpness(cut_alike) - 1) > 0.05


def test_as_before_a_crop_is_placed_with_the_random_numbers_it_always_drew(train):
    """An old recipe trains as it did: with the defaults, a crop is moved, zoomed and turned by
    the same three draws (shift, zoom, angle) as before the options were made, and no more."""
    kept = kept_die(train, 3)
    for seed in range(5):
        rng, old = np.random.default_rng(seed), np.random.default_rng(seed)
        shift = tuple(old.uniform(-3, 3, 2))
        want = cut(kept, (train.ROOM / 2, train.ROOM / 2), 64 / 2.2, shift=shift,
                   zoom=float(old.uniform(0.85, 1.15)), angle=float(old.uniform(-train.TILT, train.TILT)))
        assert np.array_equal(train.placed(kept, rng), want)
        assert rng.random() == old.random()  # nothing more drawn


def test_a_wider_zoom_spreads_the_dies_width(train):
    kept = kept_die(train, 1)

    def widths(zoom):
        rng = np.random.default_rng(4)
        seen = [train.placed(kept, rng, train.Jitter(shift=0.0, zoom=zoom)).mean(axis=2) for _ in range(80)]
        return np.array([die_pixels(v).sum() for v in seen])

    assert widths(0.0).std() < 0.3 * widths(0.3).std()  # turned alone, the die's area barely changes
    assert widths(0.3).max() / widths(0.3).min() > 1.4


def test_a_batch_has_about_the_asked_share_of_renders(train):
    rng = np.random.default_rng(3)
    real = [(np.zeros((1, 1, 3), np.uint8), 0)]
    drawn = [(np.zeros((1, 1, 3), np.uint8), UNCLEAR)]
    batch = train.pick(real, train.pools(drawn), 0.3, 2000, rng)
    assert 0.25 < sum(cls == UNCLEAR for _, cls in batch) / len(batch) < 0.35
    assert {cls for _, cls in train.pick([], train.pools(drawn), 0.3, 50, rng)} == {UNCLEAR}
    assert {cls for _, cls in train.pick(real, train.pools([]), 0.3, 50, rng)} == {0}


@pytest.mark.parametrize("separable", [False, True])
def test_the_written_reader_runs_in_onnxruntime_as_in_pytorch(train, tmp_path, separable):
    model = untrained(lambda: train.build(separable=separable), seed=0)
    path = tmp_path / "faces.onnx"
    train.export(model, path)
    rng = np.random.default_rng(1)
    crops = [(rng.integers(0, 255, (train.ROOM, train.ROOM, 3), dtype=np.uint8), 0) for _ in range(5)]
    train.check_export(model, path, crops)  # raises SystemExit if they differ
    assert FaceReader(path).second_view == "mirrored"  # as it was trained: kept upright
    assert FaceReader(path).beliefs([train.view(c, None) for c, _ in crops]).shape == (5, UNCLEAR + 1)


@pytest.mark.parametrize("options", [[], ["--separable"]])
def test_a_short_run_trains_and_writes_a_reader(tmp_path, options):
    photos = tmp_path / "photos"
    for k in range(8):
        labelled_tray(photos, f"tray_{k}", [(1 + k % 6, 150, 200, 0), (6 - k % 6, 400, 260, 30)])
    out = tmp_path / "faces.onnx"
    done = subprocess.run([sys.executable, str(SCRIPTS / "train_die_faces.py"), str(photos),
                           "--steps", "3", "--batch", "8", *options, "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    trained = re.search(r"(\d+) photo dice and 0 rendered", done.stdout)
    assert trained and int(trained[1]) > 0 and f"wrote {out}" in done.stdout
    assert FaceReader(out).beliefs([np.zeros((SEEN, SEEN, 3), np.uint8)]).shape == (1, UNCLEAR + 1)
    groups = [a.i for node in onnx.load(str(out)).graph.node for a in node.attribute if a.name == "group"]
    assert (max(groups) > 1) == bool(options)  # depthwise layers written only when asked


def test_a_batch_has_about_the_asked_share_of_rendered_dice_that_cannot_be_read(train):
    rng = np.random.default_rng(4)
    real = [(np.zeros((1, 1, 3), np.uint8), 0)]
    drawn = [(np.zeros((1, 1, 3), np.uint8), UNCLEAR)] + [(np.zeros((1, 1, 3), np.uint8), 2)] * 9
    batch = train.pick(real, train.pools(drawn, 0.5), 1.0, 2000, rng, unclear=0.5)
    assert 0.45 < sum(cls == UNCLEAR for _, cls in batch) / len(batch) < 0.55  # not the tenth drawn
    as_drawn = train.pick(real, train.pools(drawn), 1.0, 2000, rng)
    assert 0.07 < sum(cls == UNCLEAR for _, cls in as_drawn) / len(as_drawn) < 0.13


@pytest.mark.parametrize(("layers", "separable"), [(None, False), ("16,24s,32,48s,64", False),
                                                   ("16,24s,32,48s,64", True)])
def test_a_written_reader_is_trained_on_from_its_file_as_it_reads(train, tmp_path, layers, separable):
    shape = train.LAYERS if layers is None else train.parse_layers(layers)
    model = untrained(lambda: train.build(shape, separable), seed=2)
    path = tmp_path / "faces.onnx"
    train.export(model, path)
    again = train.from_onnx(path)
    rng = np.random.default_rng(5)
    crops = [(rng.integers(0, 255, (train.ROOM, train.ROOM, 3), dtype=np.uint8), 0) for _ in range(4)]
    train.check_export(again, path, crops)  # raises SystemExit if the two read apart
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in again)  # folded: nothing to relearn
    convs = [m for m in again if isinstance(m, torch.nn.Conv2d)]
    written = [m for m in model if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride, c.groups) for c in convs] == [
        (c.in_channels, c.out_channels, c.kernel_size, c.stride, c.groups) for c in written]  # its own shape
    assert len(convs) == (2 * len(shape) - 1 if separable else len(shape))


def test_a_separable_reader_is_the_same_layers_for_a_fraction_of_the_arithmetic(train, tmp_path):
    from benchmarks.network_arithmetic import multiply_adds

    arithmetic = {}
    for separable in (False, True):
        path = tmp_path / f"faces-{separable}.onnx"
        train.export(untrained(lambda s=separable: train.build(separable=s), seed=3), path)
        arithmetic[separable] = multiply_adds(path, (1, 3, SEEN, SEEN))
        assert FaceReader(path).beliefs([np.zeros((SEEN, SEEN, 3), np.uint8)]).shape == (1, UNCLEAR + 1)
    # the shipped layers' 3x3 convolutions after the first are nearly all of a reader's arithmetic
    assert arithmetic[True] < arithmetic[False] / 5


def test_layers_are_widths_with_s_for_a_stride_of_two(train):
    assert train.parse_layers("32,48s,64,96s,96,128") == train.LAYERS  # the shipped reader's
    assert train.parse_layers("8, 16s") == ((3, 8, 1), (8, 16, 2))
    for bad in ("x", "", "s", "0", "-8", "48ss"):
        with pytest.raises(SystemExit, match=f"--layers: {bad!r} is not a width"):
            train.parse_layers(f"8,{bad}")


def test_the_shipped_reader_is_trained_on_in_its_own_shape(train):
    convs = [m for m in train.from_onnx(train.MODEL_PATH) if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.stride[0]) for c in convs] == list(train.LAYERS)


def scene(root: Path, name: str, dice: list[dict]) -> None:
    (root / "scenes").mkdir(parents=True, exist_ok=True)
    (root / "scenes" / f"{name}.json").write_text(json.dumps({"dice": dice}))


def test_rendered_dice_seen_from_the_side_are_taught_as_cannot_be_read(train, tmp_path):
    """Where the scene says a die's top is more than --side degrees from face-on: its label's
    crop, and the crops the first look and the finder cut where they find it."""
    image = draw_tray([(5, 200, 200, 0), (3, 440, 260, 20)])
    h, w = image.shape[:2]
    scene(tmp_path, "r1", [
        {"face": 5, "state": "flat", "x": 200 / w, "y": 200 / h, "slant": 62.0},
        {"face": 3, "state": "flat", "x": 440 / w, "y": 260 / h, "slant": 12.0},
    ])
    sample = ("r1", image, [(200.0, 200.0, 56.0, 4), (440.0, 260.0, 56.0, 2)], [])
    drawn = train._scene_dice(tmp_path, "r1", image)
    _, _, labelled, _ = train._seen_from_the_side(sample, drawn, 50.0)
    assert [cls for *_, cls in labelled] == [UNCLEAR, 2]
    assert train._seen_from_the_side(sample, drawn, 90.0) == sample  # 90: as the labels say
    cut_by_networks = train.as_the_networks_cut(sample, drawn, 50.0)
    taught = sorted(cls for _, cls in cut_by_networks)
    assert taught == [2, 2, UNCLEAR, UNCLEAR]  # each network found each die once
    assert all(crop.shape == (train.ROOM, train.ROOM, 3) for crop, _ in cut_by_networks)
    assert train.as_the_networks_cut(sample, drawn, 90.0) == []


@pytest.mark.parametrize("options", [["--layers", "8,16s"], ["--separable"]])
def test_a_shape_with_init_is_a_one_line_error(tmp_path, options):
    script = str(SCRIPTS / "train_die_faces.py")
    done = subprocess.run([sys.executable, script, "--init", str(tmp_path / "a.onnx"), *options,
                           "--out", str(tmp_path / "b.onnx")], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"{options[0]} with --init: a reader trained on keeps the shape of its file"]


class LeftOrRight(torch.nn.Module):
    """A reader sure of a 1 when a crop is brighter on its left, of a 2 when on its right, and of
    a 3 when it is bright in the middle and even: what a mirrored view changes, it changes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        half = SEEN // 2
        lean = x[..., :half].mean((1, 2, 3)) - x[..., half:].mean((1, 2, 3))
        logits = torch.zeros(len(x), UNCLEAR + 1)
        logits[:, 0], logits[:, 1] = 40 * lean, -40 * lean
        logits[:, 2] = 20 * x[..., half - 4:half + 4, half - 4:half + 4].mean((1, 2, 3)) - 40 * lean.abs()
        return logits


def a_die(train, image: np.ndarray, cls: int) -> list:
    return train.as_the_table_sees(("photo", image, [(100.0, 100.0, 60.0, cls)], []))


def test_validate_counts_a_die_sure_only_when_both_views_are(train):
    """The table leaves a die unscored whose mirrored view reads another face; ``--validate``
    must not count it right and sure."""
    leaning = np.zeros((200, 200, 3), np.uint8)
    leaning[:, :100] = 255  # bright on the left: a 1 as cut, a 2 mirrored
    even = np.zeros((200, 200, 3), np.uint8)
    even[90:110, 90:110] = 255  # bright in the middle: a 3 both ways
    def measured(image: np.ndarray, cls: int) -> str:
        return train.measure(LeftOrRight(), {"die": a_die(train, image, cls)}, 0.95)

    assert "100.0% right and sure, 0 wrong and sure" in measured(even, 2)
    assert "0.0% right and sure, 0 wrong and sure" in measured(leaning, 0)
    assert "0 wrong and sure" in measured(leaning, 1)  # nor wrong


def test_validate_shows_a_reader_the_views_the_table_cuts_from_the_picture(train, tmp_path):
    path = tmp_path / "faces.onnx"
    train.export(train.build(), path)
    image = np.random.default_rng(6).integers(0, 255, (200, 200, 3), dtype=np.uint8)
    (views, cls), = a_die(train, image, 4)
    table = FaceReader(path).views(image, (100.0, 100.0), 60.0)
    assert cls == 4 and len(views) == len(table) == 2
    for ours, theirs in zip(views, table, strict=True):
        assert np.array_equal(ours, theirs)
    assert not np.array_equal(table[0], table[1])  # a second view, not the first again


def test_validate_reads_each_die_as_the_face_reader_at_the_table_reads_it(train, tmp_path):
    """Face, belief and "cannot be read", die by die, as ``FaceReader.read`` gives them for the
    same reader shown the die at its label's box."""
    model = untrained(train.build, seed=3)
    with torch.no_grad():
        model[-1].weight *= 200  # beliefs as sure as a trained reader's, where a mirror image tells
    path = tmp_path / "faces.onnx"
    train.export(model, path)
    image = draw_tray([(2, 150, 200, 0), (5, 400, 260, 30), (6, 260, 120, 60)])
    dice = [(150.0, 200.0, 56.0, 1), (400.0, 260.0, 56.0, 4), (260.0, 120.0, 56.0, 5)]
    ours = train.read(model, train.as_the_table_sees(("tray", image, dice, [])))
    table = FaceReader(path).read(image, [NetDie((x, y), w, 1.0, 1, 1.0) for x, y, w, _ in dice])
    assert [face for face, _, _ in ours] == [d.face for d in table]
    assert np.allclose([belief for _, belief, _ in ours], [d.face_probability for d in table], atol=1e-3)
    assert np.allclose([unclear for _, _, unclear in ours], [d.unclear for d in table], atol=1e-3)
    assert train.read(model, []) == []
    assert train.measure(model, {"empty": []}, 0.95) == "empty: no labelled dice"
