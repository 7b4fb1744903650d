"""A frame's reading: its faces, and the least sure die deciding how sure the whole is."""

from bunco_pi.vision.reading import DieReading, FrameReading, closest_pairs, same_dice


def test_faces_in_order_and_confidence_of_the_least_sure_die():
    reading = FrameReading((
        DieReading(4, 0.9, (0, 0), 5),
        DieReading(None, 0.0, (9, 9), 5, "tilted"),
        DieReading(2, 0.6, (5, 5), 5),
    ))
    assert reading.faces == (4, None, 2)
    assert reading.confidence == 0.0
    assert FrameReading(reading.dice[::2]).confidence == 0.6


def test_no_dice_is_no_confidence():
    assert FrameReading(()).confidence == 0.0


def test_closest_pairs_go_first_and_use_each_side_once():
    candidates = [(5.0, 0, 0), (1.0, 1, 0), (2.0, 0, 1), (3.0, 1, 1)]
    assert closest_pairs(candidates) == [(1, 0), (0, 1)]
    assert closest_pairs([]) == []


def test_the_same_die_in_two_readings_lies_within_the_larger_radius():
    a = (DieReading(2, 0.9, (100.0, 100.0), 15.0), DieReading(5, 0.9, (200.0, 100.0), 15.0))
    b = (DieReading(5, 0.9, (210.0, 100.0), 5.0), DieReading(2, 0.9, (130.0, 100.0), 10.0),
         DieReading(2, 0.9, (104.0, 100.0), 5.0))
    # 10 px off a die 15 wide is the same die; 30 px off is not, whatever their sizes
    assert sorted(same_dice(a, b)) == [(0, 2), (1, 0)]
    assert same_dice(a, ()) == []
