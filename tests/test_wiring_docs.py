import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from bunco_pi.hardware import pinmap, wiring_docs
from bunco_pi.hardware.wiring_docs import PinMapError, check_pinmap


def test_committed_docs_match_the_pin_map():
    stale = wiring_docs.stale_files(wiring_docs.DEFAULT_OUT)
    assert stale == [], (
        f"{[str(p) for p in stale]} disagree with pinmap.py: "
        "run python3 -m bunco_pi.hardware.wiring_docs"
    )


def test_check_mode_fails_on_an_edited_copy(tmp_path, capsys):
    assert wiring_docs.main(["--out", str(tmp_path)]) == 0
    assert wiring_docs.main(["--out", str(tmp_path), "--check"]) == 0
    wiring = tmp_path / "wiring.md"
    wiring.write_text(wiring.read_text().replace("GPIO13", "GPIO14"))
    assert wiring_docs.main(["--out", str(tmp_path), "--check"]) == 1
    assert "wiring.md: out of date" in capsys.readouterr().err


def test_a_moved_pin_changes_every_document(monkeypatch):
    before_md, before_svg = wiring_docs.render_wiring_md(), wiring_docs.render_pinout_svg()
    moved = tuple(replace(a, gpio=20, header_pin=38) if a.role == "undo" else a
                  for a in pinmap.TABLE_BUTTONS)
    monkeypatch.setattr(pinmap, "TABLE_BUTTONS", moved)
    after_md, after_svg = wiring_docs.render_wiring_md(), wiring_docs.render_pinout_svg()
    assert "| `undo` input, internal pull-up | GPIO20 | 38 |" in after_md
    assert "GPIO26" not in after_md.split("## Pins by number")[1]
    assert before_md != after_md
    assert "GPIO20 undo" in after_svg and "GPIO20 undo" not in before_svg


def test_every_used_role_is_in_the_docs():
    md = wiring_docs.render_wiring_md()
    for a in wiring_docs.all_assignments():
        assert f"| {a.header_pin} | GPIO{a.gpio} | {a.role} |" in md
    assert "0x3c" in md


def test_svg_is_well_formed_and_labels_each_used_pin():
    root = ET.fromstring(wiring_docs.render_pinout_svg())
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for a in wiring_docs.all_assignments():
        assert f"GPIO{a.gpio} {a.role}" in texts
    # 40 pins drawn: 39 circles for the pins plus the square pin 1, plus the legend dots.
    circles = list(root.iter("{http://www.w3.org/2000/svg}circle"))
    assert len(circles) == 39 + 6
    assert [str(n) for n in range(1, 41)] == [t for t in texts if t and t.isdigit()][:40]


def test_the_default_pin_map_is_consistent():
    check_pinmap(wiring_docs.all_assignments())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(header_pin=30), "GPIO5 is header pin 29, not 30"),
        (dict(gpio=0, header_pin=27), "reserved"),
        (dict(gpio=6, header_pin=31), "both use GPIO6"),
        (dict(ground_pin=2), "ground pin 2 is 5V, not GND"),
    ],
)
def test_pin_map_mistakes_are_named(change, message):
    bad = (replace(pinmap.TABLE_BUTTONS[0], **change), *pinmap.TABLE_BUTTONS[1:])
    with pytest.raises(PinMapError, match=message) as info:
        check_pinmap(bad)
    assert "'point'" in str(info.value) or "'three'" in str(info.value)


def test_header_table_is_the_real_header():
    gpios = [v for v in wiring_docs.HEADER.values() if isinstance(v, int)]
    assert sorted(gpios) == list(range(28))
    assert sum(1 for v in wiring_docs.HEADER.values() if v == "GND") == 8
    assert wiring_docs.header_pin_of(21) == 40
