"""Try a second stage for the dice network: a small classifier of each die's crop at the die's own scale.

    python3 scripts/try_die_classifier.py ../shared/datasets/dice-photos \
        ../shared/datasets/dice-photos-mixed ../shared/datasets/dice-photos-mixed \
        --renders renders/train --steps 3000

An experiment, not part of the reader: it asks how well the faces of dice already found could be
read if each die were cut out and scaled to one size (its labelled box 2.2 times over, 64
pixels; the classifier sees the middle 40) instead of read off the one map of the whole frame.
Trained on the training photos of each folder that ``set_aside`` leaves (a folder named
twice drawn twice as often, as in train_dice_net.py) and every render's labelled faces,
each crop turned, scaled, shifted, its colours swapped, turned or inverted, made brighter or
darker, blurred; read on the
set-aside photos' labelled dice (never the held-out ones). Prints, every 250 steps, per
folder: the share of dice whose likeliest face is right, and at a belief of 0.9 the shares
read right and the dice read wrong (``--sure``). Needs PyTorch (``pip install -e '.[train]'``); seeded.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.errors import UserError  # noqa: E402
from bunco_pi.vision.dataset import LabelledPhoto, list_photos, read_labels, set_aside  # noqa: E402
from bunco_pi.vision.evaluate import load_image  # noqa: E402

PATCH = 64  # a die's crop, its box 2.2 times over: the die about 29 pixels wide
SEEN = 40  # the middle the classifier sees
SURE = 0.9

Crop = tuple[np.ndarray, int]  # (PATCH x PATCH BGR, face - 1)


def crops(photo: LabelledPhoto) -> list[Crop]:
    image = load_image(photo.image_path)
    height, width = image.shape[:2]
    out = []
    for die in read_labels(photo.label_path, width, height):
        s = max(die.size) * 2.2 / PATCH
        matrix = np.array([[1 / s, 0, PATCH / 2 - die.center[0] / s],
                           [0, 1 / s, PATCH / 2 - die.center[1] / s]])
        patch = cv2.warpAffine(image, matrix, (PATCH, PATCH), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REFLECT101)
        out.append((patch, die.face - 1))
    return out


def augment(patch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    centre = (PATCH / 2 + rng.uniform(-3, 3), PATCH / 2 + rng.uniform(-3, 3))
    matrix = cv2.getRotationMatrix2D(centre, rng.uniform(0, 360), rng.uniform(0.85, 1.15))
    matrix[:, 2] += SEEN / 2 - PATCH / 2
    x = cv2.warpAffine(patch, matrix, (SEEN, SEEN), borderMode=cv2.BORDER_REFLECT101)
    if rng.random() < 0.5:
        x = x[..., rng.permutation(3)]
    if rng.random() < 0.5:
        hsv = cv2.cvtColor(np.ascontiguousarray(x), cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + int(rng.integers(0, 180))) % 180
        x = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    if rng.random() < 0.3:  # light pips on dark bodies as well as dark on light
        x = 255 - x
    y = x.astype(np.float32) * rng.uniform(0.6, 1.3) + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        y = cv2.GaussianBlur(y, (0, 0), rng.uniform(0.4, 1.0))
    return np.clip(y, 0, 255)


def normalise(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    return ((x - x.mean(axis=(0, 1), keepdims=True)) / (x.std() + 8)).transpose(2, 0, 1)


def middle(patch: np.ndarray) -> np.ndarray:
    a, b = (PATCH - SEEN) // 2, (PATCH + SEEN) // 2
    return patch[a:b, a:b]


def build() -> nn.Sequential:
    layers: list[nn.Module] = []
    for cin, cout, stride in ((3, 24, 1), (24, 32, 2), (32, 48, 1), (48, 64, 2), (64, 64, 1)):
        layers += [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                   nn.ReLU(inplace=True)]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 6))


@torch.no_grad()
def measure(model: nn.Sequential, sets: dict[str, list[Crop]], sure_at: float = SURE) -> str:
    model.eval()
    parts = []
    for name, dice in sets.items():
        x = torch.from_numpy(np.stack([normalise(middle(p)) for p, _ in dice]))
        truth = np.array([face for _, face in dice])
        belief = torch.softmax(model(x), 1).numpy()
        face, sure = belief.argmax(1), belief.max(1) >= sure_at
        parts.append(f"{name}: {100 * (face == truth).mean():.1f}% likeliest right, "
                     f"{100 * ((face == truth) & sure).mean():.1f}% right and sure, "
                     f"{int(((face != truth) & sure).sum())} wrong and sure")
    model.train()
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", type=Path, nargs="+",
                        help="real photo folders (training split); one named twice is drawn twice as often")
    parser.add_argument("--renders", type=Path, action="append", default=[])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--smoothing", type=float, default=0.05, help="label smoothing of the loss")
    parser.add_argument("--sure", type=float, default=SURE, help="the belief counted as sure")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    rng = np.random.default_rng(args.seed)
    train: list[Crop] = []
    aside: dict[str, list[Crop]] = {}
    for folder, times in collections.Counter(args.photos).items():
        for photo in list_photos(folder, "train"):
            if set_aside(photo.name):
                aside.setdefault(folder.name, []).extend(crops(photo))
            else:
                train.extend(crops(photo) * times)
    real = len(train)
    for root in args.renders:
        with contextlib.suppress(UserError):
            train.extend(c for photo in list_photos(root, "all") for c in crops(photo))
    print(f"{real} photo crops and {len(train) - real} rendered; set aside: "
          + ", ".join(f"{k} {len(v)}" for k, v in aside.items()), flush=True)
    model = build()
    optimiser = torch.optim.AdamW(model.parameters(), 3e-3, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, 3e-3, total_steps=args.steps, pct_start=0.1)
    start = time.monotonic()
    for step in range(1, args.steps + 1):
        picked = rng.integers(len(train), size=args.batch)
        x = torch.from_numpy(np.stack([normalise(augment(train[i][0], rng)) for i in picked]))
        y = torch.tensor([train[i][1] for i in picked])
        loss = nn.functional.cross_entropy(model(x), y, label_smoothing=args.smoothing)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 250 == 0 or step == args.steps:
            took = time.monotonic() - start
            figures = measure(model, aside, args.sure)
            print(f"step {step}  loss {loss.item():.3f}  {took:.0f} s  {figures}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
