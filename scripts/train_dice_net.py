"""Train the dice network (bunco_pi/vision/net.py) from labelled photos and renders; write ONNX.

    # PyTorch and onnx, for training only (the box runs onnxruntime), in a venv of their own
    python3.11 -m venv .venv-train && .venv-train/bin/pip install -e '.[train]'
    .venv-train/bin/python scripts/train_dice_net.py \
        ../shared/datasets/dice-photos ../shared/datasets/dice-photos-mixed \
        --renders renders/train --validate --init bunco_pi/vision/models/dice_net.onnx

Of the real photo folders only the *training* photos are used (``split_of`` in
bunco_pi/vision/dataset.py); with ``--validate``, not the fifth of them that ``set_aside`` names
either, which is left for choosing the fusion's thresholds (the held-out photos are for
measuring alone). Boxes in a folder's ``labels_unclear/`` are masked: neither a face nor "no die".
Every render in ``--renders`` is used (its held-out renders are another folder, from other
seeds); a render's unclear dice (cocked, cut, under a hand) are taught as the class
``unclear``. Each batch draws pictures at random, each view new: turned to any angle, scaled,
shifted, mirrored, its colours shifted (white balance, hue, the channels swapped, so the
photos' dice take other colours), made brighter or darker, blurred, noisier and more
JPEG-damaged; with a chance of ``--synthetic``, a picture is a drawn tray instead. Training is
seeded. ``--init`` starts from a network already trained (a grey one is widened to colour).
``--teacher`` names a written network whose answers, at every cell of every view, the new one
learns as well as the labels (distillation): a smaller network (``--separable``) learns what the
shipped one says of every picture, not only of the labelled dice, and says it as surely.
``--branch-of`` keeps a written network's first ``--shared`` convolutions as they are and
trains the rest from its own: a network that could share those layers' work with it (the
first look on the finder's, docs/dice-camera-experiments.md).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.errors import UserError  # noqa: E402
from bunco_pi.vision.dataset import list_photos, read_labels, read_unclear, set_aside  # noqa: E402
from bunco_pi.vision.faces import LAYOUTS  # noqa: E402
from bunco_pi.vision.net import CHANNELS, INPUT_WIDTH, MODEL_PATH, OUTPUTS, STRIDE, UNCLEAR, normalise  # noqa: E402
from bunco_pi.vision.resample import warp_averaged  # noqa: E402

# (in, out, stride, dilation): about 0.6 G multiply-adds for a 320x240 frame
LAYERS = ((CHANNELS, 16, 1, 1), (16, 24, 2, 1), (24, 32, 1, 1), (32, 48, 2, 1),
          (48, 48, 1, 1), (48, 48, 1, 2), (48, 48, 1, 4))
CROP = (256, 192)  # training crops (width, height) of the 320-wide frame
# --branch-of: of 4 to 7 of the finder's convolutions kept, what read best (docs/dice-camera-experiments.md)
SHARED = 5


def build(norm: bool = True, separable: bool = False, widths: Sequence[int] | None = None) -> nn.Sequential:
    """With batch norm to train from scratch; without (plain biases) to go on from --init.

    ``separable``: each 3x3 convolution after the first made of two, a 3x3 of each channel
    alone and a 1x1 across the channels (depthwise-separable, as MobileNet's): the same layers,
    strides and dilations, about a fifth of the multiply-adds (112 M for a 320x240 frame). A
    settled frame's networks cost more than a Pi 4 has for them (docs/dice-camera.md, "Speed").

    ``widths``: each layer's channels out, in place of ``LAYERS``' (a separable network's 1x1
    layers are most of its arithmetic, and as wide as the plain one's they may lack room).
    """
    plan = LAYERS if widths is None else with_widths(widths)
    layers = convolution_layers(plan, norm, separable)
    head = nn.Conv2d(plan[-1][1], OUTPUTS, 1)
    nn.init.constant_(head.bias[:1], -2.2)  # start out saying "no die" everywhere (p ~ 0.1)
    layers.append(head)
    return nn.Sequential(*layers)


def convolution_layers(plan: Sequence[tuple[int, int, int, int]], norm: bool = True,
                       separable: bool = False) -> list[nn.Module]:
    """The 3x3 convolutions of ``plan`` (channels in and out, stride, dilation), each followed
    by batch norm (``norm``) and a ReLU; ``separable``: each after the first made of a 3x3 of
    each channel alone and a 1x1 across the channels. The first look and the face reader
    (``train_die_faces.build``) are both built by it."""
    layers: list[nn.Module] = []

    def conv(cin: int, cout: int, kernel: int, stride: int, dilation: int, groups: int) -> None:
        pad = dilation * (kernel - 1) // 2
        layers.append(nn.Conv2d(cin, cout, kernel, stride, pad, dilation, groups=groups, bias=not norm))
        if norm:
            layers.append(nn.BatchNorm2d(cout))
        layers.append(nn.ReLU(inplace=True))

    for k, (cin, cout, stride, dilation) in enumerate(plan):
        if separable and k > 0:
            conv(cin, cin, 3, stride, dilation, groups=cin)
            conv(cin, cout, 1, 1, 1, groups=1)
        else:
            conv(cin, cout, 3, stride, dilation, groups=1)
    return layers


def with_widths(widths: Sequence[int]) -> tuple[tuple[int, int, int, int], ...]:
    """``LAYERS`` with each layer's channels out set to ``widths`` (one for each layer)."""
    if len(widths) != len(LAYERS) or min(widths) < 1:
        raise ValueError(f"widths: {len(LAYERS)} positive numbers, one for each layer, got {list(widths)}")
    ins = (CHANNELS, *widths[:-1])
    return tuple((cin, cout, stride, dilation)
                 for cin, cout, (_, _, stride, dilation) in zip(ins, widths, LAYERS, strict=True))


GREY = (0.114, 0.587, 0.299)  # BGR weights of OpenCV's grey: how a grey network sees colour


def written_weights(path: Path, option: str = "--init") -> dict[str, np.ndarray]:
    """A network this script wrote, by its initialisers' names (``option``: the one that named it,
    for its one-line errors)."""
    import onnx
    from google.protobuf.message import DecodeError
    from onnx import numpy_helper

    if not path.is_file():
        raise SystemExit(f"{path}: no such network file ({option})")
    try:
        graph = onnx.load(str(path)).graph
    except DecodeError:
        raise SystemExit(f"{path}: not an ONNX file ({option})") from None
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    answers = weights.get(f"w{layers_of(weights) - 1}")
    if "w1" not in weights or answers is None or answers.shape[0] not in (OUTPUTS, OUTPUTS - 1):
        raise SystemExit(f"{path}: not a dice network written by this script ({option})")
    return weights


def layers_of(weights: dict[str, np.ndarray]) -> int:
    """How many convolutions a written network has (``w0``, ``w1``, ...)."""
    return sum(name.startswith("w") for name in weights)


def initialise(model: nn.Sequential, path: Path, weights: dict[str, np.ndarray] | None = None) -> None:
    """Copy a written network's (folded) weights into a model built with ``build(norm=False)``
    (``weights``: the file's, when they have been read already)."""
    weights = written_weights(path) if weights is None else weights
    convs = [m for m in model if isinstance(m, nn.Conv2d)]
    for i, conv in enumerate(convs):
        w, b = weights[f"w{i}"], weights[f"b{i}"]
        if i == 0 and w.shape[1] == 1 and conv.in_channels == 3:
            w = np.concatenate([w * g for g in GREY], axis=1)
        if i == len(convs) - 1 and w.shape[0] == OUTPUTS - 1:  # no "unclear" answer yet
            w = np.concatenate([w[: 1 + UNCLEAR], np.zeros_like(w[:1]), w[1 + UNCLEAR :]])
            b = np.concatenate([b[: 1 + UNCLEAR], [-2.0], b[1 + UNCLEAR :]]).astype(np.float32)
        if tuple(w.shape) != tuple(conv.weight.shape):
            raise SystemExit(f"{path}: layer {i} is {tuple(w.shape)}, this network's is"
                             f" {tuple(conv.weight.shape)} (--separable or --widths as it was written?)")
        conv.weight.data = torch.from_numpy(np.array(w, np.float32))
        conv.bias.data = torch.from_numpy(np.array(b, np.float32))


def load(roots: list[Path], renders: list[Path], validate: bool) -> tuple[list, list, list]:
    """(real training photos, renders, set-aside photos); each (name, BGR image, dice, masked).

    A die is (x, y, size, class) with class 0..5 a face, UNCLEAR a die that cannot be read.
    """
    real, drawn, val = [], [], []
    for root in roots:
        for photo in list_photos(root, "train"):
            sample = _sample(photo, teach_unclear=False)
            (val if validate and set_aside(photo.name) else real).append(sample)
    for root in renders:
        with contextlib.suppress(UserError):  # none rendered yet (--rescan looks again)
            drawn += [_sample(photo, teach_unclear=True) for photo in list_photos(root, "all")]
    return real, drawn, val


def _sample(photo, teach_unclear: bool):
    image = cv2.imread(str(photo.image_path), cv2.IMREAD_COLOR)
    h, w = image.shape[:2]
    dice = [(d.center[0], d.center[1], max(d.size), d.face - 1) for d in read_labels(photo.label_path, w, h)]
    unclear = read_unclear(photo, w, h)
    if teach_unclear:
        return photo.name, image, dice + [(x, y, max(bw, bh), UNCLEAR) for x, y, bw, bh in unclear], []
    return photo.name, image, dice, [(x, y, max(bw, bh)) for x, y, bw, bh in unclear]


def augment(image: np.ndarray, dice: list, masked: list, rng: np.random.Generator, real: bool,
            crop: tuple[int, int] = CROP):
    """A new view of a picture at the network's scale, and its dice (and masked boxes) with it."""
    h, w = image.shape[:2]
    base = INPUT_WIDTH / w
    scale = base * float(np.exp(rng.uniform(np.log(0.65), np.log(1.45))))
    angle = float(rng.uniform(0, 360))
    cw, ch = crop
    # keep a die in view: centre the crop near a random die, or anywhere
    if dice and rng.random() < 0.8:
        fx, fy = dice[rng.integers(len(dice))][:2]
        fx += rng.uniform(-60, 60) / base
        fy += rng.uniform(-60, 60) / base
    else:
        fx, fy = rng.uniform(0, w), rng.uniform(0, h)
    matrix = cv2.getRotationMatrix2D((fx, fy), angle, scale)
    matrix[0, 2] += cw / 2 - fx
    matrix[1, 2] += ch / 2 - fy
    if rng.random() < 0.5:
        matrix[0] = -matrix[0]
        matrix[0, 2] += cw
    view = warp_averaged(image, matrix, (cw, ch))  # as the network's map of a frame is shrunk
    moved = [(*(matrix @ np.array([x, y, 1.0])), size * scale, cls) for x, y, size, cls in dice]
    hidden = [(*(matrix @ np.array([x, y, 1.0])), size * scale) for x, y, size in masked]
    if real:
        view = _recolour(view, rng)
    return _photometric(view, rng), moved, hidden


def _recolour(view: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The photos' dice in other colours: channels swapped, hues turned."""
    if rng.random() < 0.4:
        view = view[..., rng.permutation(3)]
    if rng.random() < 0.4:
        hsv = cv2.cvtColor(np.ascontiguousarray(view), cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + int(rng.integers(0, 180))) % 180
        view = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    return np.ascontiguousarray(view)


def _photometric(view: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    x = view.astype(np.float32)
    if rng.random() < 0.5:  # a gradient of light across the tray
        gx, gy = rng.uniform(-0.4, 0.4, 2)
        yy, xx = np.mgrid[0 : x.shape[0], 0 : x.shape[1]].astype(np.float32)
        x *= (1 + gx * (xx / x.shape[1] - 0.5) + gy * (yy / x.shape[0] - 0.5))[..., None]
    if rng.random() < 0.5:  # white balance
        x *= rng.uniform(0.8, 1.2, 3).astype(np.float32)
    gamma = float(np.exp(rng.uniform(-0.5, 0.5)))
    x = 255 * (np.clip(x, 0, 255) / 255) ** gamma
    x = x * rng.uniform(0.5, 1.3) + rng.uniform(-40, 30)
    roll = rng.random()
    if roll < 0.2:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.4))
    elif roll < 0.3:
        length = int(rng.integers(3, 8))
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2] = 1.0 / length
        rot = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(kernel, rot, (length, length))
        x = cv2.filter2D(x, -1, kernel / max(kernel.sum(), 1e-6))
    if rng.random() < 0.4:
        x = x + rng.normal(0, rng.uniform(2, 8), x.shape)
    x = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, data = cv2.imencode(".jpg", x, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 80))])
        x = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return x


def synthesise(rng: np.random.Generator, crop: tuple[int, int] = CROP) -> tuple[np.ndarray, list]:
    """A drawn tray (extra training data only, never a measure): trays unlike the photos' desk.

    The photos show one light desk; drawn trays are dark felt, cork, grey or coloured plastic
    (in grey), with dice of other sizes, pip sizes and spacings, some showing a side face.
    Drawn here, not with the tests' ``drawn_dice.py``: the network is tested on drawn trays it
    was not trained on.
    """
    cw, ch = crop
    level = float(rng.uniform(15, 150))
    texture = cv2.GaussianBlur(rng.normal(0, 1, (ch, cw)).astype(np.float32), (0, 0), rng.uniform(0.7, 3))
    image = level + texture * rng.uniform(2, 14)
    dice: list = []
    for _ in range(int(rng.integers(1, 6))):
        size = float(rng.uniform(16, 46))
        for _attempt in range(20):
            x, y = rng.uniform(size, cw - size), rng.uniform(size, ch - size)
            if all(np.hypot(x - a, y - b) > 0.8 * (size + s) for a, b, s, _ in dice):
                break
        else:
            continue
        face = int(rng.integers(1, 7))
        angle = float(rng.uniform(0, np.pi / 2))
        c, s_ = np.cos(angle), np.sin(angle)
        half = size / 2
        square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        corners = square @ np.array([[c, s_], [-s_, c]])
        white = float(rng.uniform(max(level + 40, 150), 250))
        if rng.random() < 0.5:  # a side face, darker, towards the camera
            shift = rng.uniform(0.1, 0.35) * size * np.array([rng.uniform(-0.5, 0.5), 1.0])
            side = np.concatenate([corners, corners + shift]) + [x, y]
            cv2.fillConvexPoly(image, cv2.convexHull(side.astype(np.float32)).round().astype(np.int32),
                               white * rng.uniform(0.55, 0.85), cv2.LINE_AA)
        cv2.fillConvexPoly(image, (corners + [x, y]).round().astype(np.int32), white, cv2.LINE_AA)
        pip = rng.uniform(0.07, 0.11) * size
        spread = rng.uniform(0.24, 0.3) * size
        ink = float(rng.uniform(5, min(90, white - 80)))
        for u, v in LAYOUTS[face]:
            px, py = x + spread * (u * c - v * s_), y + spread * (u * s_ + v * c)
            cv2.circle(image, (int(round(px * 4)), int(round(py * 4))), int(round(pip * 4)), ink, -1,
                       cv2.LINE_AA, shift=2)
        dice.append((x, y, size, face))
    view = np.clip(image, 0, 255).astype(np.uint8)
    tint = rng.uniform(0.7, 1.0, 3)  # drawn in grey, seen in a coloured light
    view = np.clip(view[..., None] * tint, 0, 255).astype(np.uint8)
    return _photometric(view, rng), [(x, y, size, face - 1) for x, y, size, face in dice]


def targets(dice: list, hidden: list, shape: tuple[int, int]):
    """Heat map (gaussian per die), class and log width at the centre cells, and the cells
    that count for the heat map (not those of a masked, unclear box)."""
    oh, ow = shape[0] // STRIDE, shape[1] // STRIDE
    heat = np.zeros((oh, ow), np.float32)
    cls = np.full((oh, ow), -1, np.int64)
    width = np.zeros((oh, ow), np.float32)
    counts = np.ones((oh, ow), np.float32)
    yy, xx = np.mgrid[0:oh, 0:ow].astype(np.float32)
    for x, y, size, c in dice:
        cx, cy = x / STRIDE - 0.5, y / STRIDE - 0.5
        if not (-1 <= cx <= ow and -1 <= cy <= oh):
            continue
        sigma = max(0.7, size / STRIDE / 5)
        heat = np.maximum(heat, np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2)))
        ix, iy = int(round(cx)), int(round(cy))
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if 0 <= ix + dx < ow and 0 <= iy + dy < oh:
                    cls[iy + dy, ix + dx] = c
                    width[iy + dy, ix + dx] = np.log(max(size, 2.0) / STRIDE)
        if 0 <= ix < ow and 0 <= iy < oh:
            heat[iy, ix] = 1.0
    for x, y, size in hidden:
        reach = 0.75 * size / STRIDE + 1
        counts[(xx - x / STRIDE + 0.5) ** 2 + (yy - y / STRIDE + 0.5) ** 2 <= reach**2] = 0.0
    return heat, cls, width, counts


def loss_of(out: torch.Tensor, heat, cls, width, counts) -> torch.Tensor:
    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float() * counts
    neg = (1 - heat.eq(1).float()) * counts
    focal = -(pos * (1 - p) ** 2 * torch.log(p) + neg * (1 - heat) ** 4 * p**2 * torch.log(1 - p))
    n = pos.sum().clamp(min=1)
    loss = focal.sum() / n
    m = cls >= 0
    if m.any():
        logits = out[:, 1 : 2 + UNCLEAR].permute(0, 2, 3, 1)[m]
        loss = loss + nn.functional.cross_entropy(logits, cls[m])
        loss = loss + nn.functional.l1_loss(out[:, -1][m], width[m])
    return loss


SEEN_BY_TEACHER = 0.1  # the least belief at which the fusion takes a network's answer at all (look_again)
TAUGHT = 0.7  # the teacher's share of the loss, unless --taught says otherwise


def teacher_from(path: Path, option: str = "--teacher") -> nn.Sequential:
    """A written network to learn from, plain or separable as it was written, never trained
    (``option``: the one that named it, for its errors)."""
    weights = written_weights(path, option)
    separable = weights["w1"].shape[1] == 1  # a depthwise layer: one channel in
    teacher = build(norm=False, separable=separable, widths=widths_of(weights))
    initialise(teacher, path, weights)
    return teacher.eval().requires_grad_(False)


def widths_of(weights: dict[str, np.ndarray]) -> tuple[int, ...]:
    """The channels out of a written network's convolutions but the answers' and the depthwise
    ones' (one channel in each, after the first)."""
    shapes = [weights[f"w{i}"].shape for i in range(layers_of(weights))]
    return tuple(shape[0] for i, shape in enumerate(shapes[:-1]) if i == 0 or shape[1] > 1)


def after(model: nn.Sequential, shared: int) -> nn.Sequential:
    """The layers of a written network (``build(norm=False)``) after its ``shared``-th
    convolution's ReLU: the ones ``--branch-of`` trains (the same modules, not copies)."""
    convs = [i for i, m in enumerate(model) if isinstance(m, nn.Conv2d)]
    if not 0 < shared < len(convs):
        raise SystemExit(f"--shared {shared}: the network has {len(convs)} convolutions,"
                         " the last its answers")
    return nn.Sequential(*list(model)[convs[shared - 1] + 2:])  # past the convolution and its ReLU


def taught_loss(out: torch.Tensor, taught: torch.Tensor, share: float, heat: torch.Tensor, cls: torch.Tensor,
                width: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """The labels' loss and the teacher's, the teacher's weighing ``share`` of the whole."""
    positives = (heat.eq(1).float() * counts).sum()
    return ((1 - share) * loss_of(out, heat, cls, width, counts)
            + share * distilled_loss(out, taught, counts, positives))


def distilled_loss(out: torch.Tensor, taught: torch.Tensor, counts: torch.Tensor, positives: torch.Tensor
                   ) -> torch.Tensor:
    """How far the network's answers are from the teacher's (``taught``), cell by cell: its belief
    that a die is centred there (binary cross-entropy to the teacher's belief, over the cells that
    count, per labelled die as the labels' loss is), and where the teacher sees a die (at least
    ``SEEN_BY_TEACHER``, weighted by its belief), its faces and "cannot be read" (the teacher's
    distribution, Kullback-Leibler) and its width. The fusion's thresholds were chosen on the
    teacher's beliefs: the new network must be as sure where the teacher is sure, and no surer
    where it doubts."""
    belief = torch.sigmoid(taught[:, 0])
    # less the teacher's own cross-entropy: zero where the two agree (the same gradient)
    presence = (nn.functional.binary_cross_entropy_with_logits(out[:, 0], belief, reduction="none")
                - nn.functional.binary_cross_entropy_with_logits(taught[:, 0], belief, reduction="none"))
    loss = (presence * counts).sum() / positives.clamp(min=1)
    # Faces and widths only where the teacher sees something: its answers elsewhere were never
    # taught (the labels teach them round a die's centre), and the thousands of background
    # cells, each believed at a few thousandths, would outweigh the dice ten to one.
    weight = belief * (belief >= SEEN_BY_TEACHER) * counts
    if weight.sum() > 0:
        faces = nn.functional.kl_div(torch.log_softmax(out[:, 1 : 2 + UNCLEAR], 1),
                                     torch.log_softmax(taught[:, 1 : 2 + UNCLEAR], 1),
                                     reduction="none", log_target=True).sum(1)
        widths = (out[:, -1] - taught[:, -1]).abs()
        loss = loss + ((faces + widths) * weight).sum() / weight.sum()
    return loss


def batch(real: list, drawn: list, rng: np.random.Generator, size: int, synthetic: float, rendered: float,
          crop: tuple[int, int] = CROP):
    images, heats, classes, widths, counts = [], [], [], [], []
    for _ in range(size):
        roll = rng.random()
        if roll < synthetic:
            view, moved = synthesise(rng, crop)
            hidden: list = []
        else:
            source = drawn if drawn and (roll < synthetic + rendered or not real) else real
            _, image, dice, masked = source[rng.integers(len(source))]
            view, moved, hidden = augment(image, dice, masked, rng, real=source is real, crop=crop)
        heat, cls, width, count = targets(moved, hidden, view.shape[:2])
        images.append(normalise(view))
        heats.append(heat)
        classes.append(cls)
        widths.append(width)
        counts.append(count)
    return tuple(torch.from_numpy(np.stack(a)) for a in (images, heats, classes, widths, counts))


def folded(model: nn.Sequential) -> list[tuple[np.ndarray, np.ndarray, int, int, bool]]:
    """Each convolution with any batch norm after it folded in: (weight, bias, stride, dilation, relu)."""
    model.eval()
    modules = list(model)
    layers = []
    for i, conv in enumerate(modules):
        if not isinstance(conv, nn.Conv2d):
            continue
        weight = conv.weight.detach().double()
        bias = conv.bias.detach().double() if conv.bias is not None else torch.zeros(weight.shape[0]).double()
        after = modules[i + 1 : i + 3]
        if after and isinstance(after[0], nn.BatchNorm2d):
            bn = after[0]
            factor = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
            weight = weight * factor[:, None, None, None]
            bias = (bias - bn.running_mean.double()) * factor + bn.bias.detach().double()
        relu = any(isinstance(m, nn.ReLU) for m in after)
        layers.append((weight.float().numpy(), bias.float().numpy(), conv.stride[0], conv.dilation[0], relu))
    return layers


def convolutions(layers: list, name: str, channels: int) -> tuple[list, list, str]:
    """The folded layers (``folded``) as ONNX Conv and Relu nodes on the input ``name`` of
    ``channels`` channels: (nodes, their weights ``w0``, ``b0``, ..., the last output's name).
    A depthwise layer's group is worked out from the channels coming in."""
    from onnx import helper, numpy_helper

    nodes, weights = [], []
    for i, (weight, bias, stride, dilation, relu) in enumerate(layers):
        weights += [numpy_helper.from_array(weight, f"w{i}"), numpy_helper.from_array(bias, f"b{i}")]
        pad = dilation * (weight.shape[-1] - 1) // 2
        out = f"conv{i}"
        nodes.append(helper.make_node(
            "Conv", [name, f"w{i}", f"b{i}"], [out], kernel_shape=list(weight.shape[2:]),
            strides=[stride, stride], dilations=[dilation, dilation], pads=[pad] * 4,
            group=channels // weight.shape[1],  # a convolution of each channel alone: one group each
        ))
        channels = weight.shape[0]
        name = out
        if relu:
            nodes.append(helper.make_node("Relu", [name], [f"relu{i}"]))
            name = f"relu{i}"
    return nodes, weights, name


def export(layers: list, path: Path) -> None:
    """Write the folded layers as an ONNX graph of plain convolutions (onnxruntime runs it)."""
    import onnx
    from onnx import TensorProto, helper

    nodes, weights, name = convolutions(layers, "image", CHANNELS)
    nodes.append(helper.make_node("Identity", [name], ["outputs"]))
    graph = helper.make_graph(
        nodes, "dice_net",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, CHANNELS, "height", "width"])],
        [helper.make_tensor_value_info("outputs", TensorProto.FLOAT, [1, OUTPUTS, "h4", "w4"])],
        weights,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx_model.ir_version = 8
    onnx.checker.check_model(onnx_model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(onnx_model, str(path))


@torch.no_grad()
def check_export(model: nn.Sequential, path: Path, image: np.ndarray) -> None:
    """onnxruntime must run the written network as the trained one runs."""
    from bunco_pi.vision.net import load_net, prepare

    x, _ = prepare(image)
    want = model.eval()(torch.from_numpy(x[None]))[0].numpy()
    got = load_net(path).forward(x)
    error = float(np.abs(want - got).max())
    if error > 1e-3:
        raise SystemExit(f"{path}: the exported network differs from the trained one by {error}")


def _widths(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(part) for part in text.split(","))
        with_widths(widths)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {len(LAYERS)} positive whole numbers, comma-separated, one for each layer") from None
    return widths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", type=Path, nargs="*",
                        help="real photo folders (training split); one named twice is drawn twice as often")
    parser.add_argument("--renders", type=Path, action="append", default=[], help="a folder of renders (all)")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--synthetic", type=float, default=0.1, help="share of drawn trays in a batch")
    parser.add_argument("--rendered", type=float, default=0.5, help="share of renders in a batch")
    parser.add_argument("--validate", action="store_true", help="keep a fifth of the training photos aside")
    parser.add_argument("--init", type=Path, help="go on from this written network")
    parser.add_argument("--separable", action="store_true",
                        help="depthwise-separable: a fifth of the arithmetic (--init: one written so)")
    parser.add_argument("--widths", type=_widths, metavar="W,W,...",
                        help=f"each layer's channels out ({','.join(str(c) for _, c, _, _ in LAYERS)}; "
                             "--init: as it was written, unless given)")
    parser.add_argument("--teacher", type=Path,
                        help="a written network whose answers are learned as well as the labels")
    parser.add_argument("--taught", type=float,
                        help=f"with --teacher: the teacher's answers' share of the loss ({TAUGHT})")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--crop", type=int, nargs=2, default=CROP, metavar=("W", "H"), help="training crop")
    parser.add_argument("--rescan", type=int, default=0,
                        help="look for new renders every this many steps (renders still being made)")
    parser.add_argument("--branch-of", type=Path, metavar="NETWORK",
                        help="keep this written network's first --shared convolutions as they are (never "
                             "trained) and train the rest, starting as its own: a network that could share "
                             "them with NETWORK")
    parser.add_argument("--shared", type=int,
                        help=f"with --branch-of: how many of its convolutions are kept ({SHARED})")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--tuned-on", type=Path, help="write what it learned from (models/tuned_on.json)")
    args = parser.parse_args()
    if args.taught is not None and args.teacher is None:
        parser.error("--taught is the teacher's share: give --teacher too")
    if args.branch_of is not None and (args.init is not None or args.separable or args.widths):
        parser.error("--branch-of starts from that network's own layers: no --init, --separable or --widths")
    if args.shared is not None and args.branch_of is None:
        parser.error("--shared is how much of --branch-of's network is kept: give --branch-of too")
    taught_share = TAUGHT if args.taught is None else args.taught
    if not 0 <= taught_share <= 1:
        parser.error(f"--taught must be between 0 and 1, got {taught_share}")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    real, drawn, val = load(args.photos, args.renders, args.validate)
    print(f"training on {len(real)} photos and {len(drawn)} renders"
          + (f", {len(val)} photos set aside" if val else ""), flush=True)
    if not real and not drawn:
        raise SystemExit("nothing to train on: give photo folders and/or --renders")
    if args.branch_of is None:
        written = None if args.init is None else written_weights(args.init)
        widths = args.widths if args.widths or written is None else widths_of(written)
        model = build(norm=written is None, separable=args.separable, widths=widths)
        if written is not None:
            initialise(model, args.init, written)
    else:
        model = teacher_from(args.branch_of, "--branch-of")  # every layer kept, so far
        if any(m.groups > 1 for m in model if isinstance(m, nn.Conv2d)):
            # its layers are two convolutions each, and --shared counts convolutions
            parser.error(f"--branch-of {args.branch_of}: a separable network; give a plain one")
        after(model, SHARED if args.shared is None else args.shared).requires_grad_(True)
    teacher = None if args.teacher is None else teacher_from(args.teacher)
    trained = [p for p in model.parameters() if p.requires_grad]  # with --branch-of, the rest alone
    optimiser = torch.optim.AdamW(trained, lr=args.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=args.lr, total_steps=args.steps,
                                                   pct_start=0.1)
    start = time.monotonic()
    total = 0.0
    for step in range(1, args.steps + 1):
        if args.rescan and step % args.rescan == 0:
            known = {name for name, *_ in drawn}
            for root in args.renders:
                with contextlib.suppress(UserError):  # no render finished yet
                    drawn += [_sample(p, True) for p in list_photos(root, "all") if p.name not in known]
        model.train()
        images, heat, cls, width, counts = batch(real, drawn, rng, args.batch, args.synthetic, args.rendered,
                                                   tuple(args.crop))
        out = model(images)
        if teacher is None:
            loss = loss_of(out, heat, cls, width, counts)
        else:
            with torch.no_grad():
                taught = teacher(images)
            loss = taught_loss(out, taught, taught_share, heat, cls, width, counts)
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimiser.step()
        schedule.step()
        total += loss.item()
        if step % 50 == 0:
            print(f"step {step:5d}  loss {total / 50:.3f}  {time.monotonic() - start:.0f} s", flush=True)
            total = 0.0
        if step % 100 == 0 or step == args.steps:  # a model to try while training goes on
            export(folded(model), args.out)
    sample = (real or drawn)[0][1]
    check_export(model, args.out, sample)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    if args.tuned_on:
        record(args, len(drawn))
    return 0


def record(args: argparse.Namespace, renders: int) -> None:
    """What the network learned from: every training-split photo by content (``dice eval``
    then reads only the held-out photos of their folders), and the renders' recipe."""
    hashes = set()
    folders = {}
    for root in args.photos:
        photos = list_photos(root, "train")
        folders[root.name] = len(photos)
        hashes |= {hashlib.sha256(p.image_path.read_bytes()).hexdigest()[:16] for p in photos}
    args.tuned_on.write_text(json.dumps({
        "about": "SHA-256 (first 16 hex digits) of each training-split photo (the set-aside fifth "
                 "included: the fusion's thresholds were chosen on it) of the real photo folders "
                 "the readers were tuned and the dice network trained on. `bunco-pi dice eval` reads "
                 "only the held-out photos of a folder holding any of these.",
        "photos": folders,
        "renders": {"count": renders, "made_by": "scripts/render_dice.py (default seed, kinds and size)",
                    "held_out": "pictures numbered 800000 to 979999 are never trained on"},
        "sha256": sorted(hashes),
    }, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
