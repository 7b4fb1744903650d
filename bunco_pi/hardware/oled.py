"""The OLED: create the luma.oled device from config, and push only frames that changed.

luma is imported lazily so a box without a screen (or a test) never needs I2C. Screens are
drawn elsewhere (``bunco_pi.table.screens``) as PIL images; this module owns the device.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.hardware.pinmap import DEFAULT_I2C_ADDRESS

WIDTH, HEIGHT = 128, 64
# "dummy" keeps frames in memory (tests, the terminal emulator); "none" shows nothing.
DISPLAY_TYPES = ("ssd1306", "sh1106", "dummy", "none")


@dataclass(frozen=True)
class DisplayConfig:
    kind: str = "ssd1306"
    address: int = DEFAULT_I2C_ADDRESS
    port: int = 1
    rotation: int = 0


def open_device(config: DisplayConfig, bus: Any | None = None) -> Any | None:
    """A luma device for ``config``, or None for ``kind = "none"``.

    ``bus`` is an already open SMBus-like object (tests); by default the I2C bus ``port`` is
    opened. Raises UserError with one line naming the problem and the fix.
    """
    if config.kind == "none":
        return None
    if config.kind == "dummy":
        from luma.core.device import dummy

        return dummy(width=WIDTH, height=HEIGHT, rotate=config.rotation, mode="1")
    if config.kind not in DISPLAY_TYPES:
        raise UserError(
            f"display type {config.kind!r} is unknown; set [display] type to one of "
            f"{', '.join(DISPLAY_TYPES)}"
        )
    from luma.core.error import DeviceNotFoundError, DevicePermissionError
    from luma.core.interface.serial import i2c
    from luma.oled import device as oled_devices

    try:
        serial = i2c(bus=bus, port=config.port, address=config.address)
    except DeviceNotFoundError:
        raise UserError(
            f"no I2C bus {config.port} (/dev/i2c-{config.port}): enable I2C with raspi-config, "
            "or set [display] port"
        ) from None
    except DevicePermissionError:
        raise UserError(
            f"no permission for /dev/i2c-{config.port}: add this user to the i2c group"
        ) from None
    driver = getattr(oled_devices, config.kind)
    try:
        return driver(serial, width=WIDTH, height=HEIGHT, rotate=config.rotation)
    except (DeviceNotFoundError, OSError):
        raise UserError(
            f"the {config.kind} display does not answer on I2C bus {config.port} address "
            f"{config.address:#04x}: check its wiring and [display] address "
            f"(i2cdetect -y {config.port} lists what answers)"
        ) from None


class FrameSink:
    """Pushes frames to a device, skipping any frame identical to the last one pushed.

    A display that fails mid-game (a loose wire) must not stop the scoring: the first error
    marks the sink failed and ``failure`` says why. With ``reopen`` (a callable making a fresh
    device, as at start), a later frame tries again every ``retry_seconds``: a display that
    comes back is set up anew and shown the current frame.
    """

    def __init__(
        self,
        device: Any | None,
        reopen: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        retry_seconds: float = 5.0,
    ) -> None:
        self.device = device
        self.pushed = 0
        self.skipped = 0
        self.failure: str | None = None
        self.recovered = 0
        self._reopen = reopen
        self._clock = clock
        self._retry_seconds = retry_seconds
        self._failed_at = 0.0
        self._last: bytes | None = None

    def show(self, image: Any) -> bool:
        """Display ``image`` if it differs from the last frame; True when a frame was pushed."""
        data = image.tobytes()
        if self.failure is not None:
            return self._retry(image, data)
        if data == self._last:
            self.skipped += 1
            return False
        self._last = data
        if self.device is None:
            return False
        return self._push(image)

    def _push(self, image: Any) -> bool:
        try:
            self.device.display(image)
        except Exception as exc:  # noqa: BLE001 - OSError, or luma's DeviceNotFoundError
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            self.failure = f"display stopped answering ({reason})"
            self._failed_at = self._clock()
            return False
        self.pushed += 1
        return True

    def _retry(self, image: Any, data: bytes) -> bool:
        if self._reopen is None or self._clock() - self._failed_at < self._retry_seconds:
            self._last = data
            return False
        try:
            self.device = self._reopen()
        except Exception:  # noqa: BLE001 - still gone; try again later
            self._failed_at = self._clock()
            return False
        self.failure = None
        self._last = data
        if self._push(image):
            self.recovered += 1
            return True
        return False

    def close(self) -> None:
        if self.device is not None and self.failure is None:
            # Shutting down: a display that fails to clear has nothing more to tell us.
            with contextlib.suppress(Exception):
                self.device.cleanup()
