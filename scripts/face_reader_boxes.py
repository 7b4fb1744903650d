"""How surely the face reader reads the dice the finder finds, at the finder's box and at the label's.

    python3 scripts/face_reader_boxes.py ../shared/datasets/dice-photos-mixed --faces wd.onnx

Where the first look misses a die, the face reader reads it at the finder's box
(``fusion.look_for_more``), not at the box a labeller drew. For each labelled die of a folder's
split that the finder finds (a peak of ``FusionSettings.again_seen`` or more, paired with the
labels as ``dice eval`` pairs a reading's dice, ``dataset.match_dice``), the face reader reads
four boxes: the finder's, the label's, and each with the other's centre or width. It prints how
far the finder's boxes are from the labels' (in the label's width), and, for each box, the dice
read right and sure (both views ``--sure``) and wrong and sure; ``--list`` names each die read
right and sure at the label's box and not at the finder's.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.errors import UserError  # noqa: E402
from bunco_pi.vision.dataset import list_photos, match_dice, read_labels  # noqa: E402
from bunco_pi.vision.evaluate import load_image  # noqa: E402
from bunco_pi.vision.face_reader import FaceReader, shipped_face_reader  # noqa: E402
from bunco_pi.vision.fusion import FusionSettings, finder_dice  # noqa: E402
from bunco_pi.vision.net import NetDie  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings  # noqa: E402

BOXES = ("the finder's box", "the label's box", "the finder's centre, the label's width",
         "the label's centre, the finder's width")


def measured(folder: Path, split: str, faces: FaceReader, sure: float) -> tuple[list, list, list, list]:
    """The finder's boxes' offsets and widths (label widths), each box's [right, wrong] and sure
    tally (``BOXES``' order), and a line for each die read right and sure at the label's box
    and not at the finder's."""
    region = ReaderSettings().region
    fusion = FusionSettings()
    offsets, widths, tallies, lost = [], [], [[0, 0] for _ in BOXES], []
    for photo in list_photos(folder, split):
        image = load_image(photo.image_path)
        found = finder_dice(image, region, fusion)
        truth = read_labels(photo.label_path, image.shape[1], image.shape[0])
        for i, j in match_dice([(*f.center, f.width / 2) for f in found], truth):
            peak, label, width = found[i], truth[j], max(truth[j].size)
            offsets.append(math.dist(peak.center, label.center) / width)
            widths.append(peak.width / width)
            boxes = [(peak.center, peak.width), (label.center, width), (peak.center, width),
                     (label.center, peak.width)]
            readings = faces.read(image, [NetDie(c, w, 1.0, 1, 1.0) for c, w in boxes])
            sure_of = [r.face_probability >= sure for r in readings]
            right = [s and r.face == label.face for r, s in zip(readings, sure_of, strict=True)]
            for tally, is_sure, is_right in zip(tallies, sure_of, right, strict=True):
                tally[0] += is_right
                tally[1] += is_sure and not is_right
            if right[1] and not right[0]:
                lost.append(f"{photo.name} ({label.center[0]:.0f},{label.center[1]:.0f}) {label.face}: "
                            f"off {offsets[-1]:.2f}, width {widths[-1]:.2f}; the finder's box "
                            f"{readings[0].face} ({readings[0].face_probability:.2f})")
    return offsets, widths, tallies, lost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a labelled photo or render folder")
    parser.add_argument("--split", default="setaside",
                        help="the folder's split (default: setaside; all, for renders never trained on)")
    parser.add_argument("--faces", type=Path, help="a face reader file (default: the shipped one)")
    parser.add_argument("--sure", type=float, default=0.95,
                        help="the belief, in both views, counted as sure (default: 0.95)")
    parser.add_argument("--list", action="store_true",
                        help="name each die read right and sure at the label's box, not at the finder's")
    args = parser.parse_args(argv)
    try:
        faces = FaceReader(args.faces) if args.faces else shipped_face_reader()
        offsets, widths, tallies, lost = measured(args.folder, args.split, faces, args.sure)
    except UserError as exc:  # a missing or spoilt reader, picture or label file, named
        print(f"face_reader_boxes: {exc}", file=sys.stderr)
        return 1
    if not offsets:
        print(f"{args.folder}: the finder found none of the labelled dice of split {args.split}",
              file=sys.stderr)
        return 1
    print(f"{len(offsets)} labelled dice found; the finder's box off the label's centre (label widths) "
          f"median {np.median(offsets):.2f}, 90th percentile {np.percentile(offsets, 90):.2f}, "
          f"99th {np.percentile(offsets, 99):.2f}; as wide, 5th to 95th percentile "
          f"{np.percentile(widths, 5):.2f} to {np.percentile(widths, 95):.2f}")
    for box, (right, wrong) in zip(BOXES, tallies, strict=True):
        print(f"{box}: {right} right and sure, {wrong} wrong and sure")
    if args.list:
        for line in lost:
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
