"""Choose the fusion's thresholds (bunco_pi/vision/fusion.py) on the set-aside training photos.

    python3 scripts/tune_fusion.py ../shared/datasets/dice-photos ../shared/datasets/dice-photos-mixed

Only the set-aside fifth of each folder's training photos is read (``set_aside`` in
bunco_pi/vision/dataset.py): neither trained on nor held out, so the held-out photos stay a
fair measure. Renders never trained on (``--renders``, say dice seen from low down, which the
set-aside photos hold few of) are read whole, and their dice count with the photos'. Each
photo is read once by each reader as ``read_both`` reads it (the network
first, its second look at every die it found, the pip reader round those dice, the face
reader's reading of each die the network found, for its check); every combination of
thresholds is then scored from those readings. Prints the best few, fewest
dice wrong and sure first, then the most dice right, and the present settings beside them,
with each folder's figures. ``--harder KIND`` (as many as wanted) reads the set-aside photos
again made harder so (``evaluate.HARDER``: say their colours changed), each a folder of its own.
``--again NAME=V,V`` tries only those values of one looking-again threshold (the whole grid is
86,400 settings, hours of scoring; ``--again again_object=0.9`` holds one at its present
value), and ``--again-only`` leaves out the first look's own grid. ``--first NAME=V,V`` tries
those values of one of the first look's own bars on its beliefs (``FIRST_LOOK``) in that same
grid, the looking-again on and every other first-look threshold present: a new first look
network believes its faces on a scale of its own, and its bars are chosen with the whole reading.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.vision.calibration import TrayCalibration  # noqa: E402
from bunco_pi.vision.dataset import list_photos  # noqa: E402
from bunco_pi.vision.evaluate import HARDER, Mistake, load_image, score_photo  # noqa: E402
from bunco_pi.vision.face_reader import FaceReader, shipped_face_reader  # noqa: E402
from bunco_pi.vision.fusion import (  # noqa: E402
    FusionSettings,
    combine,
    left_unscored,
    look_for_more,
    read_again,
    refuse_side_views,
    with_dice_more,
)
from bunco_pi.vision.net import NetInputs, detect, load_net, look_again  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings, read_pips  # noqa: E402

GRID = {
    "sure": (0.8, 0.9, 0.95, 0.98),
    "sure_alone": (0.9, 0.95, 0.97, 0.99),
    "objection": (0.3, 0.5, 0.7),
    "turned_objection": (0.3, 0.5, 0.7, 1.01),  # 1.01: the second look's other face is no objection
    "unclear": (0.3, 0.5, 0.7),
    "pips_need_net": (False, True),
    "second_look": (False, True),
}
# Set-aside dice whose labels look wrong to the eye (docs/dice-camera-experiments.md, "Labels that look
# wrong"): read as the photo shows them, they are counted apart (doubted), not as wrong, so
# that "fewest wrong" means the fewest real mistakes; read as any other face, they are wrong.
DOUBTED = {  # (folder, photo, the label's place in pixels): the face its top shows
    ("dice-photos-mixed", "IMG_20191112_101837", (165, 167)): 3,
    ("dice-photos-mixed", "IMG_20191112_111903", (116, 70)): 5,
    ("dice-photos-mixed", "IMG_20191112_111903", (312, 338)): 1,
}
# The first look's thresholds that stand on its network's beliefs: a network trained anew may need
# its own (``--first``); the rest of the grid holds them at their present values. Not ``seen``: it
# also sets how low the glance and the finder's heap test go, which are read once for every row.
FIRST_LOOK = ("sure", "sure_alone", "objection", "turned_objection", "unclear")
ROLL = TrayCalibration().dice  # a reading short of a roll's dice is looked at again, as at the table
AGAIN = {  # the face reader's check and looking again (fusion.read_again), on the present rest
    "again_seen": (0.2, 0.3, 0.5),
    "again_sure": (0.8, 0.9, 0.95, 0.97, 0.98),
    "again_agree": (0.5, 0.7, 0.9),
    "again_alone": (0.99, 0.995, 0.999, 1.01),  # 1.01: the face reader is never trusted alone
    "again_object": (0.3, 0.5, 0.7, 0.9),
    "check": (0.3, 0.5, 0.7, 0.9, 1.01),
    "check_object": (0.9, 0.95, 0.97, 0.99, 0.995, 1.01),  # 1.01: the check names no other face
    "again_overrule": (0.95, 0.97, 0.99, 1.01),  # 1.01: a count of another face always stands
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--split", default="setaside", help="setaside (default); never heldout")
    parser.add_argument("--renders", type=Path, action="append", default=[],
                        help="renders never trained on, read whole (say, dice seen from low down), whose "
                             "dice count with the photos'")
    parser.add_argument("--net", type=Path, help="a network file other than the shipped one")
    parser.add_argument("--finder", type=Path, help="a finder network other than the shipped one")
    parser.add_argument("--faces", type=Path, help="a face reader other than the shipped one")
    parser.add_argument("--harder", action="append", default=[], choices=tuple(HARDER),
                        help="also read the photos (not the renders) made harder so, say their colours "
                             "changed (hue, negative, grey, warm, cold); each counted as a folder of its own")
    parser.add_argument("--again", action="append", default=[], metavar="NAME=V,V",
                        help=f"try only these values of a looking-again threshold ({', '.join(AGAIN)})")
    parser.add_argument("--again-only", action="store_true", help="leave out the first look's own grid")
    parser.add_argument("--first", action="append", default=[], metavar="NAME=V,V",
                        help=f"try these values of a first-look threshold ({', '.join(FIRST_LOOK)}) "
                             "with the looking-again, the others present (each multiplies the "
                             "looking-again's grid: hold that with --again)")
    args = parser.parse_args()
    grid = held_to(args.again) | held_to(args.first, "--first")
    if args.split == "heldout":
        raise SystemExit("--split heldout: the held-out photos are for measuring, never for tuning")
    settings = ReaderSettings()
    base = FusionSettings()
    net = load_net(args.net) if args.net else None
    finder = load_net(args.finder) if args.finder else None
    faces = FaceReader(args.faces) if args.faces else None
    lowest = replace(base, again_seen=min(grid["again_seen"]))
    readings = []
    harder = tuple(dict.fromkeys(args.harder))  # a kind named twice is read once
    sets = [(f, args.split, kind) for f in args.folders for kind in ("", *harder)]
    for folder, split, kind in sets + [(r, "all", "") for r in args.renders]:
        for photo in list_photos(folder, split):
            image = load_image(photo.image_path)
            if kind:
                image = HARDER[kind](image)
            inputs = NetInputs()
            glanced = detect(image, net, base.glance, settings.region, inputs=inputs)
            pips = read_pips(image, settings, [(*d.center, base.window * d.width) for d in glanced])
            again = [look_again(image, d, net) for d in glanced]
            more = look_for_more(image, settings.region, lowest, finder, faces, inputs)
            checks = (faces or shipped_face_reader()).read(image, glanced)
            size = (image.shape[1], image.shape[0])
            readings.append((folder.name, kind, photo, size, pips, glanced, again, checks, more))
    print(f"{len(readings)} photos of {', '.join(str(f) for f in args.folders)} ({args.split}"
          + "".join(f", +{kind}" for kind in harder) + ")"
          + "".join(f", {r} (all)" for r in args.renders))
    rows = []
    for values in itertools.product(*grid.values()):
        fusion = replace(base, again=True, **dict(zip(grid, values, strict=True)))
        rows.append(score(readings, fusion, settings))
    show(sorted(rows, key=lambda r: (r[0], r[1]))[:8] + [score(readings, base, settings)], base,
         "looking again at the dice the present settings leave unscored:")
    if args.again_only:
        return 0
    rows = []
    for seen in (0.3, 0.4, 0.5):
        for values in itertools.product(*GRID.values()):
            fusion = replace(base, again=False, seen=seen, **dict(zip(GRID, values, strict=True)))
            rows.append(score(readings, fusion, settings))
    rows.sort(key=lambda r: (r[0], r[1]))
    present = replace(base, again=False)  # the first look's settings, as the table has them
    show(rows[:8] + [r for r in rows if r[2] == present], present, "the two readers (the first look alone):")
    return 0


def held_to(named: list[str], option: str = "--again") -> dict[str, tuple[float, ...]]:
    """The looking-again's grid (``--again``), or the first look's thresholds at their present values
    (``--first``), with each ``OPTION NAME=V,V`` in place of its line (a value named twice tried
    once); a bad one is a one-line error naming it."""
    if option == "--again":
        grid, kind, example = dict(AGAIN), "looking-again", "again_sure"
    else:
        present = FusionSettings()
        grid, kind, example = {k: (getattr(present, k),) for k in FIRST_LOOK}, "first-look", "sure"
    seen: set[str] = set()
    for held in named:
        name, equals, values = held.partition("=")
        if not equals:
            raise SystemExit(f"{option} {held}: expected NAME=V,V, as {example}=0.95,0.97")
        if name not in grid:
            raise SystemExit(f"{option} {held}: no {kind} threshold {name!r} ({', '.join(grid)})")
        if name in seen:
            raise SystemExit(f"{option} {held}: {name} is named twice; give all its values at once")
        seen.add(name)
        try:
            tried = [float(v) for v in values.split(",")]
        except ValueError:
            raise SystemExit(f"{option} {held}: the values must be numbers, as {name}=0.9,0.95") from None
        if not all(0 <= v <= 1.01 for v in tried):  # nan too
            raise SystemExit(f"{option} {held}: a threshold lies from 0 to 1.01 (1.01: never)")
        grid[name] = tuple(dict.fromkeys(tried))
    return grid


def doubted(folder: str, photo: str, mistakes: tuple[Mistake, ...]) -> int:
    """How many of a photo's dice read wrong were read as the face a doubted label's top shows."""
    return sum(1 for m in mistakes if m.kind == "wrong and sure" and any(
        (f, p) == (folder, photo) and math.dist(m.place, at) <= 3 and m.read == shows
        for (f, p, at), shows in DOUBTED.items()))


def score(readings: list[tuple], fusion: FusionSettings, settings: ReaderSettings) -> tuple:
    """(wrong, -right, fusion, totals, each folder's dice, right, wrong and doubted) of one set
    of settings; wrong leaves out the dice read as a doubted label's top shows (``DOUBTED``)."""
    totals = [0, 0, 0, 0, 0, 0]
    folders: dict[str, list[int]] = {}
    for folder, kind, photo, size, pips, glanced, again, checks, looked in readings:
        kept = [
            (second if fusion.second_look and first.face_probability >= fusion.objection else first, check)
            for first, second, check in zip(glanced, again, checks, strict=True)
            if first.presence >= fusion.seen
        ]
        reading = combine(pips, [die for die, _ in kept], settings.min_confidence, fusion)
        if fusion.checks_first_look:
            reading = refuse_side_views(reading, kept, settings.min_confidence, fusion)
        if fusion.again and left_unscored(reading, settings.min_confidence, ROLL):
            more = [(f, r) for f, r in looked if f.presence >= fusion.again_seen]
            reading = read_again(reading, pips, more, settings.min_confidence, fusion, [d for d, _ in kept])
        elif fusion.again and fusion.again_whole <= 1 and len(reading.dice) <= ROLL:
            reading = with_dice_more(reading, [f for f, _ in looked], fusion)
        result = score_photo(photo.name, reading, photo.label_path, size, settings.min_confidence)
        doubt = doubted(folder, photo.name, result.mistakes)
        counts = (result.dice, result.right, result.wrong - doubt, result.unsure, result.missed, doubt)
        mine = folders.setdefault(f"{folder}+{kind}" if kind else folder, [0, 0, 0, 0])
        for k, n in enumerate(counts):
            totals[k] += n
        for k, n in enumerate(counts[:3] + counts[5:]):
            mine[k] += n
    return (totals[2], -totals[1], fusion, totals, folders)


def show(rows: list, base: FusionSettings, title: str) -> None:
    print(title)
    print(f"{'seen':>5} {'sure':>5} {'alone':>5} {'object':>6} {'turned':>6} {'unclear':>7} "
          f"{'need':>5} {'twice':>5} "
          f"{'again':>38}  {'dice':>5} {'right':>6} {'wrong':>5} {'unsure':>6} {'missed':>6} {'doubted':>7}")
    for _, _, f, (dice, right, wrong, unsure, missed, doubt), folders in rows:
        each = "  ".join(f"{name} {100 * r / max(d, 1):.1f}%/{w}" + (f"+{q}?" if q else "")
                         for name, (d, r, w, q) in folders.items())
        again = (f"{f.again_seen}/{f.again_sure}/{f.again_agree}/{f.again_alone}/{f.again_object}/{f.check}"
                 f"/{f.check_object}/{f.again_overrule}"
                 if f.again else "no")
        print(f"{f.seen:>5} {f.sure:>5} {f.sure_alone:>5} {f.objection:>6} {f.turned_objection:>6} "
              f"{f.unclear:>7} "
              f"{f.pips_need_net!s:>5} {f.second_look!s:>5} {again:>38}  "
              f"{dice:>5} {100 * right / max(dice, 1):>5.1f}% "
              f"{wrong:>5} {unsure:>6} {missed:>6} {doubt:>7}  {each}"
              + ("   (present)" if f == base else ""))


if __name__ == "__main__":
    raise SystemExit(main())
