"""hardware/pico-wiring.md comes from the firmware's own pin map and checks it against the
Pico's header."""

from __future__ import annotations

import pytest

from bunco_pi.hardware import pico_wiring
from bunco_pi.hardware.pico_wiring import PinMapError


def test_the_committed_wiring_is_what_the_pin_map_gives(capsys):
    assert pico_wiring.main(["--check"]) == 0, capsys.readouterr().err


def test_a_stale_copy_fails_the_check(tmp_path, capsys):
    out = tmp_path / "pico-wiring.md"
    assert pico_wiring.main(["--out", str(out)]) == 0
    out.write_text(out.read_text().replace("GP15", "GP16"))
    assert pico_wiring.main(["--out", str(out), "--check"]) == 1
    assert "pico-wiring.md: out of date" in capsys.readouterr().err


def test_a_moved_pin_moves_in_the_document():
    pins = pico_wiring.load_pins()
    before = pico_wiring.render(pins)
    moved = {**pins, "BUTTONS": {**pins["BUTTONS"], "roll": 16}}
    after = pico_wiring.render(moved)
    assert "| `roll` | GP15 | 20 | 18 |" in before
    assert "| `roll` | GP16 | 21 | 23 |" in after


@pytest.mark.parametrize(("change", "message"), [
    ({"BUTTONS": {"point": 10, "three": 10}}, "GP10 is wired twice"),
    ({"BUTTONS": {"point": 23}}, "GP23 is not on the Pico's header"),
    ({"SDA": 6, "SCL": 7}, "GP6/GP7 are not an I2C0 SDA/SCL pair"),
    ({"BUTTONS": {"point": 4}}, "GP4 is wired twice"),
])
def test_a_pin_map_the_pico_cannot_have_is_refused_in_one_line(change, message):
    pins = {**pico_wiring.load_pins(), **change}
    with pytest.raises(PinMapError, match=message):
        pico_wiring.render(pins)


def test_every_button_the_firmware_reads_is_wired():
    text = pico_wiring.render()
    for role in ("point", "three", "bunco", "pass", "undo", "roll"):
        assert f"| `{role}` |" in text


def test_the_pico_box_parts_add_up_to_its_total_and_stay_within_30_dollars():
    import re
    from pathlib import Path

    bom = (Path(__file__).resolve().parents[1] / "hardware" / "bom.md").read_text()
    section = bom.split("## Pico table box", 1)[1].split("**Total per Pico table box**")[0]
    total = re.search(r"\*\*Total per Pico table box\*\* \| \| \| \*\*\$([0-9.]+)\*\*", bom)
    assert total is not None
    rows = re.findall(r"^\|[^|]+\| (\d+) \| \$([0-9.]+) \| \$([0-9.]+) \|$", section, re.M)
    assert len(rows) >= 8
    for qty, price, line in rows:
        assert round(int(qty) * float(price), 2) == float(line)
    assert round(sum(float(line) for _, _, line in rows), 2) == float(total.group(1))
    assert float(total.group(1)) <= 30.00
