"""The settled-roll detector: one SETTLED per throw, never while dice tumble, none twice."""

import numpy as np
from drawn_dice import draw_tray

from bunco_pi.vision.settle import Event, SettleDetector, SettleSettings

SETTINGS = SettleSettings(settle_frames=5)
ROLL_A = [(3, 150, 150, 10), (5, 420, 160, 35), (1, 300, 360, 60)]
ROLL_B = [(6, 200, 120, 0), (2, 480, 300, 20), (4, 160, 380, 45)]


def tumbling(count: int, seed: int = 1) -> list[np.ndarray]:
    """Frames of dice bouncing around: somewhere new every frame."""
    rng = np.random.default_rng(seed)
    return [
        draw_tray([(int(rng.integers(1, 7)), *rng.uniform(60, 420, 2), rng.uniform(0, 90))
                   for _ in range(3)])
        for _ in range(count)
    ]


def still(dice, count: int, seed: int = 0) -> list[np.ndarray]:
    """The same scene with a little sensor noise on every frame."""
    return [draw_tray(dice, noise=2.0, seed=seed + i) for i in range(count)]


def events(detector: SettleDetector, frames) -> list[Event | None]:
    return [detector.feed(frame) for frame in frames]


def test_dice_left_in_the_tray_at_start_up_are_not_read():
    detector = SettleDetector(SETTINGS)
    assert events(detector, still(ROLL_A, 30)) == [None] * 30


def test_a_throw_is_read_once_after_settling_and_never_while_tumbling():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    during = events(detector, tumbling(12))
    assert during[0] is Event.ROLLING
    assert Event.SETTLED not in during
    after = events(detector, still(ROLL_B, 20, seed=100))
    # The first still frame ends the tumble; SETTLED comes after settle_frames still frames.
    assert after.index(Event.SETTLED) == SETTINGS.settle_frames
    assert after.count(Event.SETTLED) == 1


def test_the_same_roll_is_not_read_twice_when_a_hand_passes_over_it():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    events(detector, tumbling(6))
    assert Event.SETTLED in events(detector, still(ROLL_B, 10))
    hand = events(detector, tumbling(4, seed=7))
    assert hand[0] is Event.ROLLING
    assert Event.SETTLED not in events(detector, still(ROLL_B, 20, seed=50))


def test_a_new_throw_is_read_again():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    events(detector, tumbling(6))
    assert events(detector, still(ROLL_B, 10)).count(Event.SETTLED) == 1
    events(detector, tumbling(6, seed=3))
    assert events(detector, still(ROLL_A, 10, seed=40)).count(Event.SETTLED) == 1


def test_a_pause_shorter_than_settle_frames_is_not_a_settled_roll():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    frames = tumbling(4) + still(ROLL_B, SETTINGS.settle_frames - 1) + tumbling(4, seed=9)
    assert Event.SETTLED not in events(detector, frames)


def test_rearm_reads_the_still_tray_again():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    events(detector, tumbling(6))
    events(detector, still(ROLL_B, 10))
    detector.rearm()
    assert events(detector, still(ROLL_B, 10, seed=60)).count(Event.SETTLED) == 1


def test_one_die_taken_away_is_a_change_and_sensor_noise_is_not():
    detector = SettleDetector(SETTINGS)
    events(detector, still(ROLL_A, 8))
    events(detector, tumbling(6))
    events(detector, still(ROLL_B, 10))
    events(detector, tumbling(3, seed=11))
    assert Event.SETTLED in events(detector, still(ROLL_B[:2], 10, seed=70))
    noisy = [draw_tray(ROLL_B[:2], noise=4.0, seed=200 + i) for i in range(20)]
    assert events(detector, noisy) == [None] * 20


def test_dice_of_other_colours_than_those_known_are_seen_to_settle():
    """A table that learned one group's blue dice, with another group's red dice thrown on its
    white tray: in the grey blue dice map to, red is as grey as the tray. The settle check
    sees the plain grey too, and reads the throw."""
    from drawn_dice import draw_scene

    from bunco_pi.vision.look import DiceLook

    blue, red, white = (170, 80, 20), (40, 30, 190), (245, 245, 245)
    look = DiceLook(blue, white)
    scene = {"tray": "white", "face_colour": red, "pip_colour": white}
    empty = [draw_scene([], seed=s, **scene) for s in range(8)]
    thrown = [draw_scene(ROLL_A, seed=100 + s, **scene) for s in range(8)]
    moving = [draw_scene([(2, 100 + 40 * s, 200, 10 * s)], seed=50 + s, **scene) for s in range(4)]
    detector = SettleDetector(SettleSettings(settle_frames=5, look=look))
    said = [e for e in events(detector, empty + moving + thrown) if e is not None]
    assert said == [Event.ROLLING, Event.SETTLED]
    # and its own blue dice settle as before with both greys stacked (that the mapped grey
    # sees what plain grey does not: tests/test_dice_colours.py, red dice on green felt)
    blues = {**scene, "face_colour": blue}
    detector = SettleDetector(SettleSettings(settle_frames=5, look=look))
    frames = empty + [draw_scene(ROLL_B, seed=200 + s, **blues) for s in range(8)]
    assert [e for e in events(detector, frames) if e is not None] == [Event.ROLLING, Event.SETTLED]
