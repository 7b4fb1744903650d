"""The dice network's training script: drawn trays, targets, masked boxes, and a written network
that runs in onnxruntime as it ran in PyTorch. Skipped where PyTorch is not installed (``.[train]``)."""

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "train_dice_net.py"
ROLL = Path(__file__).parent / "fixtures" / "refusals" / "roll.jpg"  # three dice the shipped network sees
FACES_PATH = Path(__file__).parent.parent / "bunco_pi" / "vision" / "models" / "die_faces.onnx"


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
        assert view.shape == (train.CROP[1], train.CROP[0], 3) and view.dtype == np.uint8
        view = view.mean(axis=2)
        for x, y, size, face in dice:
            assert 0 <= x < view.shape[1] and 0 <= y < view.shape[0] and 0 <= face <= 5
            # a die's face is brighter than the tray (the pips are too small to change that)
            r = max(2, int(size / 3))
            patch = view[max(0, int(y) - r) : int(y) + r, max(0, int(x) - r) : int(x) + r]
            assert np.median(patch) > np.median(view)


def test_a_large_photo_is_averaged_down_and_its_dice_move_with_it(train, monkeypatch):
    """A view of a large photo is made as the network's map of a frame is, by area: fine grain
    stays grey, and a die's labelled centre lands on the die in the view."""
    checks = (np.indices((1500, 2000)).sum(axis=0) % 2 * 255).astype(np.uint8)
    photo = np.dstack([checks] * 3)
    photo[700:800, 950:1050] = (0, 0, 255)  # a red die 100 pixels wide
    monkeypatch.setattr(train, "_photometric", lambda view, rng: view)  # no noise, no new light
    rng = np.random.default_rng(3)
    for _ in range(10):
        view, dice, _ = train.augment(photo, [(1000.0, 750.0, 100.0, 2)], [], rng, real=False)
        x, y, size, face = dice[0]
        if not (size < x < view.shape[1] - size and size < y < view.shape[0] - size):
            continue  # the die was left out of this view
        hsv = cv2.cvtColor(view, cv2.COLOR_BGR2HSV)
        red = (hsv[..., 1] > 120) & ((hsv[..., 0] < 12) | (hsv[..., 0] > 168))
        near = np.zeros_like(red)  # the photo's edge may be mirrored into a view: look near
        near[int(y - size) : int(y + size), int(x - size) : int(x + size)] = True
        ys, xs = np.nonzero(red & near)
        assert abs(xs.mean() - x) < 2 and abs(ys.mean() - y) < 2
        grain = view[~red].astype(float)
        assert grain.std() < 10  # sampled, not averaged, it would be 0 and 255


def test_targets_mark_each_die_centre_with_its_face_and_width(train):
    dice = [(42.0, 30.0, 24.0, 4), (130.0, 90.0, 36.0, 1), (200.0, 40.0, 30.0, train.UNCLEAR)]
    heat, cls, width, counts = train.targets(dice, [], (192, 256))
    assert heat.shape == (48, 64)
    for x, y, size, c in dice:
        cx, cy = round(x / 4 - 0.5), round(y / 4 - 0.5)
        assert heat[cy, cx] == 1.0 and cls[cy, cx] == c
        assert np.exp(width[cy, cx]) * 4 == pytest.approx(size)
    assert (heat == 1.0).sum() == 3 and (cls >= 0).sum() == 27 and counts.all()


def test_an_unclear_box_is_neither_a_die_nor_no_die(train):
    """The photos' labels_unclear boxes: no heat-map loss around them, no face taught."""
    heat, cls, _, counts = train.targets([(42.0, 30.0, 24.0, 4)], [(150.0, 100.0, 32.0)], (192, 256))
    cx, cy = round(150 / 4 - 0.5), round(100 / 4 - 0.5)
    assert counts[cy, cx] == 0 and heat[cy, cx] == 0 and cls[cy, cx] == -1
    assert counts[round(30 / 4 - 0.5), round(42 / 4 - 0.5)] == 1 and counts[0, 63] == 1
    out = torch.zeros(1, train.OUTPUTS, 48, 64)
    out[0, 0] = -5.0  # "no die" everywhere
    wanted = [torch.from_numpy(a[None]) for a in (heat, cls, np.zeros_like(heat), counts)]
    masked = train.loss_of(out, *wanted)
    out[0, 0, cy, cx] = 5.0  # a die said to be there: no cost, the box is masked
    also = train.loss_of(out, *wanted)
    assert float(also) == pytest.approx(float(masked), rel=1e-4)


def test_a_grey_network_is_widened_to_colour_and_reads_grey_as_before(train, tmp_path):
    torch.manual_seed(0)
    grey = train.build(norm=False)
    first = grey[0]
    grey[0] = torch.nn.Conv2d(1, first.out_channels, 3, 1, 1, bias=True)
    head = grey[-1]
    grey[-1] = torch.nn.Conv2d(head.in_channels, train.OUTPUTS - 1, 1)
    path = tmp_path / "grey.onnx"
    _write_grey(train.folded(grey), path)
    colour = train.build(norm=False)
    train.initialise(colour, path)
    picture = torch.rand(1, 1, 32, 48)
    want = grey.eval()(picture)
    got = colour.eval()(picture.repeat(1, 3, 1, 1))  # a grey picture: every channel alike
    faces = [i for i in range(train.OUTPUTS) if i != 1 + train.UNCLEAR]
    assert torch.allclose(got[0, faces], want[0], atol=1e-4)


def _write_grey(layers, path):
    """Only the weights, named as ``export`` names them: all ``initialise`` reads."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.helper.make_graph([], "grey", [], [], [
        t for i, (w, b, *_rest) in enumerate(layers)
        for t in (numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}"))])
    onnx.save(onnx.helper.make_model(graph), str(path))


def test_the_written_network_runs_in_onnxruntime_as_in_pytorch(train, tmp_path):
    torch.manual_seed(0)
    model = train.build()
    model.train()
    for _ in range(3):  # move batch norm's running figures off their defaults
        model(torch.randn(2, 3, 64, 96))
    path = tmp_path / "net.onnx"
    train.export(train.folded(model), path)
    image = np.random.default_rng(1).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    train.check_export(model, path, image)  # raises SystemExit if they differ
    broken = train.folded(model)
    weight, bias, stride, dilation, relu = broken[2]
    broken[2] = (weight * 1.5, bias, stride, dilation, relu)
    train.export(broken, path)
    with pytest.raises(SystemExit, match="differs"):
        train.check_export(model, path, image)


def test_a_separable_network_runs_in_onnxruntime_as_in_pytorch_for_a_fifth_of_the_arithmetic(train, tmp_path):
    from benchmarks.network_arithmetic import multiply_adds

    torch.manual_seed(0)
    plain, separable = train.build(), train.build(separable=True)
    separable.train()
    for _ in range(3):  # move batch norm's running figures off their defaults
        separable(torch.randn(2, 3, 64, 96))
    path, plain_path = tmp_path / "separable.onnx", tmp_path / "plain.onnx"
    train.export(train.folded(separable), path)
    train.export(train.folded(plain), plain_path)
    image = np.random.default_rng(1).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    train.check_export(separable, path, image)  # raises SystemExit if they differ
    # one answer per 4 pixels, as the plain network gives, so the box reads it alike
    assert separable(torch.zeros(1, 3, 64, 96)).shape == plain(torch.zeros(1, 3, 64, 96)).shape
    frame = (1, 3, 240, 320)
    assert multiply_adds(path, frame) * 5 < multiply_adds(plain_path, frame)
    # the check reads the depthwise layers too: one of them changed is caught (the last: an
    # untrained network's first layers barely move its answers)
    broken = train.folded(separable)
    last = max(i for i, layer in enumerate(broken) if layer[0].shape[1] == 1)  # one channel in each
    weight, bias, stride, dilation, relu = broken[last]
    broken[last] = (weight * 1.5, bias, stride, dilation, relu)
    train.export(broken, path)
    with pytest.raises(SystemExit, match="differs"):
        train.check_export(separable, path, image)


def two_renders(folder: Path) -> Path:
    """A renders folder of the two rendered fixtures, for a few steps of training."""
    renders = folder / "renders"
    for sub in ("images", "labels"):
        (renders / sub).mkdir(parents=True)
    fixture = ROLL.parent.parent / "rendered"
    for name in ("green", "pink"):
        (renders / "images" / f"{name}.jpg").write_bytes((fixture / f"{name}.jpg").read_bytes())
        (renders / "labels" / f"{name}.txt").write_bytes((fixture / f"{name}.txt").read_bytes())
    return renders


def test_a_wider_separable_network_runs_in_onnxruntime_as_in_pytorch_and_goes_on_as_written(train, tmp_path):
    from benchmarks.network_arithmetic import multiply_adds

    widths = (16, 32, 48, 96, 96, 96, 96)
    torch.manual_seed(3)
    wide = train.build(separable=True, widths=widths)
    wide.train()
    for _ in range(3):
        wide(torch.randn(2, 3, 64, 96))
    convs = [m for m in wide if isinstance(m, torch.nn.Conv2d)]
    # the first 3x3, then a 3x3 of each channel and a 1x1 to the layer's width, then the answers
    assert [c.out_channels for c in convs if c.groups == 1] == [*widths, train.OUTPUTS]
    path, narrow = tmp_path / "wide.onnx", tmp_path / "narrow.onnx"
    train.export(train.folded(wide), path)
    train.export(train.folded(train.build(separable=True)), narrow)
    image = np.random.default_rng(4).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    train.check_export(wide, path, image)
    frame = (1, 3, 240, 320)
    assert 2 * multiply_adds(narrow, frame) < multiply_adds(path, frame) < 300e6  # 254 M against 112 M
    again = train.build(norm=False, separable=True, widths=widths)
    train.initialise(again, path)
    train.check_export(again, path, image)
    with pytest.raises(SystemExit, match=r"wide.onnx: layer 2 is \(32, 16, 1, 1\).*--widths"):
        train.initialise(train.build(norm=False, separable=True), path)  # --init without its --widths


def test_a_wider_network_is_trained_with_its_widths_goes_on_without_them_and_teaches(train, tmp_path,
                                                                                      monkeypatch):
    from onnx import load, numpy_helper

    renders = two_renders(tmp_path)
    first, second = tmp_path / "first.onnx", tmp_path / "second.onnx"
    common = ["train_dice_net.py", "--renders", str(renders), "--separable", "--steps", "2", "--batch", "2",
              "--threads", "1"]
    monkeypatch.setattr(sys, "argv", [*common, "--widths", "16,32,48,96,96,96,96", "--out", str(first)])
    assert train.main() == 0
    monkeypatch.setattr(sys, "argv", [*common, "--init", str(first), "--out", str(second)])
    assert train.main() == 0  # its widths read from the file it goes on from

    def shapes(path):
        return [numpy_helper.to_array(t).shape for t in load(str(path)).graph.initializer
                if t.name.startswith("w")]

    assert shapes(first) == shapes(second)
    assert (32, 16, 1, 1) in shapes(first) and (96, 48, 1, 1) in shapes(first)
    assert train.widths_of(train.written_weights(first)) == (16, 32, 48, 96, 96, 96, 96)
    assert train.widths_of(train.written_weights(train.MODEL_PATH)) == tuple(c for _, c, _, _ in train.LAYERS)
    teacher = train.teacher_from(second)  # a wider network teaches as onnxruntime runs it
    image = np.random.default_rng(5).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    train.check_export(teacher, second, image)


def test_an_init_that_is_no_written_network_is_refused_in_one_line(train, tmp_path, monkeypatch):
    not_onnx, not_ours = tmp_path / "notes.onnx", tmp_path / "faces.onnx"
    not_onnx.write_text("not a network\n")
    not_ours.write_bytes(FACES_PATH.read_bytes())
    renders = two_renders(tmp_path)
    for path, said in ((tmp_path / "missing.onnx", "missing.onnx: no such network file (--init)"),
                       (not_onnx, "notes.onnx: not an ONNX file (--init)"),
                       (not_ours, "faces.onnx: not a dice network written by this script")):
        monkeypatch.setattr(sys, "argv", ["train_dice_net.py", "--renders", str(renders), "--init", str(path),
                                          "--steps", "1", "--out", str(tmp_path / "out.onnx")])
        with pytest.raises(SystemExit, match=re.escape(said)):
            train.main()


@pytest.mark.parametrize("text", ["16,32", "16,32,48,96,96,96,0", "16,32,48,96,96,96,x"])
def test_widths_that_are_not_one_positive_number_a_layer_are_refused_in_one_line(train, text):
    with pytest.raises(argparse.ArgumentTypeError, match="7 positive whole numbers"):
        train._widths(text)


def test_a_written_network_of_another_shape_is_refused_by_layer(train, tmp_path):
    plain = tmp_path / "plain.onnx"
    train.export(train.folded(train.build()), plain)
    with pytest.raises(SystemExit, match=r"plain.onnx: layer 1 is \(24, 16, 3, 3\).*--separable or --widths"):
        train.initialise(train.build(norm=False, separable=True), plain)
    separable = tmp_path / "separable.onnx"
    train.export(train.folded(train.build(separable=True)), separable)
    model = train.build(norm=False, separable=True)
    train.initialise(model, separable)  # the same shape: taken as written
    image = np.random.default_rng(2).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    train.check_export(model, separable, image)


def test_a_network_that_answers_as_its_teacher_costs_nothing_and_masked_cells_nothing(train):
    """``--teacher``: the distilled loss is zero where the student says what the teacher says,
    grows where it does not (its belief in a die, its faces, its width either way), and ignores
    the cells of a masked box, as the labels' loss does."""
    torch.manual_seed(3)
    taught = torch.randn(2, train.OUTPUTS, 12, 16) * 3
    counts = torch.ones(2, 12, 16)
    positives = torch.tensor(4.0)
    same = train.distilled_loss(taught.clone(), taught, counts, positives)
    assert float(same) == pytest.approx(0, abs=1e-5)
    taught[:, 0] = -8.0
    taught[0, 0, 5, 7] = 8.0  # the teacher sees one die, here, sure of a 3
    taught[0, 1:, 5, 7] = torch.tensor([0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    wide = train.OUTPUTS - 1
    for channel, value in ((0, -8.0), (3, 0.0), (2, 9.0), (wide, 5.0), (wide, -5.0)):
        other = taught.clone()
        other[0, channel, 5, 7] = value  # no die / not a 3 / a 2 as well / wider / narrower
        assert float(train.distilled_loss(other, taught, counts, positives)) > 0.1, (channel, value)
    elsewhere = taught.clone()
    elsewhere[1, :, 2, 3] = 10.0  # a die and every answer where the teacher sees none
    assert float(train.distilled_loss(elsewhere, taught, counts, positives)) > 0.1
    masked = counts.clone()
    masked[1, 2, 3] = 0.0  # ... in a masked box: no cost
    assert float(train.distilled_loss(elsewhere, taught, masked, positives)) == pytest.approx(0, abs=1e-5)


def test_the_distilled_loss_of_one_cell_is_as_worked_out_by_hand(train):
    """One cell: the Bernoulli divergence of the beliefs, plus, weighted by the teacher's belief,
    the divergence of the student's faces from the teacher's (the teacher's the target) and the
    distance of the widths. Below ``SEEN_BY_TEACHER`` the faces and width cost nothing."""
    def cell(presence, faces, width):
        return torch.tensor([presence, *faces, width], dtype=torch.float32).reshape(1, train.OUTPUTS, 1, 1)

    def by_hand(t, s):
        pt, ps = 1 / (1 + np.exp(-t[0])), 1 / (1 + np.exp(-s[0]))
        bernoulli = pt * np.log(pt / ps) + (1 - pt) * np.log((1 - pt) / (1 - ps))
        ft = np.exp(t[1:8]) / np.exp(t[1:8]).sum()
        fs = np.exp(s[1:8]) / np.exp(s[1:8]).sum()
        faces = float((ft * np.log(ft / fs)).sum())
        # one cell: its weight (the teacher's belief) divides out of the weighted mean
        return bernoulli + (faces + abs(s[8] - t[8]) if pt >= train.SEEN_BY_TEACHER else 0.0)

    counts, positives = torch.ones(1, 1, 1), torch.tensor(1.0)
    teacher = [1.0, 2.0, 0.5, -1.0, 0.0, 0.3, -0.5, -2.0, 1.2]
    student = [0.2, 0.1, 1.5, -0.3, 0.4, -1.0, 0.2, -1.0, 0.7]
    got = float(train.distilled_loss(cell(student[0], student[1:8], student[8]),
                                     cell(teacher[0], teacher[1:8], teacher[8]), counts, positives))
    assert got == pytest.approx(by_hand(np.array(teacher), np.array(student)), rel=1e-4)
    # the student's own belief in a die does not weigh its faces: only the teacher's does
    doubting = [-3.0, *student[1:]]
    assert float(train.distilled_loss(cell(doubting[0], doubting[1:8], doubting[8]),
                                      cell(teacher[0], teacher[1:8], teacher[8]), counts, positives)) \
        == pytest.approx(by_hand(np.array(teacher), np.array(doubting)), rel=1e-4)
    unseen = [-3.0, *teacher[1:]]  # the teacher believes in a die at 0.05 here
    got = float(train.distilled_loss(cell(unseen[0], student[1:8], student[8]),
                                     cell(unseen[0], unseen[1:8], unseen[8]), counts, positives))
    assert got == pytest.approx(0, abs=1e-5)


def test_a_teacher_is_read_as_written_plain_or_separable_and_never_trained(train, tmp_path):
    from bunco_pi.vision.net import MODEL_PATH, load_net, prepare

    picture = cv2.imread(str(ROLL))
    x = prepare(picture)[0]
    teacher = train.teacher_from(MODEL_PATH)
    assert not any(p.requires_grad for p in teacher.parameters()) and not teacher.training
    got = teacher(torch.from_numpy(x[None]))[0].detach().numpy()
    assert np.abs(got - load_net(MODEL_PATH).forward(x)).max() < 1e-4
    torch.manual_seed(5)
    separable = train.build(separable=True)
    separable.train()
    separable(torch.randn(2, 3, 64, 96))  # batch norm's running figures off their defaults
    path = tmp_path / "separable.onnx"
    train.export(train.folded(separable), path)
    got = train.teacher_from(path)(torch.from_numpy(x[None]))[0].detach().numpy()
    assert np.abs(got - load_net(path).forward(x)).max() < 1e-4
    with pytest.raises(SystemExit, match="missing.onnx: no such network file"):
        train.teacher_from(tmp_path / "missing.onnx")


def test_the_teachers_share_mixes_the_two_losses(train, monkeypatch, capsys):
    torch.manual_seed(6)
    out, taught = torch.randn(1, train.OUTPUTS, 48, 64), torch.randn(1, train.OUTPUTS, 48, 64)
    heat, cls, width, counts = (torch.from_numpy(a[None]) for a in
                                train.targets([(42.0, 30.0, 24.0, 4)], [], (192, 256)))
    labels = float(train.loss_of(out, heat, cls, width, counts))
    teacher = float(train.distilled_loss(out, taught, counts, torch.tensor(1.0)))  # one labelled die
    for share in (0.0, 0.7, 1.0):
        got = float(train.taught_loss(out, taught, share, heat, cls, width, counts))
        assert got == pytest.approx((1 - share) * labels + share * teacher, rel=1e-5)
    wrong = ((["--taught", "0.5"], "give --teacher too"),
             (["--teacher", "x.onnx", "--taught", "2"], "between 0 and 1"))
    for argv, said in wrong:
        monkeypatch.setattr(sys, "argv", ["train_dice_net.py", *argv])
        with pytest.raises(SystemExit):
            train.main()
        assert said in capsys.readouterr().err


def test_a_separable_network_learns_a_teachers_answers(train):
    """A few steps against the shipped network's answers on a picture of three dice bring a
    separable network's answers nearer them: the distance starts above zero and never goes below."""
    from bunco_pi.vision.net import MODEL_PATH, prepare

    torch.manual_seed(4)
    teacher = train.teacher_from(MODEL_PATH)
    picture = cv2.imread(str(ROLL))
    x = torch.from_numpy(prepare(picture)[0][None])
    taught = teacher(x)
    assert float(torch.sigmoid(taught[0, 0]).max()) > 0.5  # the teacher sees a die here
    counts = torch.ones(1, *taught.shape[2:])
    student = train.build(separable=True)
    optimiser = torch.optim.Adam(student.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        loss = train.distilled_loss(student(x), taught, counts, torch.tensor(3.0))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss))
    assert losses[0] > 0 and min(losses) > -1e-4
    assert losses[-1] < 0.5 * losses[0]


def test_a_network_is_trained_on_the_first_layers_of_a_written_one_kept_as_they_are(train, tmp_path,
                                                                                   monkeypatch, capsys):
    """``--branch-of``: the finder's first five convolutions are kept as they are, so the network
    written could share them with the finder; the rest start as the finder's and are trained."""
    from onnx import load, numpy_helper

    from bunco_pi.vision.net import FINDER_PATH, MODEL_PATH

    renders = two_renders(tmp_path)
    out = tmp_path / "first.onnx"
    monkeypatch.setattr(sys, "argv", [
        "train_dice_net.py", "--renders", str(renders), "--branch-of", str(FINDER_PATH), "--shared", "5",
        "--teacher", str(MODEL_PATH), "--steps", "3", "--batch", "2", "--threads", "1", "--out", str(out)])
    assert train.main() == 0  # it checks that onnxruntime runs the written file as PyTorch ran it

    def weights(path):
        return {t.name: numpy_helper.to_array(t) for t in load(str(path)).graph.initializer}

    written, finder = weights(out), weights(FINDER_PATH)
    assert written.keys() == finder.keys()
    for i in range(5):  # kept as they are
        assert np.array_equal(written[f"w{i}"], finder[f"w{i}"])
        assert np.array_equal(written[f"b{i}"], finder[f"b{i}"])
    for i in range(5, 8):  # trained from the finder's own
        assert not np.array_equal(written[f"w{i}"], finder[f"w{i}"])
        assert np.abs(written[f"w{i}"] - finder[f"w{i}"]).max() < 0.1
    separable = tmp_path / "separable.onnx"
    train.export(train.folded(train.build(separable=True)), separable)
    alone = "no --init, --separable or --widths"
    wrong = ((["--branch-of", str(FINDER_PATH), "--init", str(MODEL_PATH)], alone),
             (["--branch-of", str(FINDER_PATH), "--separable"], alone),
             (["--branch-of", str(FINDER_PATH), "--widths", "16,32,48,96,96,96,96"], alone),
             (["--shared", "4"], "give --branch-of too"),
             (["--renders", str(renders), "--branch-of", str(separable)], "a separable network"))
    for argv, said in wrong:
        monkeypatch.setattr(sys, "argv", ["train_dice_net.py", *argv])
        with pytest.raises(SystemExit):
            train.main()
        assert said in capsys.readouterr().err
    for shared in (0, 8):  # none kept, or the answers too
        with pytest.raises(SystemExit, match=f"--shared {shared}: the network has 8 convolutions"):
            train.after(train.teacher_from(FINDER_PATH), shared)
