"""Two readers, one verdict: every way the pip reader and the network can agree or not."""

from dataclasses import replace

import cv2
import pytest
from drawn_dice import draw_tray

from bunco_pi.vision.dataset import read_labels
from bunco_pi.vision.fusion import FusionSettings, combine, read_both
from bunco_pi.vision.net import NetDie
from bunco_pi.vision.reader import read_pips
from bunco_pi.vision.reading import DieReading, FrameReading
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge

RULES = FusionSettings(seen=0.5, sure=0.9, sure_alone=0.97, claim=0.25, objection=0.5, pips_need_net=False)


def pip(face, confidence=0.9, at=(100.0, 100.0), problem=""):
    return DieReading(face, confidence, at, 25.0, problem)


def net(face, probability=0.99, at=(102.0, 98.0), presence=0.95):
    return NetDie(at, 40.0, presence, face, probability)


def one(pips, found):
    reading = combine(FrameReading(tuple(pips)), list(found), 0.5, RULES)
    return reading.dice


def test_both_sure_and_alike_is_sure():
    (die,) = one([pip(4, 0.6)], [net(4, 0.99)])
    assert (die.face, die.confidence) == (4, pytest.approx(0.99))


def test_both_sure_and_different_is_not_sure():
    (die,) = one([pip(3)], [net(2)])
    assert die.face is None and die.problem == "unsure: two readings"


def test_a_sure_pip_reading_stands_when_the_network_has_no_opinion():
    (die,) = one([pip(5, 0.8)], [net(6, probability=0.45)])
    assert (die.face, die.confidence) == (5, 0.8)


def test_a_network_leaning_to_another_face_makes_a_sure_pip_reading_doubtful():
    (die,) = one([pip(3, 1.0)], [net(2, probability=0.58)])  # a two and a side pip, as a three
    assert die.face is None and die.problem == "unsure: two readings"


def test_a_sure_pip_reading_stands_where_the_network_sees_nothing():
    (die,) = one([pip(1, 0.7)], [])
    assert (die.face, die.confidence) == (1, 0.7)


def test_a_die_only_the_pip_reader_found_can_be_made_to_need_the_network():
    strict = replace(RULES, pips_need_net=True)
    (die,) = combine(FrameReading((pip(1, 0.7),)), [], 0.5, strict).dice
    assert die.face is None and die.problem == "unsure: one reading"
    (die,) = combine(FrameReading((pip(1, 0.7),)), [net(1)], 0.5, strict).dice
    assert die.face == 1


def test_the_network_reads_a_die_whose_pips_could_not_be_counted():
    (die,) = one([pip(None, 0.0, problem="unclear pips")], [net(6)])
    assert die.face == 6 and die.confidence >= 0.9
    assert die.center == (100.0, 100.0)  # the pip reader's place


def test_with_light_pips_the_network_does_not_read_a_die_the_pip_reader_doubts():
    # A glint is as white as a white pip: the pip reader's doubt stands, the agreement counts.
    rules = replace(RULES, net_over_doubt=False)
    unclear = FrameReading((pip(None, 0.0, problem="unclear pips"),))
    (die,) = combine(unclear, [net(4)], 0.5, rules).dice
    assert die.face is None and die.problem == "unclear pips"
    (die,) = combine(FrameReading((pip(4, 0.3),)), [net(4)], 0.5, rules).dice
    assert die.face == 4 and die.confidence >= 0.9


def test_a_die_the_network_finds_unreadable_is_not_sure_whatever_the_pips_say():
    # Cocked on its neighbour, cut by the tray's rim, half under a hand: its pips may still
    # look like a face (the side it leans on), so the pip reader alone would score it.
    (die,) = one([pip(4, 1.0)], [replace(net(4, 0.3), unclear=0.65)])
    assert die.face is None and die.problem == "cocked or hidden"
    (die,) = one([], [replace(net(2, 0.2), unclear=0.8)])  # a die only the network found
    assert die.face is None and die.problem == "cocked or hidden"
    (die,) = one([pip(4, 1.0)], [replace(net(4, 0.6), unclear=0.35)])  # a doubt, not a refusal
    assert die.face == 4


def test_read_both_keeps_the_pip_readers_doubt_for_dice_with_light_pips(monkeypatch):
    from bunco_pi.vision import fusion
    from bunco_pi.vision.look import DiceLook
    from bunco_pi.vision.reader import ReaderSettings

    seen = []
    monkeypatch.setattr(fusion, "combine", lambda p, f, c, rules: seen.append(rules))
    frame = draw_tray([(2, 200, 200, 0)])
    fusion.read_both(frame, ReaderSettings(look=DiceLook((170, 80, 20), (245, 245, 245))))
    fusion.read_both(frame, ReaderSettings(look=DiceLook((60, 150, 30), (20, 20, 20))))
    fusion.read_both(frame, ReaderSettings())
    assert [rules.net_over_doubt for rules in seen] == [False, True, True]


def test_read_both_gives_the_network_the_colours_unless_calibration_mapped_them(monkeypatch):
    from bunco_pi.vision import fusion
    from bunco_pi.vision.look import DiceLook
    from bunco_pi.vision.reader import ReaderSettings

    frames = []

    def net_sees(frame, *_):
        frames.append(("net", frame.ndim))
        return []

    def pips_see(frame, _settings, _near=None):
        frames.append(("pips", frame.ndim))
        return FrameReading(())

    monkeypatch.setattr(fusion, "detect", net_sees)
    monkeypatch.setattr(fusion, "read_pips", pips_see)
    frame = draw_tray([(2, 200, 200, 0)])
    fusion.read_both(frame, ReaderSettings())
    fusion.read_both(frame, ReaderSettings(look=DiceLook((170, 80, 20), (245, 245, 245))))
    assert frames == [("net", 3), ("pips", 2), ("net", 2), ("pips", 2)]


def test_the_network_does_not_overrule_a_doubtful_count_of_another_face():
    (die,) = one([pip(4, 0.3, problem="faint pip")], [net(5)])
    assert die.face is None and die.problem == "unsure: two readings"


@pytest.mark.parametrize("doubt", [pip(None, 0.0, problem="unclear pips"), pip(4, 0.1, problem="faint pip")])
def test_a_network_face_that_is_not_sure_does_not_replace_a_count(doubt):
    (die,) = one([doubt], [net(5, 0.7)])
    assert die.face != 5 and die.confidence < 0.5


def test_a_cocked_die_stays_not_sure_whatever_the_network_reads():
    (die,) = one([pip(None, 0.0, problem="tilted")], [net(3, 0.99)])
    assert die.face is None and die.problem == "tilted"


def test_a_disputed_die_has_no_face_so_no_setting_can_score_it():
    reading = combine(FrameReading((pip(3),)), [net(2)], 0.0, RULES)
    assert isinstance(judge(reading, dice=1, min_confidence=0.0), Unsure)


def test_a_doubtful_count_the_network_agrees_with_is_sure():
    (die,) = one([pip(4, 0.3, problem="faint pip")], [net(4, 0.95)])
    assert die.face == 4 and die.confidence >= 0.9


def test_neither_sure_stays_not_sure():
    (die,) = one([pip(4, 0.3, problem="faint pip")], [net(4, 0.7)])
    assert die.confidence < 0.5


def test_a_die_only_the_network_found_counts_only_if_it_is_very_sure():
    far = (300.0, 300.0)
    dice = one([pip(2)], [net(2), net(3, 0.99, at=far, presence=0.99)])
    assert [(d.face, d.confidence >= 0.5) for d in dice] == [(2, True), (3, True)]
    dice = one([pip(2)], [net(2), net(3, 0.93, at=far, presence=0.99)])
    assert [(d.face, d.confidence >= 0.5) for d in dice] == [(2, True), (None, False)]
    assert dice[1].problem == "unclear pips"


def test_a_die_only_the_network_found_still_counts_as_a_die_seen():
    reading = combine(
        FrameReading((pip(2), pip(2, at=(200.0, 100.0)))), [net(5, 0.5, at=(400.0, 400.0))], 0.5, RULES
    )
    assert len(reading.dice) == 3 and reading.dice[2].problem == "unclear pips"
    assert judge(reading, dice=3) == Unsure("unclear pips")  # three dice, one unreadable


def test_each_network_die_pairs_with_the_nearest_pip_die_once():
    # Both pip dice are within reach of the one network die; only the nearer is paired.
    dice = one([pip(3, 0.3, at=(100.0, 100.0)), pip(5, 0.3, at=(118.0, 100.0))], [net(5, at=(116.0, 100.0))])
    assert [(d.face, d.confidence >= 0.5) for d in dice] == [(3, False), (5, True)]


def test_dice_come_out_top_of_the_tray_first():
    dice = one([pip(1, at=(100.0, 300.0))], [net(6, at=(300.0, 50.0))])
    assert [d.face for d in dice] == [6, 1]


def test_drawn_dice_on_a_dark_tray_read_as_the_pip_reader_reads_them():
    image = draw_tray([(2, 150, 200, 10), (5, 330, 260, 35), (6, 480, 180, 70)])
    both = judge(read_both(image))
    assert isinstance(both, SettledRoll) and both.faces == judge(read_pips(image)).faces


@pytest.mark.parametrize("name", ["two_16", "five_32", "six_56", "dice_33"])
def test_real_photos(photos, name):
    image = cv2.imread(str(photos / "images" / f"{name}.jpg"))
    truth = read_labels(photos / "labels" / f"{name}.txt", image.shape[1], image.shape[0])
    result = judge(read_both(image), dice=len(truth))
    assert isinstance(result, SettledRoll) and sorted(result.faces) == sorted(d.face for d in truth)


def test_the_pip_reader_looks_only_where_the_network_glanced(monkeypatch):
    """A die the network missed is left out (the roll is then a die short, never scored);
    a faint glance still lets the pip reader's count make the die not sure."""
    from bunco_pi.vision import fusion

    frame = draw_tray([(5, 150, 150, 10), (3, 420, 170, 30), (6, 300, 360, 0)], noise=2.0)
    glances = [NetDie((420.0, 170.0), 60.0, 0.95, 3, 0.99), NetDie((300.0, 360.0), 60.0, 0.35, 6, 0.9)]
    monkeypatch.setattr(fusion, "detect", lambda _frame, _net, least, _region: [
        d for d in glances if d.presence >= least])
    from bunco_pi.vision.reader import ReaderSettings

    reading = read_both(frame, ReaderSettings(), fusion=FusionSettings())
    assert [(d.face, d.problem) for d in reading.dice] == [(3, ""), (None, "unsure: one reading")]
    everywhere = read_both(frame, ReaderSettings(), fusion=FusionSettings(pips_near_net=False))
    assert len(everywhere.dice) == 3
