"""Choose the fusion's thresholds (bunco_pi/vision/fusion.py) on the set-aside training photos.

    python3 scripts/tune_fusion.py ../shared/datasets/dice-photos ../shared/datasets/dice-photos-mixed

Only the set-aside fifth of each folder's training photos is read (``set_aside`` in
bunco_pi/vision/dataset.py): neither trained on nor held out, so the held-out photos stay a
fair measure. Each photo is read once by each reader; every combination of thresholds is then
scored from those readings. Prints the best few, fewest dice wrong and sure first, then the
most dice right, and the present settings beside them.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.vision.dataset import list_photos  # noqa: E402
from bunco_pi.vision.evaluate import load_image, score_photo  # noqa: E402
from bunco_pi.vision.fusion import FusionSettings, combine  # noqa: E402
from bunco_pi.vision.net import detect, load_net  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings, read_pips  # noqa: E402

GRID = {
    "sure": (0.8, 0.9, 0.95, 0.98),
    "sure_alone": (0.9, 0.95, 0.97, 0.99),
    "objection": (0.3, 0.5, 0.7),
    "unclear": (0.3, 0.5, 0.7),
    "pips_need_net": (False, True),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--split", default="setaside", help="setaside (default); never heldout")
    parser.add_argument("--net", type=Path, help="a network file other than the shipped one")
    parser.add_argument("--pips-cache", type=Path,
                        help="keep the pip reader's readings here (they do not depend on the network)")
    parser.add_argument("--pips-only", action="store_true", help="only fill the cache")
    args = parser.parse_args()
    if args.split == "heldout":
        raise SystemExit("--split heldout: the held-out photos are for measuring, never for tuning")
    settings = ReaderSettings()
    cache = {}
    if args.pips_cache and args.pips_cache.is_file():
        cache = pickle.loads(args.pips_cache.read_bytes())
    net = load_net(args.net) if args.net else None
    readings = []
    for folder in args.folders:
        for photo in list_photos(folder, args.split):
            image = load_image(photo.image_path)
            key = f"{folder.name}/{photo.name}"
            if key not in cache:
                cache[key] = read_pips(image, settings)
                if args.pips_cache:
                    args.pips_cache.write_bytes(pickle.dumps(cache))
            if args.pips_only:
                continue
            found = detect(image, net, 0.3, settings.region)
            readings.append((photo, (image.shape[1], image.shape[0]), cache[key], found))
    if args.pips_only:
        return 0
    print(f"{len(readings)} photos of {', '.join(str(f) for f in args.folders)} ({args.split})")
    base = FusionSettings()
    rows = []
    for seen in (0.3, 0.4, 0.5):
        for values in itertools.product(*GRID.values()):
            fusion = replace(base, seen=seen, **dict(zip(GRID, values, strict=True)))
            totals = [0, 0, 0, 0, 0]
            for photo, size, pips, found in readings:
                kept = [d for d in found if d.presence >= seen]
                reading = combine(pips, kept, settings.min_confidence, fusion)
                result = score_photo(photo.name, reading, photo.label_path, size, settings.min_confidence)
                counts = (result.dice, result.right, result.wrong, result.unsure, result.missed)
                for k, n in enumerate(counts):
                    totals[k] += n
            rows.append((totals[2], -totals[1], fusion, totals))
    rows.sort(key=lambda r: (r[0], r[1]))
    print(f"{'seen':>5} {'sure':>5} {'alone':>5} {'object':>6} {'unclear':>7} {'need':>5}  "
          f"{'dice':>5} {'right':>6} {'wrong':>5} {'unsure':>6} {'missed':>6}")
    present = [r for r in rows if r[2] == base]
    for _, _, f, (dice, right, wrong, unsure, missed) in rows[:8] + present:
        print(f"{f.seen:>5} {f.sure:>5} {f.sure_alone:>5} {f.objection:>6} {f.unclear:>7} "
              f"{f.pips_need_net!s:>5}  {dice:>5} {100 * right / max(dice, 1):>5.1f}% "
              f"{wrong:>5} {unsure:>6} {missed:>6}"
              + ("   (present)" if f == base else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
