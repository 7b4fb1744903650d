"""The head box's bell button and buzzer, on gpiozero's mock pins."""

from __future__ import annotations

import queue
import time

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from bunco_pi.errors import UserError
from bunco_pi.hardware.bell import PATTERNS, BellButton, BellBuzzer, BellHeld, BellPressed


@pytest.fixture
def pwm_factory():
    previous = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    yield factory
    factory.reset()
    Device.pin_factory = previous


def test_a_press_reaches_the_queue_and_nothing_else(mock_factory):
    inbox: queue.Queue = queue.Queue()
    bell = BellButton(16, inbox)
    pin = mock_factory.pin(16)
    pin.drive_low()
    pin.drive_high()
    assert inbox.get(timeout=1) == BellPressed()
    assert inbox.empty()
    bell.close()


def test_a_hold_is_the_way_out_and_never_also_a_press(mock_factory):
    inbox: queue.Queue = queue.Queue()
    bell = BellButton(16, inbox, hold_time=0.2)
    pin = mock_factory.pin(16)
    pin.drive_low()
    assert inbox.get(timeout=5) == BellHeld()  # while still down: the host hears it at once
    time.sleep(0.3)  # kept down longer: still one hold
    pin.drive_high()
    time.sleep(0.2)
    assert inbox.empty()  # the release after a hold is not a press
    pin.drive_low()  # the next short press is a press again
    pin.drive_high()
    assert inbox.get(timeout=1) == BellPressed()
    assert inbox.empty()
    bell.close()


def test_a_press_shorter_than_the_hold_time_is_only_a_press(mock_factory):
    inbox: queue.Queue = queue.Queue()
    bell = BellButton(16, inbox, hold_time=5.0)
    pin = mock_factory.pin(16)
    pin.drive_low()
    pin.drive_high()
    assert inbox.get(timeout=1) == BellPressed()
    time.sleep(0.2)
    assert inbox.empty()
    bell.close()


def test_a_pin_in_use_is_one_line(mock_factory):
    first = BellButton(16, queue.Queue())
    with pytest.raises(UserError, match="GPIO16 is already in use"):
        BellButton(16, queue.Queue())
    first.close()


def test_a_plain_buzzer_beeps_each_pattern_in_the_background(mock_factory):
    buzzer = BellBuzzer(12, "plain")
    pin = mock_factory.pin(12)
    for pattern in PATTERNS:
        last = pin.state
        assert last == 0
        buzzer.play(pattern)  # returns at once: the sound plays on gpiozero's own thread
        on, off, times = PATTERNS[pattern]
        changes = 0
        deadline = time.monotonic() + (on + off) * times + 5
        while time.monotonic() < deadline:  # watch it sound and fall silent again
            if pin.state != last:
                changes += 1
                last = pin.state
            if changes >= 2 and pin.state == 0:
                break
            time.sleep(0.002)
        assert changes >= 2 and pin.state == 0, f"{pattern} did not sound then stop"
    assert buzzer.played == list(PATTERNS)
    with pytest.raises(ValueError):
        buzzer.play("fanfare")
    buzzer.close()


def test_a_tonal_buzzer_plays_tones_on_a_pwm_pin(pwm_factory):
    buzzer = BellBuzzer(12, "tonal")
    buzzer.play("bunco")
    pin = pwm_factory.pin(12)
    frequencies = set()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and len(frequencies) < 2:
        if pin.frequency:
            frequencies.add(round(pin.frequency))
        time.sleep(0.01)
    assert len(frequencies) >= 2  # C6 then G6: a tune, not one note
    buzzer.close()


def test_a_tonal_buzzer_on_a_pin_without_pwm_is_one_line(mock_factory):
    with pytest.raises(UserError, match="cannot play tones"):
        BellBuzzer(12, "tonal")


def test_an_unknown_kind_is_one_line(mock_factory):
    with pytest.raises(UserError, match="plain' or 'tonal"):
        BellBuzzer(12, "siren")
