"""hardware/enclosure/table_box.scad renders, without warnings, to one solid per part."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

SCAD = Path(__file__).resolve().parents[1] / "hardware" / "enclosure" / "table_box.scad"
OPENSCAD = shutil.which("openscad")


@pytest.mark.skipif(OPENSCAD is None, reason="openscad is not installed (Debian package: openscad)")
@pytest.mark.parametrize(
    "defines",
    [
        ['part="base"'],
        ['part="lid"'],
        ['part="base"', "head=true", 'pi="full"'],
        ['part="lid"', "head=true", 'pi="full"'],
    ],
    ids=["table-base", "table-lid", "head-base", "head-lid"],
)
def test_each_part_is_one_clean_solid(tmp_path, defines):
    # Coarse circles keep the render to a second or two; the shape is the same.
    args = [a for d in [*defines, "$fn=16"] for a in ("-D", d)]
    out = tmp_path / "part.stl"
    result = subprocess.run([OPENSCAD, *args, "-o", str(out), str(SCAD)],
                            capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log and "ERROR" not in log, log
    # CGAL counts the outside as a volume: 2 means one closed solid, nothing floating loose.
    assert re.search(r"Volumes:\s+2\b", log), log
    assert out.stat().st_size > 10_000


# --- the committed exports (hardware/enclosure/export/, scripts/export_enclosure.py) -----------

def _exporter():
    import importlib.util
    import sys

    if "export_enclosure" in sys.modules:
        return sys.modules["export_enclosure"]
    spec = importlib.util.spec_from_file_location(
        "export_enclosure", Path(__file__).resolve().parents[1] / "scripts" / "export_enclosure.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_box_listed_has_its_exports_from_its_current_source():
    """Fast, no OpenSCAD: a .scad (or a box's settings) changed and its exports did not."""
    exporter = _exporter()
    boxes = exporter.load_boxes()
    assert {"table", "head"} <= {b.name for b in boxes}
    assert exporter.stale_sources(boxes) == [], (
        "run `python3 scripts/export_enclosure.py` and commit hardware/enclosure/export/")
    for box in boxes:
        for name in [*box.files(), *(n for n, _ in box.pictures())]:
            assert (exporter.EXPORT / name).stat().st_size > 1000, name


def test_a_changed_scad_is_seen(tmp_path):
    exporter = _exporter()
    (box,) = [b for b in exporter.load_boxes() if b.name == "table"]
    changed = tmp_path / box.scad.name
    changed.write_text(box.scad.read_text().replace("wall = 2.4;", "wall = 2.6;"))
    moved = exporter.Box(box.name, changed, box.settings, box.parts, box.open, box.closed)
    assert exporter.stale_sources([moved]) == ["table"]


def test_geometry_is_compared_whatever_the_triangle_order(tmp_path):
    exporter = _exporter()
    a = tmp_path / "a.stl"
    b = tmp_path / "b.stl"
    facets = ["facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n"
              " endloop\nendfacet\n",
              "facet normal 0 0 1\n outer loop\n  vertex 1 1 0\n  vertex 0 1 0\n  vertex 1 0 0\n"
              " endloop\nendfacet\n"]
    a.write_text("solid x\n" + "".join(facets) + "endsolid x\n")
    # the same triangles, in the other order, each starting at another corner
    turned = [f.replace("vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0",
                        "vertex 1 0 0\n  vertex 0 1 0\n  vertex 0 0 0") for f in facets]
    b.write_text("solid x\n" + "".join(reversed(turned)) + "endsolid x\n")
    assert exporter.geometry_hash(a) == exporter.geometry_hash(b)
    flipped = tmp_path / "c.stl"  # the same corners, the other way round: a different face
    flipped.write_text(a.read_text().replace("vertex 1 0 0\n  vertex 0 1 0",
                                             "vertex 0 1 0\n  vertex 1 0 0", 1))
    assert exporter.geometry_hash(a) != exporter.geometry_hash(flipped)


def test_a_box_list_mistake_is_one_line(tmp_path):
    exporter = _exporter()
    path = tmp_path / "boxes.toml"
    path.write_text('boxes = [ { name = "pico", scad = "pico_box.scad", parts = ["base"] } ]\n')
    with pytest.raises(exporter.ExportError) as err:
        exporter.load_boxes(path)
    assert "box 1 (pico): scad = 'pico_box.scad' is not a .scad file" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.slow
@pytest.mark.skipif(OPENSCAD is None, reason="openscad is not installed (Debian package: openscad)")
def test_openscad_makes_the_committed_exports_again():
    """Every STL and 3MF exported afresh (as CI does) has the committed file's geometry."""
    exporter = _exporter()
    manifest = json.loads((exporter.EXPORT / exporter.MANIFEST).read_text())
    if manifest["openscad"] != exporter.openscad_version():
        pytest.skip(f"exports made by {manifest['openscad']}, this is "
                    f"{exporter.openscad_version()}: triangulations may differ")
    assert exporter.differences(exporter.load_boxes()) == []
