"""Shared fixtures: every test that touches GPIO gets a fresh gpiozero MockFactory."""

from __future__ import annotations

import pytest


@pytest.fixture
def mock_factory():
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    previous = Device.pin_factory
    factory = MockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        factory.close()
        Device.pin_factory = previous
