"""A whole table box assembled from config: buttons, OLED, dice sensor or camera, journal, node.

The node owns the game; this module only wires the parts to it and takes them down again.
Each part is optional and fails with one line naming the problem and the fix.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from bunco_pi.hardware.buttons import ButtonPanel, Gestures
from bunco_pi.hardware.oled import FrameSink, open_device
from bunco_pi.table.config import TableConfig
from bunco_pi.table.journal import Journal
from bunco_pi.table.link import TableLink
from bunco_pi.table.node import HOLD_ROLES, TableNode

STOP_WAIT_S = 30.0  # at most, for the node to finish what was queued before the stop


class TableBox:
    def __init__(
        self,
        config: TableConfig,
        rules: Any,
        link: TableLink,
        journal_path: str | Path,
        *,
        device: Any | None = None,
        reopen: Callable[[], Any] | None = None,
        pin_factory: Any | None = None,
        dice_port: str | None = None,
        camera: str | None = None,
        camera_calibration: Path | None = None,
        camera_frames: Any | None = None,
        camera_retry: tuple[float, float] | None = None,
        on_round_over: Callable[[TableNode], None] | None = None,
        on_frame: Callable[[Any], None] | None = None,
        log: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.log = log if log is not None else sys.stderr
        # The arguments (command-line flags) override the config's [camera] and [dice].
        self._dice_port = config.dice_port if dice_port is None else dice_port
        self._camera = config.camera.source if camera is None else camera
        if self._dice_port and (self._camera or camera_frames is not None):
            from bunco_pi.errors import UserError

            raise UserError(f"dice sensor {self._dice_port!r} and dice camera "
                            f"{self._camera or 'frames'!r}: a table reads its dice with one of "
                            "them, not both")
        if device is None:
            # A real display that drops off the bus mid-game is set up again when it answers.
            self.sink = FrameSink(open_device(config.display),
                                  reopen=lambda: open_device(config.display), clock=clock)
        else:
            # ``reopen``: how to set the given device up again if it drops off the bus
            self.sink = FrameSink(device, reopen=reopen, clock=clock)
        self.journal = Journal(journal_path)
        gestures = Gestures(config.buttons.pins, hold_roles=HOLD_ROLES,
                            debounce=config.buttons.debounce, hold_time=config.buttons.hold_time)
        self.node = TableNode(rules=rules, link=link, journal=self.journal, sink=self.sink,
                              gestures=gestures, table_number=config.number,
                              players=config.players, clock=clock,
                              on_round_over=on_round_over, log=self.log, on_frame=on_frame)
        self.node.console_url = config.console_url or None
        self.panel: ButtonPanel | None = None
        self.dice: Any | None = None
        self.camera: Any | None = None
        self._camera_calibration = (config.camera.calibration if camera_calibration is None
                                    else camera_calibration)
        # A frame source, or a callable opening one, instead of opening ``camera`` (tests).
        self._camera_frames = camera_frames
        self._camera_retry = camera_retry  # first and longest wait before reopening (tests)
        self._pin_factory = pin_factory
        self._clock = clock
        self._stopped = False

    def start(self) -> None:
        self.node.start()
        try:
            self.panel = _open_panel(self.config, self.node.post, self._clock,
                                     self._pin_factory)
            # A networked table keeps its entries in its outbox, not the journal.
            link = self.node.link
            last_roll_seq = (link.last_roll_seq if link.keeps_entries
                             else self.journal.last_roll_seq)
            if self._dice_port:
                from bunco_pi.table.dice_feed import DiceFeed

                self.dice = DiceFeed(self._dice_port, self.node.post, last_seq=last_roll_seq())
                self.dice.start()
            if self._camera or self._camera_frames is not None:
                from bunco_pi.table.camera_feed import CameraFeed

                self.camera = CameraFeed(self._camera or "frames", self.node.post,
                                         self._camera_calibration, last_seq=last_roll_seq(),
                                         frames=self._camera_frames,
                                         frame_timeout=self.config.camera.frame_timeout,
                                         retry=self._camera_retry,
                                         learned_path=self.config.camera.learned)
                self.camera.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.dice is not None:
            self.dice.stop()
            print(f"bunco-pi table: {self.dice.summary()}", file=self.log, flush=True)
        if self.camera is not None:
            self.camera.stop()
            print(f"bunco-pi table: {self.camera.summary()}", file=self.log, flush=True)
        if self.panel is not None:
            self.panel.close()
        # Every roll and press already queued is handled (stored) before the thread ends.
        self.node.stop(timeout=STOP_WAIT_S)
        if self.node.alive:
            # Closing the journal under a thread still writing to it crashes the process
            # (SQLite), so leave both to the exit: every entry stored so far is on disk.
            print(f"bunco-pi table: still handling queued input after {STOP_WAIT_S:.0f} s; "
                  "leaving the journal as it is", file=self.log, flush=True)
            return
        self.sink.close()
        self.journal.close()


def _open_panel(
    config: TableConfig, post: Callable[[object], None], clock: Callable[[], float],
    pin_factory: Any | None,
) -> ButtonPanel:
    from gpiozero.exc import BadPinFactory, GPIOPinInUse

    from bunco_pi.errors import UserError

    try:
        return ButtonPanel(config.buttons.pins, post, clock, pin_factory=pin_factory)
    except BadPinFactory:
        raise UserError(
            "no GPIO on this machine (not a Raspberry Pi, or lgpio missing): run with "
            "--emulate to try the box in the terminal"
        ) from None
    except GPIOPinInUse as exc:
        raise UserError(
            f"a button pin is already in use by another program ({exc}): stop it, or move "
            "the button in [buttons] of the config"
        ) from None
    except Exception as exc:  # gpiozero raises many types; each is a wiring/config problem
        raise UserError(
            f"cannot use the buttons' GPIO pins {sorted(config.buttons.pins.values())}: "
            f"{type(exc).__name__}: {exc} (check [buttons] in the config, or use --emulate)"
        ) from None
