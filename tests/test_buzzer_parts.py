"""The head box's buzzer: the parts list buys the kind that the default config drives.

A passive buzzer needs a tone (gpiozero's ``TonalBuzzer``, PWM); an active one beeps on
plain DC (``Buzzer``). Driving one as the other plays the bell patterns wrong, so the parts
list, the head.toml the installer writes, the head's defaults and the docs must agree.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from bunco_pi import provision
from bunco_pi.commands import head as head_command
from bunco_pi.hardware import pinmap
from bunco_pi.head.config import load_head_config

ROOT = Path(__file__).resolve().parent.parent
KIND_FOR = {"passive": "TonalBuzzer", "active": "Buzzer"}


def bought_kind(bom: str) -> str:
    """The gpiozero class the parts list's buzzer needs, from its one buzzer row."""
    rows = [line for line in bom.splitlines() if re.match(r"\|\s*Buzzer\b", line)]
    assert len(rows) == 1, f"expected one buzzer row in hardware/bom.md, found {rows}"
    words = {w for w in KIND_FOR if re.search(rf"\b{w}\b", rows[0], re.IGNORECASE)}
    assert len(words) == 1, f"the buzzer row must say passive or active: {rows[0]}"
    return KIND_FOR[words.pop()]


def test_bought_kind_reads_the_row():
    assert bought_kind("| Buzzer, 5 V active (piezo) | 1 |") == "Buzzer"
    assert bought_kind("| Buzzer, 5 V **passive** | 1 |\n| Diode (magnetic buzzer) |") == "TonalBuzzer"
    with pytest.raises(AssertionError):
        bought_kind("| Buzzer, 5 V | 1 |")


@pytest.fixture
def bought() -> str:
    return bought_kind((ROOT / "hardware" / "bom.md").read_text(encoding="utf-8"))


def test_the_default_wiring_drives_the_buzzer_the_parts_list_buys(bought):
    assert bought == pinmap.BUZZER_KIND


def test_the_installed_head_config_drives_the_buzzer_the_parts_list_buys(bought, tmp_path):
    # What install.sh writes to /etc/bunco-pi/head.toml, read back as the head reads it.
    (tmp_path / "rules.toml").write_text(
        provision.rules_config(ROOT / "bunco_pi" / "rules" / "presets"), encoding="utf-8")
    config = tmp_path / "head.toml"
    config.write_text(provision.head_config("bunco", 3, etc=str(tmp_path)), encoding="utf-8")
    assert load_head_config(config).buzzer_kind == bought


def test_a_head_config_without_a_kind_drives_the_buzzer_the_parts_list_buys(bought, tmp_path):
    config = tmp_path / "head.toml"
    config.write_text('[night]\nname = "bunco"\n[buzzer]\npin = 12\n', encoding="utf-8")
    assert load_head_config(config).buzzer_kind == bought


def test_the_head_command_defaults_to_the_buzzer_the_parts_list_buys(bought):
    parser = argparse.ArgumentParser(prog="bunco-pi")
    head_command.register(parser.add_subparsers(dest="command"))
    settings = head_command._settings(parser.parse_args(["head"]))
    assert settings.buzzer == {"TonalBuzzer": "tonal", "Buzzer": "plain"}[bought]


def test_the_docs_name_the_same_kind(bought):
    for doc in (ROOT / "docs").glob("*.md"):
        for kind in re.findall(r'^kind = "(\w+)"', doc.read_text(encoding="utf-8"), re.M):
            assert kind == bought, f"{doc.name}: kind = {kind!r}, the parts list buys {bought}"
    assert f'kind = "{bought}"' in (ROOT / "hardware" / "bom.md").read_text(encoding="utf-8")
