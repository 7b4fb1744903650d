"""hardware/enclosure/pico_box.scad renders, without warnings, to one solid per part."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

SCAD = Path(__file__).resolve().parents[1] / "hardware" / "enclosure" / "pico_box.scad"
OPENSCAD = shutil.which("openscad")


@pytest.mark.skipif(OPENSCAD is None, reason="openscad is not installed (Debian package: openscad)")
@pytest.mark.parametrize("part", ["base", "lid"])
def test_each_part_is_one_clean_solid(tmp_path, part):
    out = tmp_path / "part.stl"
    result = subprocess.run([OPENSCAD, "-D", f'part="{part}"', "-D", "$fn=16", "-o", str(out),
                             str(SCAD)], capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log and "ERROR" not in log, log
    # CGAL counts the outside as a volume: 2 means one closed solid, nothing floating loose.
    assert re.search(r"Volumes:\s+2\b", log), log
    assert out.stat().st_size > 5_000
