"""``bunco-pi doctor --interactive`` walked by a test: gpiozero's mock pins are the buttons and
the buzzer, luma's dummy device is the OLED, a script answers the questions, and a real
mosquitto is the head."""

from __future__ import annotations

import argparse
import json

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from luma.core.device import dummy

from bunco_pi.commands import doctor as doctor_command
from bunco_pi.doctor import FAIL, OK, CheckResult
from bunco_pi.doctor_interactive import (
    InteractiveDoctor,
    pattern_screen,
    prompt_screen,
    verdict_screen,
)
from bunco_pi.hardware import pinmap

TABLE_PINS = pinmap.default_button_pins()
HEAD_PINS = {**TABLE_PINS, **pinmap.default_head_pins()}


class Builder:
    """The person at the box: presses what the doctor asks for (or what the script says
    instead), answers its questions from a script, and remembers what the OLED showed."""

    def __init__(self, factory: MockFactory, device, pins, answers=(), presses=None):
        self.factory, self.device, self.pins = factory, device, pins
        self.answers = list(answers)
        self.presses = dict(presses or {})  # asked role -> role actually pressed (None: none)
        self.said: list[str] = []
        self.asked: list[str] = []
        self.seen: dict[str, bytes] = {}  # what the OLED showed when each line was said/asked

    def say(self, line: str) -> None:
        self.said.append(line)
        self.seen[line] = self.device.image.tobytes()
        if line.startswith("Press the "):
            role = line.split()[2].lower()
            pressed = self.presses.get(role, role)
            if pressed is not None:
                pin = self.factory.pin(self.pins[pressed])
                pin.drive_low()
                pin.drive_high()

    def ask(self, question: str) -> str:
        self.asked.append(question)
        self.seen[question] = self.device.image.tobytes()
        return self.answers.pop(0)


@pytest.fixture
def factory():
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()
    factory.close()


def screen() -> dummy:
    return dummy(width=128, height=64, mode="1")


def fixed_head() -> CheckResult:
    return CheckResult("broker", OK, "127.0.0.1:1883 accepts doctor-head; round trip 3 ms")


def test_a_good_head_box_walks_to_ready(factory):
    device = screen()
    builder = Builder(factory, device, HEAD_PINS, answers=["y", "yes"])
    walk = InteractiveDoctor(HEAD_PINS, device=device, broker_check=fixed_head,
                             buzzer_kind="TonalBuzzer", pin_factory=factory, say=builder.say,
                             ask=builder.ask, press_timeout=2)
    results = walk.run()
    assert [r.part for r in results] == ["display", *(f"button {r}" for r in (
        "point", "three", "bunco", "pass", "undo", "bell")), "buzzer", "head"]
    assert all(r.status == OK for r in results), [r.line() for r in results]
    # The test pattern was on the screen while the builder was asked about it ...
    (screen_question,) = [q for q in builder.asked if "checkerboard" in q]
    assert builder.seen[screen_question] == pattern_screen().tobytes()
    # ... each button's name while it was asked for, in the order of the lid ...
    asked = [line.split()[2].lower() for line in builder.said if line.startswith("Press the")]
    assert asked == ["point", "three", "bunco", "pass", "undo", "bell"]
    for role in asked:
        (line,) = [x for x in builder.said if x.startswith(f"Press the {role.upper()} ")]
        assert builder.seen[line] == prompt_screen(role).tobytes()
    # ... the buzzer played three tones and fell silent ...
    buzzer = factory.pin(HEAD_PINS["buzzer"])
    tones = [s for s in buzzer.states if s.state]
    assert len(tones) == 3 and buzzer.state == 0
    assert "round trip 3 ms" in results[-1].message
    # ... and the last screen is the verdict of all of it.
    assert device.image.tobytes() == verdict_screen(results).tobytes()
    assert verdict_screen(results).tobytes() != verdict_screen(
        [*results[:-1], CheckResult("head", FAIL, "x")]).tobytes()


def test_swapped_wires_a_dead_button_and_a_silent_buzzer_are_named(factory):
    device = screen()
    builder = Builder(factory, device, HEAD_PINS, answers=["n", "maybe", "n"],
                      presses={"three": "bunco", "undo": None})
    walk = InteractiveDoctor(HEAD_PINS, device=device, broker_check=fixed_head,
                             buzzer_kind="Buzzer", pin_factory=factory, say=builder.say,
                             ask=builder.ask, press_timeout=0.5)
    results = {r.part: r for r in walk.run()}
    assert results["display"].status == FAIL and "SDA/SCL" in results["display"].message
    three = results["button three"]
    assert three.status == FAIL and "BUNCO input (GPIO13) answered instead" in three.message
    # bunco, pressed early by mistake, is still asked for and answers
    assert results["button bunco"].status == OK
    undo = results["button undo"]
    assert undo.status == FAIL and "no press in 0.5 s" in undo.message and "GPIO26" in undo.message
    assert results["buzzer"].status == FAIL and "Please answer y or n." in builder.said
    plain = factory.pin(HEAD_PINS["buzzer"])
    assert [s.state for s in plain.states[1:]] == [1, 0, 1, 0, 1, 0]
    assert device.image.tobytes() == verdict_screen(list(results.values())).tobytes()


@pytest.mark.slow
def test_the_command_walks_a_table_box_and_finds_the_head(factory, broker, tmp_path, capsys):
    """`bunco-pi doctor --interactive` from a table box's config, against a real broker: the
    doctor logs in as its own user and shows the round trip on the OLED."""
    creds = tmp_path / "credentials.json"
    creds.write_text(json.dumps({"users": {"table-2": broker.credentials.password("table-2")}}))
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nnumber = 2\n[broker]\ndiscover = false\nhost = "{broker.host}"\n'
                      f'port = {broker.port}\ncredentials = "{creds}"\n[data]\ndir = "{tmp_path}"\n')
    parser = argparse.ArgumentParser()
    doctor_command.register(parser.add_subparsers())
    args = parser.parse_args(["doctor", "--interactive", "--config", str(config),
                              "--head-config", str(tmp_path / "none.toml"),
                              "--press-timeout", "2"])
    device = screen()
    builder = Builder(factory, device, TABLE_PINS, answers=["y"])
    def say(line):
        print(line)
        builder.say(line)

    code = doctor_command.run(args, pin_factory=factory, service_running=lambda: False,
                              device=device, ask=builder.ask, say=say)
    out = capsys.readouterr()
    assert code == 0, out
    assert "READY: every part answered" in out.out
    assert "OK   head: " in out.out and "accepts doctor-table-2; round trip" in out.out
    assert out.out.count("Press the ") == 5


def test_the_walk_refuses_while_the_box_runs(factory, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    doctor_command.register(parser.add_subparsers())
    args = parser.parse_args(["doctor", "--interactive", "--config", str(tmp_path / "t.toml"),
                              "--head-config", str(tmp_path / "none.toml")])
    assert doctor_command.run(args, pin_factory=factory, service_running=lambda: True,
                              device=screen(), ask=lambda q: "y") == 1
    err = capsys.readouterr().err
    assert "stop it first" in err and len(err.strip().splitlines()) == 1


def test_the_verdict_names_the_failed_parts():
    ok = CheckResult("display", OK, "")
    failing = [ok, CheckResult("button undo", FAIL, ""), CheckResult("head", FAIL, "")]
    assert verdict_screen([ok]).tobytes() != verdict_screen(failing).tobytes()
