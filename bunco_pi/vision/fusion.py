"""Two readers, one verdict: the pip reader and the dice network each read the frame.

The pip reader (``reader.py``) knows nothing of any photos: it counts pips and checks where
they lie, so it reads dice it has never seen, but it doubts or misses a die whose pips are
blurred, and it cannot find a die whose pips it cannot see. The network (``net.py``) learned
from renders of dice of every colour and from real photos: it finds dice by their whole look,
blurred pips included, and says when a die cannot be read (cocked, cut, under a hand), but it
may be wrong in ways nobody can foresee on a tray unlike anything it saw.

So each covers the other's weakness, and neither overrules the other when both are sure
(until the two networks that look again both are, below):

- the network sure a die cannot be read (``unclear``): not sure, whatever the pips say;
- both read a die alike, either sure: sure;
- each sure of a different face, the network leaning (``objection``) to another face than
  a sure pip count, or sure against a doubtful one: no face (``unsure: two readings``);
- a die the pip reader found cocked (``tilted``: every pip squashed) stays not sure;
- the pip reader sure, the network with no opinion: the pip reading; the network seeing no
  die there: the pip reading, or not sure (``pips_need_net``);
- the pip reader with no face (or a count it hardly believes), the network sure: the
  network's face, except for dice calibrated as having light pips (``net_over_doubt``);
- a die only the network found: the network's face if it is very sure, else a die that is
  not sure (it still counts as a die, so a roll is never made of the others alone).

Then the face reader (``face_reader.py``) is shown each die the two scored, cut from the
network's box round it, and a die it is sure cannot be read is refused ("seen from the
side"): seen from low down, a die's front face is more nearly face-on than its top, and the
first look reads it, sure, as a top seen from above; the face reader was taught that view.
A die it is all but sure is another face than the one scored is disputed ("two readings"),
unless the network's first look is sure of the face scored.

When the two leave a die unscored, or see none, the tray can be looked at once more
(``again``): a second network trained with renders of coloured dice (the finder) finds the
dice, each is cut out and read by the face reader (``face_reader.py``), and a die is scored
only if the face reader, reading it twice, and the finder agree (or the face reader is all but
certain and the finder names no other face), and no refusal, "cannot be read", or (unless
they agree and the face reader is all but certain: ``again_overrule``) dispute or pip count
of another face stands against them. Where they look, a die the first look scored that they
agree is another face is no longer sure: two readings; and a die only the pip reader saw, left
unscored with nothing said against it, that the finder sees nothing of, is no die (a speck).

Dice of known colours (calibrated or learned) are read twice so, in the grey their colours
map to (``look.to_grey``) and in the frame's own colours, and the two made one
(``in_both_pictures``).

The thresholds were chosen with ``scripts/tune_fusion.py`` on the set-aside fifth of the
training photos (never on the held-out photos): the fewest dice wrong and sure first, then
the most dice right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from bunco_pi.vision.face_reader import FaceReader, shipped_face_reader
from bunco_pi.vision.look import to_grey
from bunco_pi.vision.net import (
    BIG,
    INPUT_WIDTH,
    ONE_LOOK,
    DiceNet,
    NetDie,
    NetInputs,
    as_frame_reading,
    detect,
    detect_larger,
    look_again,
    shipped_finder,
)
from bunco_pi.vision.reader import ReaderSettings, read_pips
from bunco_pi.vision.reading import DieReading, FrameReading, closest_pairs, in_reading_order, same_dice

# What looking again leaves as it is: a die seen cocked, hidden or cut, seen from the side, or
# read as two faces (this last unless the finder and the face reader overrule it).
DISPUTED = "unsure: two readings"  # the readers name two faces
UNREADABLE = ("tilted", "cocked or hidden", "seen from the side")  # a die to re-roll
REFUSED = (*UNREADABLE, DISPUTED)
# A peak of the finder nearer a die than this share of their two half-widths is on that die,
# not a die of its own: dice lying side by side are a whole sum of half-widths apart (at the
# whole sum, a die touching a read die in a crowded tray was never looked at).
ON_THE_DIE = 0.7
# The finder's boxes are often wider than its dice's labels (in a heap of 84 real dice, up to
# 35 pixels round dice of 19 to 29), so dice touching in a heap can lie under 0.7 of the wider
# box's width apart: at ``net.APART`` (0.7) one of two such dice was not seen.
FINDER_APART = 0.6
Looked = tuple[NetDie, NetDie]  # a die as a network found it, and as the face reader read it


@dataclass(frozen=True)
class FusionSettings:
    seen: float = 0.5  # a peak of the network's heat map this high is a die
    sure: float = 0.98  # the network is sure of a face this probable
    sure_alone: float = 0.97  # ... of a die the pip reader did not find at all
    claim: float = 0.25  # a pip count this confident, though doubtful, is still a claim
    objection: float = 0.3  # a network face this probable, though not sure, stands against a count
    # ... and a face the network's second look (turned) names this probably, against a count of
    # the face its first look named: one view of two, the other backing the count, so it must
    # be believed more than a face both views name
    turned_objection: float = 0.7
    unclear: float = 0.5  # the network this sure a die cannot be read: it is not read
    # The network's sure face stands for a die whose pips the pip reader saw but could not
    # read. Not for dice calibrated as having light pips: there a glint is as white as a pip
    # (tests/test_dice_colours.py's pink dice under glare), so the pip reader's doubt stands.
    net_over_doubt: bool = True
    # A die only the pip reader found (the network saw no die there) is not sure: on trays and
    # dice unlike the white-dice desk the pip reader alone counts side faces and specks.
    pips_need_net: bool = True
    # The pip reader looks only round the places the network saw something (a peak this
    # high, in a circle this many box widths across): a speckled floor's thousands of dark
    # spots elsewhere cost nothing, and a die the network missed entirely leaves the roll
    # a die short, which is never scored. False: the pip reader searches the whole tray.
    pips_near_net: bool = True
    glance: float = 0.3
    window: float = 0.9
    # The network reads each die it is sure of a second time, turned a quarter, and keeps
    # the lesser belief (``net.look_again``): a wrong face it is sure of at one angle only.
    second_look: bool = True
    # Look again at the dice left unscored (``read_again``): the finder's peak this high is a
    # die, the face reader this sure and the finder this sure of the same face score it; the
    # face reader alone scores it when it is as sure as ``again_alone`` and the finder is not
    # ``again_object`` sure of another face. A die only the finder found counts as a die, read
    # or not, from a peak of ``again_count``; below it only if read. It was the network's
    # ``seen``, 0.5, until specks only the pip reader saw stopped no more rolls
    # (``_still_a_die``): the finder's fainter dice then let a tray with a die too many be
    # scored. At 0.4, of the tuning sets' 477 pictures read as a roll of one die fewer than
    # they hold, 21 are scored where 32 were, and 86 of 114 rolls of three read right where 77
    # were (docs/dice-camera.md, step 8b). On by default: it read 2.5 times as many of the coloured
    # set-aside dice, as many of the white and none more wrong, and costs nothing where the
    # first look scored every die. False: the first look alone (the reader "first"). The
    # thresholds below were chosen with the face reader trained on the mended renders
    # (docs/dice-camera.md, "The face reader trained from scratch on the mended renderer").
    # The objection was 0.5 until a die beside the tray was refused by the tray's region
    # rather than by the finder's doubt (docs/dice-camera.md, "A die beside the tray is kept
    # out by the tray"): between 0.5 and 0.9 it kept no die of the tuning sets from being
    # read wrong, and it kept 12 from being read right. The face reader's bars with the finder
    # (``again_sure``) and alone (``again_alone``) were 0.95 and 0.99 until it was trained on
    # with fewer dice it cannot read (docs/dice-camera.md, "The face reader trained on with
    # fewer dice it cannot read"): surer of the dice it can read, it read 3 of the tuning sets'
    # dice wrong at those and 1 at these.
    again: bool = True
    again_seen: float = 0.2
    again_sure: float = 0.97
    again_agree: float = 0.7
    again_alone: float = 0.995
    again_object: float = 0.9
    again_count: float = 0.4
    # Where the first look scored every die of a roll, the finder could still look, alone, and a
    # die it sees this surely where the reading has none would be a die more, unscored
    # (``with_dice_more``): a tray holding a die too many is no roll. Measured and not shipped
    # (1.01: it does not look). At 0.5 it refused 5 more of the tuning sets' 303 trays read as a
    # roll of a die fewer than they hold, but 4 of those were photos of two dice read as a roll
    # of one and only one a roll of three with a fourth die (a negative photo); held out it
    # refused none more of three. It cost each throw the first look reads whole the finder's look
    # (a drawn white tray's frame three quarters more arithmetic, two thirds more time; the
    # held-out white photos' a fifth more), and at 0.5 a laptop key (0.52) refused a right roll,
    # where the highest peak beside white dice elsewhere was 0.46 (docs/dice-camera-experiments.md, step 8b).
    again_whole: float = 1.01
    # The finder and the face reader agreeing on a face (``again_agree``, ``again_sure``), the
    # face reader at least this sure, overrule the pip reader's count of another face and a
    # dispute of the first look and the pip reader ("unsure: two readings"); never a die the
    # pip reader saw cocked, nor one refused as cocked, hidden or seen from the side; nor for
    # dice calibrated as having light pips (a glint is a pip there, as for ``net_over_doubt``).
    # On the tuning sets it read 9 more dice (coloured photos' and renders'), all right, and
    # changed nothing on the low heaps, whose side views the face reader refuses far more
    # surely than the pip reader doubts them. 1.01: never. Since ``again_sure`` is 0.97 too, a
    # die the two networks agree on surely enough to be scored overrules a count as well.
    again_overrule: float = 0.97
    # Before looking again, the face reader reads each die the first look scored, cut from the
    # network's own box, and a die it is this sure cannot be read is refused ("seen from the
    # side"). Seen from low down, a die's front face is more nearly face-on to the camera than
    # its top: the first look reads the front face as a top seen from above, sure, and it is
    # the face reader that was taught that view (``scripts/train_die_faces.py --side``). Only
    # with ``again``: the reader "first" stays the first look alone. 1.01: no check. It was 0.9
    # until the face reader was trained on with fewer dice it cannot read: surer of every face,
    # it calls the side view of tests/fixtures/low/r970039 unreadable at 0.79 (0.965 before),
    # and at 0.9 that die was scored a 2 where a 3 lies. 0.7 reads the tuner's sets as 0.9 did.
    check: float = 0.7
    # The same reading of a scored die, this sure of another face than the one scored, makes
    # it "two readings" (looked at again as any disputed die), unless the first look is ``sure``
    # of the face scored: two readers against one. A plain white five from another rig, seen
    # from straight above, was scored 3: the pip reader counted three of its pips, and the
    # first look's objection was taken back by its own turned look, while the face reader read
    # the five at 0.997 (a two scored 1 at 0.994). The first look's backing keeps drawn dice
    # whose pip the face reader misses (a three read as a two at up to 0.9998) from being
    # disputed. On the tuner's sets every bar from 0.3 to 0.995 costs no die and reads 2 or 3
    # more right (disputed, then read again); on that rig's dice 83 pixels wide, 0.5 and 0.9
    # leave 6 and 2 right dice unread, 0.99 none (docs/dice-camera.md, "Single dice from
    # another rig"). 1.01: never.
    check_object: float = 0.99

    @property
    def checks_first_look(self) -> bool:
        """Whether the face reader reads the dice the first look scored (``check``,
        ``check_object``): only when looking again, so "first" stays the first look alone."""
        return self.again and min(self.check, self.check_object) <= 1


def read_both(
    frame: np.ndarray,
    settings: ReaderSettings | None = None,
    net: DiceNet | None = None,
    fusion: FusionSettings | None = None,
    finder: DiceNet | None = None,
    faces: FaceReader | None = None,
    dice: int | None = None,
) -> FrameReading:
    """The frame read by the pip reader and the network together, then, where they leave a
    die unscored, see none, or see fewer than the ``dice`` a roll has, by the finder and the
    face reader looking again (unless ``fusion.again`` is off).

    Dice of known colours (``settings.look``, calibrated or learned, other than plain grey)
    are read twice: in the grey picture their colours map to (``look.to_grey``), made for the
    pip reader, and in their own colours (``in_both_pictures``). The networks learned colour
    from renders and real photos, and the mapped picture hides it from them: on rendered and
    real coloured dice it read about half as many rolls right, some wrong and sure. The drawn
    trays' flat colours, which the mapping was made for, still need it. Each picture is read
    whole: reading the own colours by the finder and the face reader alone, to spare their
    first look, scored trays holding a die too many that the first look had seen
    (docs/dice-camera-experiments.md, "Dice of known colours, read twice").
    """
    settings = settings or ReaderSettings()
    fusion = fusion or FusionSettings()
    if settings.look is None or settings.look.plain_grey:
        return read_picture(frame, settings, net, fusion, finder, faces, dice)
    # Both whole: a roll in the mapped grey checked by the first look alone in the own colours
    # let a render's one read wrong and sure through, which the own colours' looking again
    # read right (docs/dice-camera-experiments.md, "Dice of known colours, read twice").
    looks = LooksAgain()  # both pictures look again at the one colour frame, alike
    mapped = read_picture(frame, settings, net, fusion, finder, faces, dice, looks)
    own = read_picture(frame, replace(settings, look=None), net, fusion, finder, faces, dice, looks)
    return in_both_pictures(own, mapped, settings.min_confidence, dice)


def in_both_pictures(
    own: FrameReading, mapped: FrameReading, min_confidence: float, dice: int | None = None
) -> FrameReading:
    """One reading of dice of known colours from its two: in their own colours (``own``) and
    in the mapped grey (``mapped``).

    The reading that is a roll a table would score (``sure_roll``) is taken, the own colours'
    when both are (or, with no ``dice`` to count, the one that saw more); with neither, the one
    that saw more dice, the mapped one on a tie. Then the other reading may object:

    - a sure die of it that the other is sure is another face is not sure (two readings);
    - a sure die of the own colours' roll that the mapped grey found unreadable (``tilted``,
      cocked or hidden, seen from the side) is refused as it said, as it was before there were
      two (the pips of coloured dice are seen there, a cocked die's squashed ones too). Not the
      other way: in the own colours the network takes drawn coloured dice for hidden ones, and
      a dispute is a doubt of the face, not that it can be read;
    - a die the own colours saw away from every die of the mapped grey's roll (farther than
      the two dice's half widths together: not the same die seen split or shifted) is added,
      not sure: the count is in doubt, a fourth die perhaps. Not the other way: the mapped grey
      makes dice of what is of the dice's colour (a side face, a patch of tray): counted, its
      extra dice stopped 10 rolls the own colours read right, on renders and real photos.
    """
    rolls = [r for r in (own, mapped) if sure_roll(r, min_confidence, dice)]
    taken = max(rolls or [mapped, own], key=lambda r: len(r.dice))
    other = mapped if taken is own else own
    pairs = dict(same_dice(taken.dice, other.dice))
    dice_now = list(taken.dice)
    for i, j in pairs.items():
        said, theirs = dice_now[i], other.dice[j]
        if not _sure(said, min_confidence):
            continue
        if other is mapped and theirs.problem in UNREADABLE and not _sure(theirs, min_confidence):
            dice_now[i] = replace(said, face=None, confidence=0.0, problem=theirs.problem)
        elif _sure(theirs, min_confidence) and theirs.face != said.face:
            dice_now[i] = replace(said, face=None, confidence=0.0, problem=DISPUTED)
    paired = set(pairs.values())
    dice_now += [
        DieReading(None, 0.0, b.center, b.radius, "unsure: one reading")
        for j, b in enumerate(other.dice)
        if other is own and j not in paired
        and all(math.dist(a.center, b.center) > a.radius + b.radius for a in taken.dice)
    ]
    if dice_now == list(taken.dice):
        return taken
    return FrameReading(tuple(sorted(dice_now, key=lambda d: (d.center[1], d.center[0]))))


def _sure(die: DieReading, min_confidence: float) -> bool:
    return die.face is not None and die.confidence >= min_confidence


def sure_roll(reading: FrameReading, min_confidence: float, dice: int | None = None) -> bool:
    """Whether a reading is one a table would score: dice seen, every one sure, and as many as
    the roll's ``dice`` (when given)."""
    return (not left_unscored(reading, min_confidence, dice)
            and (dice is None or len(reading.dice) == dice))


class LooksAgain:
    """The finder's and the face reader's look at a frame (``look_for_more``), made once for
    every reading of it that looks again. They look at the colour frame whatever picture the
    first look read: dice of known colours are read in two pictures, and in three of four
    such frames of the renders and photos both pictures looked again, alike, at the cost of
    a finder's look and the face reader's reads each. Make one per frame."""

    def __init__(self) -> None:
        # each look kept with its frame, so that no frame's ``id`` can be another's meanwhile
        self._made: dict[tuple, tuple[np.ndarray, list]] = {}

    def found(
        self, frame: np.ndarray, region: tuple[float, float, float, float], fusion: FusionSettings,
        finder: DiceNet | None, inputs: NetInputs, zoom_out: bool,
    ) -> list[NetDie]:
        """The finder's look alone (``finder_dice``)."""
        key = ("found", id(frame), tuple(region), fusion.again_seen, zoom_out, id(finder))
        if key not in self._made:
            self._made[key] = (frame, finder_dice(frame, region, fusion, finder, inputs, zoom_out))
        return self._made[key][1]

    def looked(
        self, frame: np.ndarray, region: tuple[float, float, float, float], fusion: FusionSettings,
        finder: DiceNet | None, faces: FaceReader | None, inputs: NetInputs, zoom_out: bool,
    ) -> list[Looked]:
        """The finder's look, and the face reader's reading of each die it found."""
        key = (id(frame), tuple(region), fusion.again_seen, fusion.seen, zoom_out, id(finder), id(faces))
        if key not in self._made:
            found = self.found(frame, region, fusion, finder, inputs, zoom_out)
            self._made[key] = (frame, look_for_more(frame, region, fusion, finder, faces, inputs,
                                                    zoom_out, found))
        return self._made[key][1]


def read_picture(
    frame: np.ndarray,
    settings: ReaderSettings,
    net: DiceNet | None = None,
    fusion: FusionSettings | None = None,
    finder: DiceNet | None = None,
    faces: FaceReader | None = None,
    dice: int | None = None,
    looks: LooksAgain | None = None,
) -> FrameReading:
    """``read_both`` in one picture: the frame's own colours with no ``settings.look``, else
    the grey its colours map to (the networks are shown it too). ``looks``: the looks again
    at this frame made so far, shared with its other picture."""
    fusion = fusion or FusionSettings()
    if settings.look is not None and settings.look.pips == "light":
        # Calibrated light pips: a glint is as white as a pip, so the pip reader's doubt
        # stands, and the network is shown the mapped grey, where a turned crop of a glint
        # is no second opinion (it left two pink dice under glare of 102 unread); nor do the
        # finder and the face reader outweigh its count.
        fusion = replace(fusion, net_over_doubt=False, second_look=False, again_overrule=1.01)
    inputs = NetInputs()  # the first look and the finder see the frame alike: shrunk once
    pips, found = both_readings(frame, settings, net, fusion, inputs)
    reading = combine(pips, found, settings.min_confidence, fusion)
    if fusion.checks_first_look:
        scored = [found[j] for j in _scored(reading, found, settings.min_confidence)]
        checked = list(zip(scored, (faces or shipped_face_reader()).read(frame, scored), strict=True))
        reading = refuse_side_views(reading, checked, settings.min_confidence, fusion)
    if not fusion.again:
        return reading
    looks = looks or LooksAgain()
    zoom_out = dice_may_be_big(settings)
    if not left_unscored(reading, settings.min_confidence, dice):
        if fusion.again_whole > 1 or (dice is not None and len(reading.dice) > dice):
            return reading  # not asked to look, or a die too many already
        return with_dice_more(reading, looks.found(frame, settings.region, fusion, finder, inputs, zoom_out),
                              fusion)
    looked = looks.looked(frame, settings.region, fusion, finder, faces, inputs, zoom_out)
    return read_again(reading, pips, looked, settings.min_confidence, fusion, found)


# How much wider than the tray's measured die width a die's box may be: a calibration measures
# a die's side, and a die turned on the tray has a box up to 1.4 times that; a die nearer the
# camera, or a width measured a little small, takes the rest.
WIDER = 2.0


def dice_may_be_big(settings: ReaderSettings) -> bool:
    """Whether a die may be too large for one look of the finder, so that it must look at half
    the scale too (``net.detect``'s ``zoom_out``): unless the tray's die width is known
    (calibrated or learned by rolling) and ``WIDER`` times it, at the network's scale, is under
    ``net.ONE_LOOK``. The look at half the scale is a fifth of the finder's arithmetic."""
    if settings.die_width is None:
        return True
    return WIDER * settings.die_width * INPUT_WIDTH / settings.working_width >= ONE_LOOK


def refuse_side_views(
    reading: FrameReading, checked: list[Looked], min_confidence: float, fusion: FusionSettings,
) -> FrameReading:
    """The reading with each scored die refused ("seen from the side") that the face reader,
    shown the first look's box round it (``checked``: the network's die and the face reader's
    reading of it), is ``fusion.check`` sure cannot be read; and disputed ("two readings")
    where it is ``fusion.check_object`` sure of another face and the network is not ``sure``
    of the face scored."""
    dice = list(reading.dice)
    found = [die for die, _ in checked]
    for j, i in _scored(reading, found, min_confidence).items():
        network, read = checked[j]
        backed = network.face == dice[i].face and network.face_probability >= fusion.sure
        if read.unclear >= fusion.check:
            dice[i] = replace(dice[i], face=None, confidence=0.0, problem="seen from the side")
        elif read.face != dice[i].face and read.face_probability >= fusion.check_object and not backed:
            dice[i] = replace(dice[i], face=None, confidence=0.0, problem=DISPUTED)
    return FrameReading(tuple(dice))


def _scored(reading: FrameReading, found: list[NetDie], min_confidence: float) -> dict[int, int]:
    """The network's dice at the place of a die the reading scored -> that die's index (paired
    among the scored dice alone, so an unscored die beside one never takes its network die)."""
    scored = [i for i, d in enumerate(reading.dice) if d.face is not None and d.confidence >= min_confidence]
    pairs = _pairs(tuple(reading.dice[i] for i in scored), found)
    return {j: scored[k] for k, j in pairs.items()}


def left_unscored(reading: FrameReading, min_confidence: float, dice: int | None = None) -> bool:
    """Whether a die was seen but not scored, none was seen, or fewer than the ``dice`` a roll
    has: only then is it worth the two more networks' time to look again. (Without ``dice``, a
    die both readers missed beside dice they scored is not looked for: the roll is a die
    short, which is never scored.)"""
    return (not reading.dice or (dice is not None and len(reading.dice) < dice)
            or any(d.face is None or d.confidence < min_confidence for d in reading.dice))


def finder_dice(
    frame: np.ndarray, region: tuple[float, float, float, float], fusion: FusionSettings,
    finder: DiceNet | None = None, inputs: NetInputs | None = None, zoom_out: bool = True,
) -> list[NetDie]:
    """The finder's dice in the colour frame, from a peak of ``again_seen`` (``zoom_out``: it
    looks at half the scale too, for dice too large for one look); two of its peaks
    ``FINDER_APART`` of a box width apart are two dice."""
    return detect(frame, finder or shipped_finder(), fusion.again_seen, region, zoom_out=zoom_out,
                  inputs=inputs, apart=FINDER_APART)


def look_for_more(
    frame: np.ndarray, region: tuple[float, float, float, float], fusion: FusionSettings,
    finder: DiceNet | None = None, faces: FaceReader | None = None, inputs: NetInputs | None = None,
    zoom_out: bool = True, found: list[NetDie] | None = None,
) -> list[Looked]:
    """The finder's dice in the colour frame (``found``, if it has looked already), each with
    the face reader's reading of it. With ``zoom_out``, its dice too large for those looks
    replace what it found on them (``with_larger_dice``)."""
    if found is None:
        found = finder_dice(frame, region, fusion, finder, inputs, zoom_out)
    if zoom_out:
        larger = detect_larger(frame, finder or shipped_finder(), fusion.seen, region, inputs)
        found = with_larger_dice(found, larger, fusion, frame.shape[1])
    return list(zip(found, (faces or shipped_face_reader()).read(frame, found), strict=True))


def with_larger_dice(
    found: Sequence[NetDie], larger: Sequence[NetDie], fusion: FusionSettings, width: int,
) -> list[NetDie]:
    """The finder's dice (``found``, in a frame ``width`` pixels wide) with each of its
    ``larger`` dice (``net.detect_larger``) in place of the dice found on it, unless one of
    those, narrower than ``BIG`` at the working width, is seen as surely as the first look's
    ``seen``: then it is a heap of dice of a size the finder knows, not one die. (The finder's
    look at half the scale sees parts of a die that large, wider than ``BIG`` and up to 0.51
    sure: they are no heap.) A plain white die filling a third of the frame (another rig's
    photos) was read as a one, sure, from one of its pips."""
    kept = list(found)
    for die in larger:
        on_it = [math.dist(f.center, die.center) < 0.7 * die.width for f in kept]
        heap = any(f.presence >= fusion.seen and f.width * INPUT_WIDTH / width < BIG
                   for f, on in zip(kept, on_it, strict=True) if on)
        if not heap:
            kept = [f for f, on in zip(kept, on_it, strict=True) if not on] + [die]
    return kept


def read_again(
    reading: FrameReading, pips: FrameReading, looked: list[Looked], min_confidence: float,
    fusion: FusionSettings, found: Sequence[NetDie],
) -> FrameReading:
    """The reading with each die it left unscored (or missed) scored where the finder and the
    face reader agree, or the face reader is all but certain (``_vote``). It adds readings:
    a die refused (cocked, hidden, seen from the side) or whose pips were seen squashed is
    left as it is; a die in dispute, or counted as another face (``pips``, the pip reader's own
    reading), is left as it is unless the two ``_overrule`` the count; and a scored die keeps
    its face unless the two agree it is another face, which leaves it not sure.

    And it takes one kind away: a die the pip reader alone found (none of the first look's
    network dice, ``found``, is there), left unscored with nothing said against it (no
    refusal, no dispute), that the finder does not see at all (no peak of ``again_seen``
    there) is no die: a speck, a pip of a side face or a patch of tray taken for one, which
    stopped a roll as a die too many ("saw 4 dice"). A die a network saw always counts."""
    seen = [f for f, _ in looked] + list(found)
    dice = [d for d in reading.dice if _still_a_die(d, seen, min_confidence)]
    pairs = {j: i for i, j in _pairs(tuple(dice), [f for f, _ in looked]).items()}
    for j, (first, again) in enumerate(looked):
        i = pairs.get(j)
        if i is not None and dice[i].face is not None and dice[i].confidence >= min_confidence:
            if _agree_surely(first, again, min_confidence, fusion) and again.face != dice[i].face:
                # the two agree, as surely as scores a die, on another face than the first
                # look scored: two readings (a die seen low from the side, whose front face the
                # pip reader counted while the network's first look was in doubt)
                dice[i] = replace(dice[i], face=None, confidence=0.0, problem=DISPUTED)
            continue
        if _pips_stand(pips, first, again, min_confidence, fusion):
            continue
        if i is None:
            if any(_on(first, d) for d in dice):
                continue  # a second peak on a die already there, not a die of its own
            new = DieReading(None, 0.0, first.center, first.width / 2, "unclear pips")
            voted = _vote(new, first, again, min_confidence, fusion)
            if voted.face is not None or first.presence >= fusion.again_count:
                dice.append(voted)
            continue
        die = dice[i]
        overruled = die.problem == DISPUTED and _overrule(first, again, min_confidence, fusion)
        if die.problem in REFUSED and not overruled:
            continue
        dice[i] = _vote(die, first, again, min_confidence, fusion)
    return in_reading_order(dice)


def with_dice_more(reading: FrameReading, found: Sequence[NetDie], fusion: FusionSettings) -> FrameReading:
    """A reading that scored every die of a roll, with a die more, unscored, wherever the
    finder (``found``) sees one as surely as ``again_whole`` where the reading has none: a
    tray holding a die too many, one die of which the first look missed, is no roll."""
    dice = list(reading.dice)
    for f in sorted(found, key=lambda f: -f.presence):
        # a second peak on a die already there, or on one just added, is not a die of its own
        if f.presence >= fusion.again_whole and not any(_on(f, d) for d in dice):
            dice.append(DieReading(None, 0.0, f.center, f.width / 2, "unclear pips"))
    if len(dice) == len(reading.dice):
        return reading
    return in_reading_order(dice)


def _still_a_die(die: DieReading, seen: Sequence[NetDie], min_confidence: float) -> bool:
    """Whether a die of the first look stands when the finder has looked again: one it scored,
    one refused or in dispute (what was said against scoring it stands), or one a network
    sees (``seen``: the first look's dice and the finder's)."""
    return _sure(die, min_confidence) or die.problem in REFUSED or any(_on(n, die) for n in seen)


def _on(network_die: NetDie, die: DieReading) -> bool:
    """Whether a network's die lies on a die of the reading: nearer than ``ON_THE_DIE`` of
    their two half widths (a die beside it is a whole sum away)."""
    return math.dist(network_die.center, die.center) < ON_THE_DIE * (die.radius + network_die.width / 2)


def _agree_surely(first: NetDie, again: NetDie, min_confidence: float, fusion: FusionSettings) -> bool:
    """The finder and the face reader name one face, each as surely as it takes to score a die."""
    return (first.face == again.face and first.face_probability >= fusion.again_agree
            and again.face_probability >= max(fusion.again_sure, min_confidence))


def _overrule(first: NetDie, again: NetDie, min_confidence: float, fusion: FusionSettings) -> bool:
    """The finder and the face reader agree on a face so surely that a count of another face,
    or a dispute of the first look and the pip reader, gives way to them."""
    return (_agree_surely(first, again, min_confidence, fusion)
            and again.face_probability >= fusion.again_overrule)


def _pips_stand(pips: FrameReading, first: NetDie, again: NetDie, min_confidence: float,
                fusion: FusionSettings) -> bool:
    """The pip reader saw this die cocked, or counted another face on it: no vote of the two
    networks outweighs that, unless they ``_overrule`` a count (``combine`` may have left such
    a die with no face and a reason)."""
    near = [d for d in pips.dice if math.dist(d.center, first.center) <= max(d.radius, first.width / 2)]
    if not near:
        return False
    die = min(near, key=lambda d: math.dist(d.center, first.center))
    counted = die.face is not None and die.face != again.face and die.confidence >= fusion.claim
    return die.problem == "tilted" or (counted and not _overrule(first, again, min_confidence, fusion))


def _vote(die: DieReading, first: NetDie, again: NetDie, min_confidence: float,
          fusion: FusionSettings) -> DieReading:
    if max(first.unclear, again.unclear) >= fusion.unclear:
        return replace(die, face=None, confidence=0.0, problem="cocked or hidden")
    objected = first.face != again.face and first.face_probability >= fusion.again_object
    alone = again.face_probability >= max(fusion.again_alone, min_confidence) and not objected
    if _agree_surely(first, again, min_confidence, fusion) or alone:
        return replace(die, face=again.face, confidence=again.face_probability, problem="")
    return die


def both_readings(
    frame: np.ndarray, settings: ReaderSettings, net: DiceNet | None = None,
    fusion: FusionSettings | None = None, inputs: NetInputs | None = None,
) -> tuple[FrameReading, list[NetDie]]:
    """What each reader makes of the frame: the pip reader its grey picture (``look.to_grey``),
    the network the colours (or, for calibrated coloured dice, the same grey picture).
    The network's dice are those it is sure are there (``seen``)."""
    fusion = fusion or FusionSettings()
    height, width = frame.shape[:2]
    shrink = settings.working_width / width
    if frame.ndim == 3 and shrink < 1 and not (settings.look is None or settings.look.plain_grey):
        # Colours mapped at the pip reader's working width (the network works smaller still):
        # mapping every pixel of a large frame costs more than both readers.
        small = cv2.resize(frame, (settings.working_width, max(1, round(height * shrink))),
                           interpolation=cv2.INTER_AREA)
        pips, found = both_readings(small, settings, net, fusion, inputs)
        return _scaled(pips, 1 / shrink), [
            replace(d, center=(d.center[0] / shrink, d.center[1] / shrink), width=d.width / shrink)
            for d in found
        ]
    grey = to_grey(frame, settings.look)
    # Dice whose colours calibration measured are shown to the network as the pip reader sees
    # them (faces bright, pips and tray dark): the picture it knows best. Uncalibrated, it
    # reads the colours itself.
    calibrated = settings.look is not None and not settings.look.plain_grey
    seen_by_net = grey if calibrated else frame
    glanced = detect(seen_by_net, net, min(fusion.glance, fusion.seen), settings.region, inputs=inputs)
    near = None
    if fusion.pips_near_net:
        near = [(*d.center, fusion.window * d.width) for d in glanced]
    pips = read_pips(grey, settings, near)
    found = [d for d in glanced if d.presence >= fusion.seen]
    if fusion.second_look:
        found = [look_again(seen_by_net, d, net) if d.face_probability >= fusion.objection else d
                 for d in found]
    return pips, found


def first_readings(frame: np.ndarray, settings: ReaderSettings) -> tuple[FrameReading, FrameReading]:
    """The pip reader's reading and the network's own from one run of the network, as the first
    look makes them: the pip reader reads only round the dice the network glanced at, so a
    carpet's thousands of dark spots elsewhere cost nothing; the network's dice are those
    ``net.read_net`` finds (its faces and places; a frame wider than the working width, with
    colours to map, is mapped at that width first, as ``both_readings`` does, so the beliefs
    differ by a little there). What a throw is checked with while a table learns its dice
    (``learn.study``)."""
    pips, found = both_readings(frame, settings, fusion=FusionSettings(second_look=False))
    return pips, as_frame_reading(found)


def _scaled(reading: FrameReading, factor: float) -> FrameReading:
    return FrameReading(tuple(
        replace(d, center=(d.center[0] * factor, d.center[1] * factor), radius=d.radius * factor)
        for d in reading.dice
    ))


def combine(
    pips: FrameReading, found: list[NetDie], min_confidence: float, fusion: FusionSettings
) -> FrameReading:
    pairs = _pairs(pips.dice, found)
    dice: list[DieReading] = []
    for i, die in enumerate(pips.dice):
        j = pairs.get(i)
        if j is None and fusion.pips_need_net and die.face is not None:
            dice.append(DieReading(None, 0.0, die.center, die.radius, "unsure: one reading"))
            continue
        if j is not None and found[j].unclear >= fusion.unclear:
            dice.append(DieReading(None, 0.0, die.center, die.radius, "cocked or hidden"))
            continue
        dice.append(die if j is None else _agree(die, found[j], min_confidence, fusion))
    paired = set(pairs.values())
    for j, other in enumerate(found):
        if j in paired:
            continue
        if other.unclear >= fusion.unclear:
            dice.append(DieReading(None, 0.0, other.center, other.width / 2, "cocked or hidden"))
        elif other.face_probability >= fusion.sure_alone:
            dice.append(DieReading(other.face, other.face_probability, other.center, other.width / 2))
        else:
            dice.append(DieReading(None, 0.0, other.center, other.width / 2, "unclear pips"))
    return in_reading_order(dice)


def _agree(die: DieReading, other: NetDie, min_confidence: float, fusion: FusionSettings) -> DieReading:
    if die.problem == "tilted":
        return die  # a cocked die (every pip seen squashed) is re-rolled, whatever its face
    net_sure = other.face_probability >= fusion.sure
    pip_sure = die.face is not None and die.confidence >= min_confidence
    pip_claim = die.face is not None and die.confidence >= fusion.claim
    # the network's turned second look named a face other than the count: the first look's
    # naming the count's face is no backing then, and the turned face, if believed, stands
    # against a count the pip reader is not all but certain of (``sure``, the network's own
    # bar, reused: a certain count outweighs one view of two; turned, the network took a clear
    # three's diagonal for a two on drawn trays under glare)
    turned_objects = (other.turned_face is not None and other.turned_face != die.face
                      and other.turned_probability >= fusion.turned_objection
                      and die.confidence < fusion.sure)
    if die.face == other.face and not turned_objects:
        if pip_sure or net_sure:
            return DieReading(die.face, max(die.confidence, other.face_probability), die.center, die.radius)
        return die
    net_objects = (other.face != die.face and other.face_probability >= fusion.objection) or turned_objects
    if pip_sure and net_objects or pip_claim and net_sure:
        return DieReading(None, 0.0, die.center, die.radius, DISPUTED)
    if net_sure and fusion.net_over_doubt:
        return DieReading(other.face, other.face_probability, die.center, die.radius)
    return die


def _pairs(dice: tuple[DieReading, ...], found: list[NetDie]) -> dict[int, int]:
    """A reading's dice -> network dice at the same place (closest first, each used once)."""
    candidates = []
    for i, die in enumerate(dice):
        for j, other in enumerate(found):
            distance = math.dist(die.center, other.center)
            if distance <= max(die.radius, other.width / 2):
                candidates.append((distance, i, j))
    return dict(closest_pairs(candidates))
