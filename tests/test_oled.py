from __future__ import annotations

import errno

import pytest
from luma.core.device import dummy
from PIL import Image

from bunco_pi.errors import UserError
from bunco_pi.hardware.oled import DisplayConfig, FrameSink, open_device


def frame(x: int) -> Image.Image:
    image = Image.new("1", (128, 64), 0)
    image.putpixel((x, 0), 1)
    return image


class CountingDummy(dummy):
    def __init__(self) -> None:
        super().__init__(width=128, height=64, mode="1")
        self.calls = 0

    def display(self, image):
        self.calls += 1
        super().display(image)


def test_unchanged_frame_is_never_pushed():
    device = CountingDummy()
    sink = FrameSink(device)
    assert sink.show(frame(1)) is True
    assert sink.show(frame(1)) is False
    assert sink.show(frame(2)) is True
    assert sink.show(frame(2)) is False
    assert device.calls == 2 and sink.pushed == 2 and sink.skipped == 2
    assert device.image.getpixel((2, 0))


def test_display_failure_mid_game_is_reported_not_raised():
    class Unplugged(CountingDummy):
        def display(self, image):
            raise OSError(121, "Remote I/O error")

    sink = FrameSink(Unplugged())
    assert sink.show(frame(1)) is False
    assert "Remote I/O error" in sink.failure
    assert sink.show(frame(2)) is False  # later frames are dropped quietly


def test_dummy_and_none_devices():
    assert open_device(DisplayConfig(kind="none")) is None
    device = open_device(DisplayConfig(kind="dummy", rotation=2))
    assert device.size == (128, 64)


def test_unknown_display_type_is_one_line_with_the_fix():
    with pytest.raises(UserError) as err:
        open_device(DisplayConfig(kind="ssd9999"))
    assert "ssd9999" in str(err.value) and "sh1106" in str(err.value)
    assert "\n" not in str(err.value)


def test_display_missing_on_i2c_is_one_line():
    # No I2C bus 99 exists here or on a Pi: the error names the bus and the fix.
    with pytest.raises(UserError) as err:
        open_device(DisplayConfig(kind="sh1106", port=99))
    message = str(err.value)
    assert "\n" not in message and ("i2c-99" in message or "bus 99" in message)


def test_display_that_comes_back_is_set_up_again():
    now = [0.0]

    class Flaky(CountingDummy):
        def display(self, image):
            raise OSError(121, "Remote I/O error")

    fresh = CountingDummy()
    attempts = []

    def reopen():
        attempts.append(now[0])
        if len(attempts) == 1:
            raise OSError("still unplugged")
        return fresh

    sink = FrameSink(Flaky(), reopen=reopen, clock=lambda: now[0], retry_seconds=5)
    assert sink.show(frame(1)) is False and sink.failure
    now[0] = 2.0
    assert sink.show(frame(2)) is False and attempts == []  # too soon to try again
    now[0] = 6.0
    assert sink.show(frame(3)) is False and attempts == [6.0]  # tried: still gone
    now[0] = 12.0
    assert sink.show(frame(3)) is True  # back: the current frame, even if unchanged
    assert sink.failure is None and sink.recovered == 1 and fresh.calls == 1
    assert sink.show(frame(3)) is False  # and unchanged frames are skipped again


class SilentBus:
    """An I2C bus with nothing at the address: every write fails as smbus2's does."""

    def write_i2c_block_data(self, address, register, data):
        raise OSError(errno.EREMOTEIO, "Remote I/O error")

    def i2c_rdwr(self, *messages):
        raise OSError(errno.EREMOTEIO, "Remote I/O error")


@pytest.mark.parametrize("kind", ["ssd1306", "sh1106"])
def test_display_that_does_not_answer_names_bus_address_and_fix(kind):
    with pytest.raises(UserError) as err:
        open_device(DisplayConfig(kind=kind, address=0x3D, port=1), bus=SilentBus())
    message = str(err.value)
    assert f"the {kind} display does not answer on I2C bus 1 address 0x3d" in message
    assert "i2cdetect -y 1" in message and "\n" not in message


def test_luma_error_mid_game_is_a_failure_not_a_crash():
    from luma.core.error import DeviceNotFoundError

    class Gone(CountingDummy):
        def display(self, image):
            raise DeviceNotFoundError("I2C device not found on address: 0x3C")

    sink = FrameSink(Gone())
    assert sink.show(frame(1)) is False
    assert "0x3C" in sink.failure
