"""Train the dice network (bunco_pi/vision/net.py) from labelled photos; write it as ONNX.

    pip install -e '.[train]'          # PyTorch and onnx, for training only: the box runs OpenCV
    python3 scripts/train_dice_net.py ../shared/datasets/dice-photos --validate [--epochs 120]

Only the *training* photos are used (``split_of`` in bunco_pi/vision/dataset.py); with
``--validate``, not the fifth of them that ``set_aside`` names either, which is left for
``bunco-pi dice eval --split setaside`` (the held-out photos are for measuring alone). Each
batch draws photos at random, each view new: turned to any angle, scaled, shifted, mirrored,
made brighter or darker, blurred (as a die still moving or a camera out of focus), noisier and
more JPEG-damaged than the originals; with a chance of ``--synthetic``, a picture is a drawn
tray instead, so that the network learns dice, not one desk in one light. Training is seeded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.vision.dataset import list_photos, read_labels, set_aside  # noqa: E402
from bunco_pi.vision.faces import LAYOUTS  # noqa: E402
from bunco_pi.vision.net import INPUT_WIDTH, MODEL_PATH, STRIDE, normalise  # noqa: E402

# (in, out, stride, dilation): about 0.5 G multiply-adds for a 320x240 frame
LAYERS = ((1, 16, 1, 1), (16, 24, 2, 1), (24, 32, 1, 1), (32, 48, 2, 1),
          (48, 48, 1, 1), (48, 48, 1, 2), (48, 48, 1, 4))
OUTPUTS = 8  # presence, six faces, log width
CROP = (256, 192)  # training crops (width, height) of the 320-wide frame


def build() -> nn.Sequential:
    layers: list[nn.Module] = []
    for cin, cout, stride, dilation in LAYERS:
        layers += [nn.Conv2d(cin, cout, 3, stride, dilation, dilation, bias=False),
                   nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    head = nn.Conv2d(LAYERS[-1][1], OUTPUTS, 1)
    nn.init.constant_(head.bias[:1], -2.2)  # start out saying "no die" everywhere (p ~ 0.1)
    layers.append(head)
    return nn.Sequential(*layers)


def load(root: Path, validate: bool) -> tuple[list, list]:
    train, val = [], []
    for photo in list_photos(root, "train"):
        image = cv2.imread(str(photo.image_path), cv2.IMREAD_GRAYSCALE)
        h, w = image.shape
        dice = [(d.center[0], d.center[1], max(d.size), d.face) for d in read_labels(photo.label_path, w, h)]
        (val if validate and set_aside(photo.name) else train).append((photo.name, image, dice))
    return train, val


def augment(image: np.ndarray, dice: list, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """A new view of a photo at the network's scale, and its dice moved with it."""
    h, w = image.shape
    base = INPUT_WIDTH / w
    scale = base * float(np.exp(rng.uniform(np.log(0.65), np.log(1.45))))
    angle = float(rng.uniform(0, 360))
    cw, ch = CROP
    # keep a die in view: centre the crop near a random die, or anywhere
    if dice and rng.random() < 0.8:
        fx, fy = dice[rng.integers(len(dice))][:2]
        fx += rng.uniform(-60, 60)
        fy += rng.uniform(-60, 60)
    else:
        fx, fy = rng.uniform(0, w), rng.uniform(0, h)
    matrix = cv2.getRotationMatrix2D((fx, fy), angle, scale)
    matrix[0, 2] += cw / 2 - fx
    matrix[1, 2] += ch / 2 - fy
    if rng.random() < 0.5:
        matrix[0] = -matrix[0]
        matrix[0, 2] += cw
    border = cv2.BORDER_REFLECT101
    view = cv2.warpAffine(image, matrix, (cw, ch), flags=cv2.INTER_AREA, borderMode=border)
    moved = []
    for x, y, size, face in dice:
        px, py = matrix @ np.array([x, y, 1.0])
        moved.append((px, py, size * scale, face))
    return _photometric(view, rng), moved


def _photometric(view: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    x = view.astype(np.float32)
    if rng.random() < 0.5:  # a gradient of light across the tray
        gx, gy = rng.uniform(-0.4, 0.4, 2)
        yy, xx = np.mgrid[0 : x.shape[0], 0 : x.shape[1]].astype(np.float32)
        x *= 1 + gx * (xx / x.shape[1] - 0.5) + gy * (yy / x.shape[0] - 0.5)
    gamma = float(np.exp(rng.uniform(-0.5, 0.5)))
    x = 255 * (np.clip(x, 0, 255) / 255) ** gamma
    x = x * rng.uniform(0.5, 1.3) + rng.uniform(-40, 30)
    roll = rng.random()
    if roll < 0.25:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.6))
    elif roll < 0.4:
        length = int(rng.integers(3, 8))
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2] = 1.0 / length
        rot = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(kernel, rot, (length, length))
        x = cv2.filter2D(x, -1, kernel / max(kernel.sum(), 1e-6))
    if rng.random() < 0.4:
        x = x + rng.normal(0, rng.uniform(2, 10), x.shape)
    x = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, data = cv2.imencode(".jpg", x, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(20, 70))])
        x = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    return x


def synthesise(rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """A drawn tray (extra training data only, never a measure): trays unlike the photos' desk.

    The photos show one light desk; drawn trays are dark felt, cork, grey or coloured plastic
    (in grey), with dice of other sizes, pip sizes and spacings, some showing a side face.
    Drawn here, not with the tests' ``drawn_dice.py``: the network is tested on drawn trays it
    was not trained on.
    """
    cw, ch = CROP
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
    return _photometric(view, rng), dice


def targets(dice: list, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heat map (gaussian per die), face class and log width at the centre cells, and a mask."""
    oh, ow = shape[0] // STRIDE, shape[1] // STRIDE
    heat = np.zeros((oh, ow), np.float32)
    face = np.full((oh, ow), -1, np.int64)
    width = np.zeros((oh, ow), np.float32)
    yy, xx = np.mgrid[0:oh, 0:ow].astype(np.float32)
    for x, y, size, f in dice:
        cx, cy = x / STRIDE - 0.5, y / STRIDE - 0.5
        if not (-1 <= cx <= ow and -1 <= cy <= oh):
            continue
        sigma = max(0.7, size / STRIDE / 5)
        heat = np.maximum(heat, np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2)))
        ix, iy = int(round(cx)), int(round(cy))
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if 0 <= ix + dx < ow and 0 <= iy + dy < oh:
                    face[iy + dy, ix + dx] = f - 1
                    width[iy + dy, ix + dx] = np.log(max(size, 2.0) / STRIDE)
        if 0 <= ix < ow and 0 <= iy < oh:
            heat[iy, ix] = 1.0
    return heat, face, width, (face >= 0)


def loss_of(out: torch.Tensor, heat, face, width, mask) -> torch.Tensor:
    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    focal = -(pos * (1 - p) ** 2 * torch.log(p) + neg * (1 - heat) ** 4 * p**2 * torch.log(1 - p))
    n = pos.sum().clamp(min=1)
    loss = focal.sum() / n
    m = mask
    if m.any():
        logits = out[:, 1:7].permute(0, 2, 3, 1)[m]
        loss = loss + nn.functional.cross_entropy(logits, face[m])
        loss = loss + nn.functional.l1_loss(out[:, 7][m], width[m])
    return loss


def batch(samples: list, rng: np.random.Generator, size: int, synthetic: float):
    images, heats, faces, widths, masks = [], [], [], [], []
    for i in rng.choice(len(samples), size, replace=False):
        _, image, dice = samples[i]
        if rng.random() < synthetic:
            view, moved = synthesise(rng)
        else:
            view, moved = augment(image, dice, rng)
        heat, face, width, mask = targets(moved, view.shape)
        images.append(normalise(view))
        heats.append(heat)
        faces.append(face)
        widths.append(width)
        masks.append(mask)
    return (torch.from_numpy(np.stack(images)), torch.from_numpy(np.stack(heats)),
            torch.from_numpy(np.stack(faces)), torch.from_numpy(np.stack(widths)),
            torch.from_numpy(np.stack(masks)))


def folded(model: nn.Sequential) -> list[tuple[np.ndarray, np.ndarray, int, int, bool]]:
    """Each convolution with the batch norm after it folded in: (weight, bias, stride, dilation, relu)."""
    model.eval()
    modules = list(model)
    layers = []
    i = 0
    while i < len(modules):
        conv = modules[i]
        weight = conv.weight.detach().double()
        bias = conv.bias.detach().double() if conv.bias is not None else torch.zeros(weight.shape[0]).double()
        relu = i + 1 < len(modules) and isinstance(modules[i + 1], nn.BatchNorm2d)
        if relu:
            bn = modules[i + 1]
            factor = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
            weight = weight * factor[:, None, None, None]
            bias = (bias - bn.running_mean.double()) * factor + bn.bias.detach().double()
        layers.append((weight.float().numpy(), bias.float().numpy(), conv.stride[0], conv.dilation[0], relu))
        i += 3 if relu else 1
    return layers


def export(layers: list, path: Path) -> None:
    """Write the folded layers as an ONNX graph of plain convolutions, which OpenCV's dnn runs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, weights = [], []
    name = "image"
    for i, (weight, bias, stride, dilation, relu) in enumerate(layers):
        weights += [numpy_helper.from_array(weight, f"w{i}"), numpy_helper.from_array(bias, f"b{i}")]
        pad = dilation * (weight.shape[-1] - 1) // 2
        out = f"conv{i}"
        nodes.append(helper.make_node(
            "Conv", [name, f"w{i}", f"b{i}"], [out], kernel_shape=list(weight.shape[2:]),
            strides=[stride, stride], dilations=[dilation, dilation], pads=[pad] * 4,
        ))
        name = out
        if relu:
            nodes.append(helper.make_node("Relu", [name], [f"relu{i}"]))
            name = f"relu{i}"
    nodes.append(helper.make_node("Identity", [name], ["outputs"]))
    graph = helper.make_graph(
        nodes, "dice_net",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, "height", "width"])],
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
    """OpenCV must run the written network as the trained one runs."""
    from bunco_pi.vision.net import load_net, prepare

    x, _ = prepare(image)
    want = model.eval()(torch.from_numpy(x[None]))[0].numpy()
    got = load_net(path).forward(x)
    error = float(np.abs(want - got).max())
    if error > 1e-3:
        raise SystemExit(f"{path}: the exported network differs from the trained one by {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", type=Path)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--synthetic", type=float, default=0.25, help="share of drawn trays in a batch")
    parser.add_argument("--validate", action="store_true", help="keep a fifth of the training photos aside")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train, val = load(args.photos, args.validate)
    print(f"training on {len(train)} photos" + (f", {len(val)} set aside" if val else ""), flush=True)
    model = build()
    steps_per_epoch = max(1, len(train) // args.batch)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=3e-3, total_steps=args.epochs * steps_per_epoch, pct_start=0.15
    )
    start = time.monotonic()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for _ in range(steps_per_epoch):
            images, heat, face, width, mask = batch(train, rng, args.batch, args.synthetic)
            loss = loss_of(model(images), heat, face, width, mask)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        seconds = time.monotonic() - start
        print(f"epoch {epoch:3d}  loss {total / steps_per_epoch:.3f}  {seconds:.0f} s", flush=True)
    export(folded(model), args.out)
    check_export(model, args.out, train[0][1])
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
