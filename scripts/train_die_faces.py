"""Train the dice face reader (bunco_pi/vision/face_reader.py) and write it as ONNX.

    python3 scripts/train_die_faces.py ../shared/datasets/dice-photos \
        ../shared/datasets/dice-photos-mixed ../shared/datasets/dice-photos-mixed \
        --renders renders/train --validate --steps 3000

Every labelled die of the training photos (a folder named twice is drawn twice as often)
and of the renders is cut out as the reader cuts a die the network found (``face_reader.cut``),
then moved and zoomed as far as the network's box misses a die (``--shift``, ``--zoom``; the
finder's boxes miss by more than the shipped reader was taught) and, with ``--lower``, moved
down as well, the die taught as before (the finder centres a die seen low on its front face,
below its top, and the top is still the face to name), now and then resampled as a
smaller or larger die gives it (``--resample``), turned a little (``TILT``),
mirrored, its colours swapped and turned (``train_dice_net._recolour``) and its light changed
(``train_dice_net._photometric``). A render's dice that cannot be read (cocked, cut by the
frame, under a hand) are taught as the seventh answer, and so, with ``--side DEG``, are those
whose top face is more than DEG degrees from face-on (the render's scene says): both where the
labels box them and where the first look's network and the finder find them, as the table's
reader cuts them (a die seen low from the side is found centred on its front face); there the
renders' dice lying flat and near face-on are taught as their faces. ``--unclear`` sets the
share of the batch's renders that cannot be read, ``--init`` trains on from a written reader
(its batch norm folded, its shape its own; ``--layers`` sets a new one's, and ``--separable``
makes its convolutions after the first depthwise-separable). ``--validate`` keeps
the set-aside fifth of the photos out of training and prints, every 250 steps, how each
folder's set-aside dice are read at their labels' boxes as the table reads a die (both views,
``--sure``); the held-out photos are never read. Needs PyTorch
(``.venv-train``, as docs/dice-camera.md makes it); seeded.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import math
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from train_dice_net import (  # noqa: E402
    _photometric,
    _recolour,
    _sample,
    convolution_layers,
    convolutions,
    folded,
)

from bunco_pi.errors import UserError  # noqa: E402
from bunco_pi.vision.dataset import list_photos, set_aside  # noqa: E402
from bunco_pi.vision.face_reader import (  # noqa: E402
    MODEL_PATH,
    PATCH,
    REACH,
    SEEN,
    UNCLEAR,
    FaceReader,
    cut,
    judged,
    views,
)
from bunco_pi.vision.fusion import FusionSettings, finder_dice  # noqa: E402
from bunco_pi.vision.net import detect, normalise, shipped_net  # noqa: E402

# Crops are turned a little, never upside down: a camera is held or mounted about level, so a
# slanted die shows its top face above the side faces facing the camera, and a reader kept
# upright learns to read the upper face (turned any way, it read the larger side face). Dice
# lie turned every way on a tray, so every turn of a face is in the photos all the same.
TILT = 25.0
ROOM = 96  # each die is kept as a crop this wide at the reader's scale: room to move and turn
# The networks' peaks this high are cut as the table's reader would cut them (lower than the
# table's own 0.5: a die barely found is still one the reader may be shown).
NETWORK_SEEN = 0.3
FACE_ON = 40.0  # a rendered die this near face-on, found centred, is taught as its face
# The shipped reader's convolutions (in, out, stride); --layers trains another shape. Five of
# (24, 32s, 48, 64s, 64) read plain rendered dice too poorly (docs: "retrained larger").
LAYERS = ((3, 32, 1), (32, 48, 2), (48, 64, 1), (64, 96, 2), (96, 96, 1), (96, 128, 1))

Crop = tuple[np.ndarray, int]  # (ROOM x ROOM BGR, class 0..6)
Seen = tuple[tuple[np.ndarray, np.ndarray], int]  # a die's two views as the table cuts them, class
MIDDLE = (ROOM / 2, ROOM / 2)  # a kept crop's die, centred
BOX = PATCH / REACH  # the die's box at the reader's scale
# What the table's reader shows a reader trained here as a die's second view
# (face_reader.SECOND_VIEWS): trained upright, it is read mirrored, never turned.
SECOND_VIEW = "mirrored"


def crops(sample: tuple) -> list[Crop]:
    """Each die of a sample (``train_dice_net._sample``) at the reader's scale, with room round it."""
    _, image, dice, _ = sample
    return [(cut(image, (x, y), size, side=ROOM), int(cls)) for x, y, size, cls in dice]


class Jitter(NamedTuple):
    """How far a training crop's box is moved (pixels at the reader's scale, where a die is about
    29 wide) and zoomed (up to 1 + zoom times), the share of crops resampled (``resample``), and
    how far, at most, the box is moved down as well (``lower``, pixels)."""

    shift: float = 3.0
    zoom: float = 0.15
    resample: float = 0.0
    lower: float = 0.0


AS_BEFORE = Jitter()  # what the shipped reader learned with


def resampled(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop as a die of another size in the frame would give it: averaged down to as little
    as 0.45 of its side and sampled back up (a small die, bilinear or bicubic), or sharpened (a
    large one averaged down from a 12-megapixel photo, every edge kept)."""
    side = x.shape[0]
    if rng.random() < 0.7:
        small = max(8, round(side * rng.uniform(0.45, 0.9)))
        x = cv2.resize(x, (small, small), interpolation=cv2.INTER_AREA)
        return cv2.resize(x, (side, side), interpolation=(cv2.INTER_LINEAR, cv2.INTER_CUBIC)[rng.integers(2)])
    soft = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.6, 1.2)).astype(np.float32)
    amount = rng.uniform(0.3, 1.0)
    return np.clip(x.astype(np.float32) * (1 + amount) - soft * amount, 0, 255).astype(np.uint8)


def placed(crop: np.ndarray, rng: np.random.Generator, jitter: Jitter = AS_BEFORE) -> np.ndarray:
    """A kept crop cut as the network's box might cut it (moved, zoomed, turned a little), and
    now and then resampled. With no resampling or lowering asked, the random numbers drawn are
    those drawn before the options were made, so an old recipe trains as it did."""
    shift = tuple(rng.uniform(-jitter.shift, jitter.shift, 2))  # drawn first, as it always was
    if jitter.lower > 0:  # the box lower on the die, as the finder centres a die seen low
        shift = (shift[0], shift[1] - float(rng.uniform(0, jitter.lower)))
    x = cut(crop, MIDDLE, BOX, shift=shift,
            zoom=float(rng.uniform(1 - jitter.zoom, 1 + jitter.zoom)), angle=float(rng.uniform(-TILT, TILT)))
    if jitter.resample > 0 and rng.random() < jitter.resample:
        x = resampled(x, rng)
    return x


def view(crop: np.ndarray, rng: np.random.Generator | None, jitter: Jitter = AS_BEFORE) -> np.ndarray:
    """What the reader sees of a kept crop: as cut, or (given ``rng``) as the network's box might
    cut it, turned, recoloured and relit."""
    if rng is None:
        return cut(crop, MIDDLE, BOX)
    x = placed(crop, rng, jitter)
    if rng.random() < 0.5:  # a mirrored face is the same face, and up stays up
        x = np.ascontiguousarray(x[:, ::-1])
    if rng.random() < 0.3:  # light pips on dark bodies as well as dark on light
        x = 255 - x
    x = _recolour(x, rng)
    return _photometric(x, rng) if rng.random() < 0.5 else x


def pools(drawn: list[Crop], unclear: float | None = None) -> list[list[Crop]]:
    """The rendered dice a batch is drawn from, split once: given ``unclear`` (and both kinds
    rendered), those that can be read and those that cannot; else one pool, as drawn."""
    split = [[c for c in drawn if c[1] != UNCLEAR], [c for c in drawn if c[1] == UNCLEAR]]
    return split if unclear is not None and all(split) else [drawn]


def pick(real: list[Crop], rendered_pools: list[list[Crop]], rendered: float, size: int,
         rng: np.random.Generator, unclear: float | None = None) -> list[Crop]:
    """A batch with about ``rendered`` of it renders (all of it if there are no photos), and
    of those, given ``unclear`` (and ``rendered_pools`` split by it), about that share dice that
    cannot be read."""
    drawn = any(rendered_pools)
    share = rendered if real and drawn else float(drawn)
    batch = []
    for from_renders in rng.random(size) < share:
        if not from_renders:
            batch.append(real[rng.integers(len(real))])
            continue
        pool = rendered_pools[int(rng.random() < unclear)] if len(rendered_pools) == 2 else rendered_pools[0]
        batch.append(pool[rng.integers(len(pool))])
    return batch


def parse_layers(text: str) -> tuple[tuple[int, int, int], ...]:
    """"24,32s,48" -> the convolutions (in, out, stride): each a width, "s" for a stride of 2."""
    layers, cin = [], 3
    for part in text.split(","):
        width = re.fullmatch(r"\s*([1-9][0-9]*)(s?)\s*", part)
        if width is None:
            raise SystemExit(f"--layers: {part!r} is not a width (48, or 48s: a stride of 2)")
        cout, stride = int(width[1]), 2 if width[2] else 1
        layers.append((cin, cout, stride))
        cin = cout
    return tuple(layers)


def build(shape: tuple[tuple[int, int, int], ...] = LAYERS, separable: bool = False) -> nn.Sequential:
    """A new reader of ``shape``'s convolutions, with batch norm. ``separable``: each 3x3
    convolution after the first made of a 3x3 of each channel alone and a 1x1 across the
    channels (as ``train_dice_net.build``'s): the same layers and strides for a fraction of the
    arithmetic. With both networks separable, the face reader is more than half of a coloured
    roll's (docs/dice-camera.md, "Speed")."""
    layers = convolution_layers([(cin, cout, stride, 1) for cin, cout, stride in shape], separable=separable)
    answers = nn.Linear(shape[-1][1], UNCLEAR + 1)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), answers)


def from_onnx(path: Path) -> nn.Sequential:
    """A written face reader as a model to train on: its folded convolutions, without batch norm."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {w.name: torch.from_numpy(numpy_helper.to_array(w).copy()) for w in graph.initializer}
    convs = [{a.name: a for a in node.attribute} for node in graph.node if node.op_type == "Conv"]
    layers: list[nn.Module] = []
    for i, attributes in enumerate(convs):  # its own shape, whatever --layers it was trained with
        stride = attributes["strides"].ints[0] if "strides" in attributes else 1  # ONNX's defaults
        groups = attributes["group"].i if "group" in attributes else 1
        cout, cin_of_group, kernel = weights[f"w{i}"].shape[:3]
        conv = nn.Conv2d(cin_of_group * groups, cout, kernel, stride, kernel // 2, groups=groups)
        conv.weight.data, conv.bias.data = weights[f"w{i}"], weights[f"b{i}"]
        layers += [conv, nn.ReLU(inplace=True)]
    answers = nn.Linear(weights["fc_w"].shape[1], UNCLEAR + 1)
    answers.weight.data, answers.bias.data = weights["fc_w"], weights["fc_b"]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), answers)


class Drawn(NamedTuple):
    """A die as a render's scene drew it."""

    x: float  # pixels
    y: float
    slant: float  # degrees of its top face from face-on to the camera
    face: int  # 1..6
    flat: bool  # lying flat, neither cocked nor cut by the frame


def _scene_dice(root: Path, name: str, image: np.ndarray) -> list[Drawn]:
    scene = root / "scenes" / f"{name}.json"
    if not scene.is_file():
        return []
    h, w = image.shape[:2]
    drawn = json.loads(scene.read_text(encoding="utf-8"))["dice"]
    return [Drawn(d["x"] * w, d["y"] * h, d["slant"], d["face"], d["state"] == "flat") for d in drawn]


def _nearest(drawn: list[Drawn], x: float, y: float, reach: float) -> Drawn | None:
    """The drawn die nearest (x, y), if one is within ``reach`` pixels."""
    near = min(drawn, key=lambda d: (d.x - x) ** 2 + (d.y - y) ** 2, default=None)
    if near is None or (near.x - x) ** 2 + (near.y - y) ** 2 >= reach ** 2:
        return None
    return near


def _seen_from_the_side(sample: tuple, drawn: list[Drawn], side: float) -> tuple:
    """A render's sample with each die whose top face is more than ``side`` degrees from face-on
    (its scene, ``drawn``, says) taught as "cannot be read"."""
    name, image, dice, masked = sample
    out = []
    for x, y, size, cls in dice:
        near = _nearest(drawn, x, y, size)
        out.append((x, y, size, UNCLEAR if near is not None and near.slant > side else cls))
    return name, image, out, masked


def as_the_networks_cut(sample: tuple, drawn: list[Drawn], side: float) -> list[Crop]:
    """The crops the table's reader cuts where the first look's network and the finder find a
    render's dice: a die more than ``side`` degrees from face-on taught as "cannot be read", a
    die lying flat and at most ``FACE_ON`` degrees from it, its box centred on its top face, as
    its face. A die seen low from the side is found centred on its front face, which then looks
    like a top face seen from above; a crop round the top face's box (``crops``) never shows the
    reader that view."""
    _, image, _, _ = sample
    if side >= 90 or not drawn:
        return []
    out = []
    found = detect(image, shipped_net(), NETWORK_SEEN)
    found += finder_dice(image, (0.0, 0.0, 1.0, 1.0), replace(FusionSettings(), again_seen=NETWORK_SEEN))
    for die in found:
        near = _nearest(drawn, *die.center, die.width)
        if near is None:
            continue
        crop = cut(image, die.center, die.width, side=ROOM)
        if near.slant > side:
            out.append((crop, UNCLEAR))
        elif near.flat and near.slant <= FACE_ON and math.dist((near.x, near.y), die.center) < die.width / 4:
            out.append((crop, near.face - 1))
    return out


def export(model: nn.Sequential, path: Path) -> None:
    """The folded convolutions, a global average and the last linear layer, as ONNX."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, weights, name = convolutions(folded(model), "crops", 3)
    linear = model[-1]
    weights += [numpy_helper.from_array(linear.weight.detach().numpy(), "fc_w"),
                numpy_helper.from_array(linear.bias.detach().numpy(), "fc_b")]
    nodes += [helper.make_node("GlobalAveragePool", [name], ["pooled"]),
              helper.make_node("Flatten", ["pooled"], ["flat"]),
              helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1)]
    graph = helper.make_graph(
        nodes, "die_faces",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["dice", 3, SEEN, SEEN])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["dice", UNCLEAR + 1])],
        weights,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    helper.set_model_props(onnx_model, {"second_view": SECOND_VIEW})
    onnx_model.ir_version = 8
    onnx.checker.check_model(onnx_model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(onnx_model, str(path))


@torch.no_grad()
def check_export(model: nn.Sequential, path: Path, sample: list[Crop]) -> None:
    """onnxruntime must read the crops as the trained model reads them."""
    shown = [view(c, None) for c, _ in sample]
    want = torch.softmax(model.eval()(torch.from_numpy(np.stack([normalise(x) for x in shown]))), 1).numpy()
    error = float(np.abs(FaceReader(path).beliefs(shown) - want).max())
    if error > 1e-3:
        raise SystemExit(f"{path}: the exported reader differs from the trained one by {error}")


def as_the_table_sees(sample: tuple) -> list[Seen]:
    """Each die of a sample with the two views the table's reader cuts of it from the picture
    itself at its label's box (``FaceReader.views`` of a reader trained here: ``SECOND_VIEW``),
    not from a kept crop, which resamples it twice."""
    _, image, dice, _ = sample
    return [(tuple(views(image, (x, y), size, SECOND_VIEW)), int(cls)) for x, y, size, cls in dice]


@torch.no_grad()
def read(model: nn.Sequential, dice: list[Seen]) -> list[tuple[int, float, float]]:
    """Each die's (face 1..6, belief, "cannot be read") as the face reader at the table gives
    it (``face_reader.judged`` of both views' beliefs)."""
    if not dice:
        return []
    model.eval()
    x = torch.from_numpy(np.stack([normalise(view) for pair, _ in dice for view in pair]))
    beliefs = torch.softmax(model(x), 1).numpy().reshape(len(dice), 2, UNCLEAR + 1)
    model.train()
    return [judged(die) for die in beliefs]


def measure(model: nn.Sequential, sets: dict[str, list[Seen]], sure: float) -> str:
    """How each set's dice are read as the face reader at the table reads them (``read``): both
    views, the likeliest face of the two, believed as the lesser believes it. One view alone
    counts a die sure that the table leaves unscored because its mirror image reads another
    face."""
    parts = []
    for name, dice in sets.items():
        if not dice:
            parts.append(f"{name}: no labelled dice")
            continue
        readings = read(model, dice)
        truth = np.array([cls for _, cls in dice])
        face = np.array([f - 1 for f, _, _ in readings])
        certain = np.array([belief >= sure for _, belief, _ in readings])
        parts.append(f"{name}: {100 * (face == truth).mean():.1f}% likeliest right, "
                     f"{100 * ((face == truth) & certain).mean():.1f}% right and sure, "
                     f"{int(((face != truth) & certain).sum())} wrong and sure")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", type=Path, nargs="*",
                        help="real photo folders (training split); one named twice is drawn twice as often")
    parser.add_argument("--renders", type=Path, action="append", default=[], help="a folder of renders (all)")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rendered", type=float, default=0.3, help="share of rendered dice in a batch")
    parser.add_argument("--unclear", type=float,
                        help="share of the rendered dice in a batch that cannot be read (default: as drawn)")
    parser.add_argument("--smoothing", type=float, default=0.0, help="label smoothing of the loss")
    parser.add_argument("--shift", type=float, default=AS_BEFORE.shift,
                        help="pixels a crop's box moves each way at the reader's scale (a die: about 29)")
    parser.add_argument("--zoom", type=float, default=AS_BEFORE.zoom, help="a crop's box is zoomed 1 +- this")
    parser.add_argument("--resample", type=float, default=AS_BEFORE.resample,
                        help="share of crops resampled as a smaller or a larger die would give them")
    parser.add_argument("--lower", type=float, default=AS_BEFORE.lower,
                        help="up to this many pixels (at the reader's scale, a die about 29 wide) a "
                             "crop's box moves down as well, its die taught as before: a die seen low is "
                             "found lower, on its front face, and its top is the face above")
    parser.add_argument("--sure", type=float, default=0.95, help="the belief --validate counts as sure")
    parser.add_argument("--validate", action="store_true", help="keep a fifth of the training photos aside")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--init", type=Path,
                        help="a face reader file to train on from (its batch norm folded)")
    parser.add_argument("--side", type=float, default=90.0,
                        help="a rendered die whose top face is more than this many degrees from face-on is "
                             "taught as 'cannot be read' (its scene says; the renderer's own line is 70)")
    shipped = ",".join(f"{c}{'s' if st == 2 else ''}" for _, c, st in LAYERS)
    parser.add_argument("--layers", help=f"a new reader's convolutions: widths, 's' for a stride of 2 "
                                         f"(default: {shipped}, the shipped reader's); not with --init")
    parser.add_argument("--separable", action="store_true",
                        help="each 3x3 convolution after the first depthwise-separable: a fraction of "
                             "the arithmetic; not with --init")
    parser.add_argument("--out", type=Path, required=True,
                        help=f"the file to write (every 250 steps); the shipped one is {MODEL_PATH}")
    args = parser.parse_args()
    for option, given in (("--layers", args.layers is not None), ("--separable", args.separable)):
        if args.init is not None and given:
            raise SystemExit(f"{option} with --init: a reader trained on keeps the shape of its file")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    train: list[Crop] = []
    drawn: list[Crop] = []
    aside: dict[str, list[Seen]] = {}
    for folder, times in collections.Counter(args.photos).items():
        for photo in list_photos(folder, "train"):
            sample = _sample(photo, teach_unclear=False)
            if args.validate and set_aside(photo.name):
                aside.setdefault(folder.name, []).extend(as_the_table_sees(sample))
            else:
                train.extend(crops(sample) * times)
    for root in args.renders:
        with contextlib.suppress(UserError):  # a folder with nothing rendered yet
            for photo in list_photos(root, "all"):
                sample = _sample(photo, True)
                scene = _scene_dice(root, photo.name, sample[1]) if args.side < 90 else []
                drawn.extend(crops(_seen_from_the_side(sample, scene, args.side)))
                drawn.extend(as_the_networks_cut(sample, scene, args.side))
    if not train and not drawn:
        raise SystemExit("nothing to train on: give photo folders and/or --renders")
    unclear = sum(cls == UNCLEAR for _, cls in drawn)
    print(f"{len(train)} photo dice and {len(drawn)} rendered ({unclear} cannot be read); set aside: "
          + (", ".join(f"{k} {len(v)}" for k, v in aside.items()) or "none"), flush=True)
    model = (build(parse_layers(args.layers or shipped), args.separable) if args.init is None
             else from_onnx(args.init))
    optimiser = torch.optim.AdamW(model.parameters(), args.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, args.lr, total_steps=args.steps, pct_start=0.1)
    rendered_pools = pools(drawn, args.unclear)
    jitter = Jitter(args.shift, args.zoom, args.resample, args.lower)
    start = time.monotonic()
    for step in range(1, args.steps + 1):
        picked = pick(train, rendered_pools, args.rendered, args.batch, rng, args.unclear)
        x = torch.from_numpy(np.stack([normalise(view(crop, rng, jitter)) for crop, _ in picked]))
        y = torch.tensor([cls for _, cls in picked])
        loss = nn.functional.cross_entropy(model(x), y, label_smoothing=args.smoothing)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 250 == 0 or step == args.steps:
            figures = measure(model, aside, args.sure) if aside else ""
            took = time.monotonic() - start
            print(f"step {step}  loss {loss.item():.3f}  {took:.0f} s  {figures}", flush=True)
            export(model, args.out)
            model.train()
    check_export(model, args.out, (train or drawn)[:64])
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
