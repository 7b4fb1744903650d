"""``bunco-pi doctor --interactive``: the builder and the box test each other, part by part.

The walk draws a test pattern on the OLED and asks what the builder sees, asks for each button
in turn (showing which on the OLED, and saying which wire to look at when another button or
none answers), beeps the buzzer and asks whether it was heard, finds the head and shows the
round trip to it, and ends with one screen that says whether the box is ready.

Every part comes in as an argument (the luma device, gpiozero's pin factory, how to ask and
how to say, the broker check), so a test walks it through gpiozero's mock pins and luma's
dummy display. Button presses arrive on gpiozero's thread and are only put on a queue.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bunco_pi.doctor import FAIL, OK, WARN, CheckResult
from bunco_pi.hardware import pinmap

WIDTH, HEIGHT = 128, 64
PRESS_TIMEOUT = 20.0
# Contact bounce and a slow finger: presses of the button just tested are not another answer.
SETTLE = 0.3
BUTTON_ORDER = ("point", "three", "bunco", "pass", "undo", "bell")


# --- the pictures (pure) ----------------------------------------------------------------------

def _font() -> Any:
    return ImageFont.load_default()


def _text(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, scale: int = 1) -> None:
    """``text`` in Pillow's built-in font, scaled up by whole pixels (crisp on an OLED)."""
    if scale == 1:
        draw.text(xy, text, font=_font(), fill=1)
        return
    left, top, right, bottom = draw.textbbox((0, 0), text, font=_font())
    small = Image.new("1", (right, bottom), 0)
    ImageDraw.Draw(small).text((0, 0), text, font=_font(), fill=1)
    big = small.resize((right * scale, bottom * scale), Image.NEAREST)
    draw.bitmap(xy, big, fill=1)


def pattern_screen() -> Image.Image:
    """A frame on the outermost pixels (a screen shifted or too small loses an edge), a
    checkerboard of 4-pixel squares on the left (dead rows or columns show as lines) and the
    words on the right (the right driver and orientation)."""
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH - 1, HEIGHT - 1), outline=1)
    for y in range(4, HEIGHT - 4, 4):
        for x in range(4, 60, 4):
            if (x // 4 + y // 4) % 2:
                draw.rectangle((x, y, x + 3, y + 3), fill=1)
    _text(draw, (66, 8), "bunco-pi")
    _text(draw, (66, 24), "doctor")
    _text(draw, (66, 40), "screen?")
    return image


def prompt_screen(role: str) -> Image.Image:
    """"Press" and the button's name, big enough to read across the table."""
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(image)
    _text(draw, (2, 2), "Press")
    _text(draw, (2, 22), role.upper(), scale=3 if len(role) <= 5 else 2)
    return image


def line_screen(lines: Sequence[str], big: str = "") -> Image.Image:
    """A big word on top (``big``) and up to four short lines under it."""
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(image)
    y = 0
    if big:
        _text(draw, (2, 0), big, scale=2)
        y = 24
    for line in lines[: (HEIGHT - y) // 12]:
        _text(draw, (2, y), line[:21])
        y += 12
    return image


def verdict_screen(results: Sequence[CheckResult]) -> Image.Image:
    """One screen: READY, or how many parts failed and which."""
    failed = [r.part for r in results if r.status == FAIL]
    warned = [r.part for r in results if r.status == WARN]
    if not failed:
        lines = [f"{len(results)} checks OK"] + ([f"warn: {', '.join(warned)}"] if warned else [])
        return line_screen(lines, big="READY")
    return line_screen([", ".join(failed[i:i + 2]) for i in range(0, len(failed), 2)],
                       big=f"{len(failed)} FAIL")


# --- the walk ---------------------------------------------------------------------------------

def _yes(answer: str) -> bool | None:
    word = answer.strip().lower()
    if word in ("", "y", "yes"):
        return True
    if word in ("n", "no"):
        return False
    return None


def _header_pin(gpio: int) -> str:
    for assignment in pinmap.TABLE_BUTTONS + pinmap.HEAD_EXTRAS:
        if assignment.gpio == gpio:
            return str(assignment.header_pin)
    return "?"


class InteractiveDoctor:
    """One walk through a box's parts; ``run()`` returns every result, the verdict drawn."""

    def __init__(self, pins: Mapping[str, int], *, device: Any | None,
                 broker_check: Callable[[], CheckResult] | None = None,
                 buzzer_kind: str = pinmap.BUZZER_KIND, pin_factory: Any | None = None,
                 say: Callable[[str], None] = print, ask: Callable[[str], str] = input,
                 press_timeout: float = PRESS_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pins = dict(pins)
        self.device = device
        self.broker_check = broker_check
        self.buzzer_kind = buzzer_kind
        self.pin_factory = pin_factory
        self.say = say
        self._ask = ask
        self.press_timeout = press_timeout
        self.clock = clock
        self.presses: queue.Queue[tuple[str, float]] = queue.Queue()
        self.screen_failure = ""

    def run(self, earlier: Sequence[CheckResult] = ()) -> list[CheckResult]:
        """``earlier`` results (the config) and the walk's, the verdict drawn for all."""
        results = list(earlier)
        if not any(r.part == "display" for r in results):
            results.append(self.check_screen())
        results += self.check_buttons()
        if "buzzer" in self.pins:
            results.append(self.check_buzzer())
        if self.broker_check is not None:
            results.append(self.check_head())
        self.show(verdict_screen(results))
        return results

    # --- helpers ---

    def show(self, image: Image.Image) -> None:
        if self.device is None or self.screen_failure:
            return
        try:
            self.device.display(image.convert(self.device.mode))
        except OSError as exc:  # a loose wire mid-walk: the rest goes on, the verdict says so
            self.screen_failure = f"the OLED stopped answering ({exc.strerror or exc})"

    def ask(self, question: str) -> bool:
        """A yes/no question; asked again (twice at most) until the answer is one."""
        for _ in range(3):
            try:
                answer = _yes(self._ask(f"{question} [Y/n] "))
            except EOFError:
                return False
            if answer is not None:
                return answer
            self.say("Please answer y or n.")
        return False

    # --- the parts ---

    def check_screen(self) -> CheckResult:
        if self.device is None:
            return CheckResult("display", OK, 'none fitted ([display] type = "none")')
        self.show(pattern_screen())
        if self.screen_failure:
            return CheckResult("display", FAIL, self.screen_failure + ": check its four wires "
                               "(hardware/wiring.md)")
        if self.ask("The OLED shows a frame round its edge, a checkerboard on the left and "
                    "'bunco-pi doctor' on the right?"):
            return CheckResult("display", OK, "test pattern seen")
        return CheckResult("display", FAIL, "test pattern not seen: blank means VCC/GND or "
                           "SDA/SCL swapped; snow or a shifted picture means the wrong driver "
                           "([display] type ssd1306 or sh1106); upside down: [display] rotation")

    def check_buttons(self) -> list[CheckResult]:
        from gpiozero import DigitalInputDevice

        roles = [r for r in BUTTON_ORDER if r in self.pins]
        devices = []
        try:
            for role in roles:
                button = DigitalInputDevice(self.pins[role], pull_up=True, bounce_time=None,
                                            pin_factory=self.pin_factory)
                # gpiozero's thread: only hand the press over.
                button.when_activated = (lambda r: lambda: self.presses.put((r, self.clock())))(
                    role)
                devices.append(button)
        except Exception as exc:  # gpiozero raises many types: each is a reason to report
            for device in devices:
                device.close()
            return [CheckResult("buttons", FAIL, f"cannot claim the button pins ({exc}): stop "
                                "bunco-pi-table first (`sudo systemctl stop bunco-pi-table "
                                "bunco-pi-head`)")]
        try:
            return [self._one_button(role, previous)
                    for role, previous in zip(roles, [None, *roles], strict=False)]
        finally:
            for device in devices:
                device.close()

    def _one_button(self, role: str, previous: str | None) -> CheckResult:
        gpio = self.pins[role]
        wire = f"GPIO{gpio}, header pin {_header_pin(gpio)}"
        asked = self.clock()
        self.show(prompt_screen(role))
        self.say(f"Press the {role.upper()} button ({wire}).")
        deadline = asked + self.press_timeout
        while True:
            left = deadline - self.clock()
            try:
                got, at = self.presses.get(timeout=max(0.0, left))
            except queue.Empty:
                self.show(line_screen([f"no {role} press"], big="FAIL"))
                return CheckResult(f"button {role}", FAIL,
                                   f"no press in {self.press_timeout:g} s: check its two wires "
                                   f"({wire}, and ground; hardware/wiring.md)")
            if got == previous and at - asked < SETTLE or at < asked:
                continue  # the last button still bouncing
            if got == role:
                self.show(line_screen([wire], big=f"{role.upper()} ok"))
                self.say(f"  {role}: OK")
                return CheckResult(f"button {role}", OK, f"answers on {wire}")
            other = f"GPIO{self.pins[got]}"
            self.show(line_screen([f"got {got}"], big="FAIL"))
            return CheckResult(f"button {role}", FAIL,
                               f"the {got.upper()} input ({other}) answered instead: the {role} "
                               f"and {got} wires are swapped, or the {role} button's wire is on "
                               f"{other} (it belongs on {wire})")

    def check_buzzer(self) -> CheckResult:
        gpio = self.pins["buzzer"]
        try:
            if self.buzzer_kind == "TonalBuzzer":
                from gpiozero import TonalBuzzer

                buzzer: Any = TonalBuzzer(gpio, pin_factory=self.pin_factory)
            else:
                from gpiozero import Buzzer

                buzzer = Buzzer(gpio, pin_factory=self.pin_factory)
        except Exception as exc:  # gpiozero's errors: pin in use, no PWM, no GPIO
            return CheckResult("buzzer", FAIL, f"cannot drive GPIO{gpio} ({exc}): stop "
                               "bunco-pi-head first, or fix [buzzer] in head.toml")
        self.show(line_screen(["listen..."], big="BEEP"))
        self.say(f"Listen: three beeps from the buzzer (GPIO{gpio}).")
        try:
            for _ in range(3):
                if self.buzzer_kind == "TonalBuzzer":
                    buzzer.play("A5")
                else:
                    buzzer.on()
                time.sleep(0.2)
                if self.buzzer_kind == "TonalBuzzer":
                    buzzer.stop()
                else:
                    buzzer.off()
                time.sleep(0.15)
        finally:
            buzzer.close()
        if self.ask("Did you hear three beeps?"):
            return CheckResult("buzzer", OK, f"three beeps heard on GPIO{gpio}")
        return CheckResult("buzzer", FAIL, "not heard: check the transistor's pins (they "
                           "differ between 2N2222 and BC337), the 1 kOhm resistor to "
                           f"GPIO{gpio}, and that a passive buzzer is set as [buzzer] kind = "
                           "\"TonalBuzzer\", an active one as \"Buzzer\"")

    def check_head(self) -> CheckResult:
        assert self.broker_check is not None
        self.show(line_screen(["looking..."], big="HEAD"))
        self.say("Looking for the head...")
        result = self.broker_check()
        if result.status == OK:
            trip = result.message.rpartition("round trip ")[2] if "round trip" in \
                result.message else "found"
            self.show(line_screen([f"round trip {trip}"], big="HEAD ok"))
        else:
            self.show(line_screen(["not reached"], big="HEAD"))
        self.say(f"  {result.line()}")
        return CheckResult("head", result.status, result.message)
