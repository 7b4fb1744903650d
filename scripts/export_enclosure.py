#!/usr/bin/env python3
"""Export every box of hardware/enclosure/boxes.toml to STL and 3MF, and draw each open and closed.

    python3 scripts/export_enclosure.py            # write hardware/enclosure/export/
    python3 scripts/export_enclosure.py --check    # export again into a temporary folder and
                                                   # say which committed file differs (exit 1)
    python3 scripts/export_enclosure.py --no-pictures

OpenSCAD writes the same solid with its triangles in a different order from one run to the
next, so files are compared by their geometry: every triangle, its corners rounded to a
micrometre and turned to start at its smallest corner (orientation kept), sorted and hashed.
`export/manifest.json` keeps that hash of each file and a hash of each box's source and
settings, so a test sees at once when a .scad changed and its exports did not. Pictures need
OpenGL: without a display the script runs OpenSCAD under xvfb-run (Debian's xvfb).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ENCLOSURE = Path(__file__).resolve().parent.parent / "hardware" / "enclosure"
BOXES = ENCLOSURE / "boxes.toml"
EXPORT = ENCLOSURE / "export"
MANIFEST = "manifest.json"
FORMATS = ("stl", "3mf")
PICTURE_SIZE = "1000,640"
DIGITS = 3  # corners rounded to a micrometre: OpenSCAD prints 6 significant digits


class ExportError(Exception):
    """A one-line reason the export cannot go on."""


@dataclass(frozen=True)
class Box:
    name: str
    scad: Path
    settings: dict[str, object] = field(default_factory=dict)
    parts: tuple[str, ...] = ()
    open: str = ""
    closed: str = ""

    def defines(self, part: str) -> list[str]:
        values = {"part": part, **self.settings}
        return [arg for key, value in values.items() for arg in ("-D", f"{key}={_scad(value)}")]

    def source_hash(self) -> str:
        """What the exports are made from: the .scad text, the settings and the parts."""
        digest = hashlib.sha256(self.scad.read_bytes())
        digest.update(json.dumps([self.settings, self.parts, self.open, self.closed],
                                 sort_keys=True).encode())
        return digest.hexdigest()

    def files(self) -> Iterator[str]:
        for part in self.parts:
            for fmt in FORMATS:
                yield f"{self.name}-{part}.{fmt}"

    def pictures(self) -> list[tuple[str, str]]:
        return [(f"{self.name}-{view}.png", part)
                for view, part in (("open", self.open), ("closed", self.closed)) if part]


def _scad(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise ExportError(f"{value!r}: a setting is true/false, a number or a string")


def load_boxes(path: Path = BOXES) -> list[Box]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExportError(f"{path}: {exc}") from None
    entries = doc.get("boxes")
    if not isinstance(entries, list) or not entries:
        raise ExportError(f"{path}: needs boxes = [ {{ name = ..., scad = ..., parts = [...] }} ]")
    boxes: list[Box] = []
    for i, entry in enumerate(entries, start=1):
        where = f"{path} box {i}"
        if not isinstance(entry, dict):
            raise ExportError(f"{where}: not a table")
        unknown = set(entry) - {"name", "scad", "set", "parts", "open", "closed"}
        if unknown:
            raise ExportError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        name = entry.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            raise ExportError(f"{where}: name must be lowercase letters, digits and '-'")
        if name in (b.name for b in boxes):
            raise ExportError(f"{where}: a second box named {name!r}")
        scad = path.parent / str(entry.get("scad", ""))
        if not scad.is_file() or scad.suffix != ".scad":
            raise ExportError(f"{where} ({name}): scad = {entry.get('scad')!r} is not a .scad "
                              f"file beside {path.name}")
        parts = entry.get("parts")
        if not isinstance(parts, list) or not parts or not all(
                isinstance(p, str) and re.fullmatch(r"[a-z][a-z0-9_-]*", p) for p in parts):
            raise ExportError(f"{where} ({name}): parts must be a list of part names")
        settings = entry.get("set", {})
        if not isinstance(settings, dict):
            raise ExportError(f"{where} ({name}): set must be a table of settings")
        for value in settings.values():
            _scad(value)
        boxes.append(Box(name, scad, settings, tuple(parts), str(entry.get("open", "")),
                         str(entry.get("closed", ""))))
    return boxes


# --- OpenSCAD -------------------------------------------------------------------------------

def openscad() -> str:
    exe = shutil.which("openscad")
    if exe is None:
        raise ExportError("openscad is not installed: `apt-get install openscad`")
    return exe


def openscad_version() -> str:
    out = subprocess.run([openscad(), "--version"], capture_output=True, text=True, timeout=60)
    return (out.stdout + out.stderr).strip().splitlines()[-1]


def export_part(box: Box, part: str, out: Path) -> None:
    result = subprocess.run([openscad(), *box.defines(part), "-o", str(out), str(box.scad)],
                            capture_output=True, text=True, timeout=1800)
    log = result.stdout + result.stderr
    if result.returncode != 0 or "WARNING" in log or "ERROR" in log or not out.is_file():
        last = (log.strip().splitlines() or ["no output"])[-1]
        raise ExportError(f"{box.scad.name} part {part} -> {out.name}: {last}")


def draw_picture(box: Box, part: str, out: Path) -> None:
    command = [openscad(), *box.defines(part), "--render", "--viewall", "--autocenter",
               f"--imgsize={PICTURE_SIZE}", "--colorscheme=Tomorrow", "-o", str(out),
               str(box.scad)]
    if not os.environ.get("DISPLAY"):
        if shutil.which("xvfb-run") is None:
            raise ExportError("pictures need a display, or xvfb-run: `apt-get install xvfb`")
        command = ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        last = ((result.stdout + result.stderr).strip().splitlines() or ["no output"])[-1]
        raise ExportError(f"{box.scad.name} {part} -> {out.name}: {last}")


# --- geometry -------------------------------------------------------------------------------

Triangle = tuple[tuple[float, float, float], ...]


def _canonical(corners: Sequence[tuple[float, float, float]]) -> Triangle:
    a, b, c = (tuple(round(x, DIGITS) + 0.0 for x in p) for p in corners)
    return min((a, b, c), (b, c, a), (c, a, b))


def stl_triangles(path: Path) -> list[Triangle]:
    text = path.read_text(encoding="ascii", errors="replace")
    if not text.lstrip().startswith("solid"):
        raise ExportError(f"{path}: not an ASCII STL file")
    numbers = re.findall(r"vertex\s+(\S+)\s+(\S+)\s+(\S+)", text)
    points = [tuple(float(x) for x in p) for p in numbers]
    if len(points) % 3:
        raise ExportError(f"{path}: {len(points)} corners do not make whole triangles")
    return sorted(_canonical(points[i:i + 3]) for i in range(0, len(points), 3))


def threemf_triangles(path: Path) -> list[Triangle]:
    try:
        with zipfile.ZipFile(path) as archive:
            model = archive.read("3D/3dmodel.model").decode("utf-8")
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ExportError(f"{path}: not a 3MF file ({exc})") from None
    vertices = [(float(x), float(y), float(z)) for x, y, z in re.findall(
        r'<vertex\s+x="([^"]+)"\s+y="([^"]+)"\s+z="([^"]+)"', model)]
    faces = re.findall(r'<triangle\s+v1="(\d+)"\s+v2="(\d+)"\s+v3="(\d+)"', model)
    return sorted(_canonical([vertices[int(i)] for i in face]) for face in faces)


def triangles(path: Path) -> list[Triangle]:
    return stl_triangles(path) if path.suffix == ".stl" else threemf_triangles(path)


def geometry_hash(path: Path) -> str:
    digest = hashlib.sha256()
    for triangle in triangles(path):
        digest.update(repr(triangle).encode())
    return digest.hexdigest()


# --- the whole export -------------------------------------------------------------------------

def export_all(boxes: Sequence[Box], folder: Path, pictures: bool = True,
               jobs: int = 2) -> dict[str, object]:
    """Every part of every box into ``folder``; returns the manifest (also written there)."""
    folder.mkdir(parents=True, exist_ok=True)
    work = [(box, part, folder / f"{box.name}-{part}.{fmt}")
            for box in boxes for part in box.parts for fmt in FORMATS]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda job: export_part(*job), work))
        if pictures:
            list(pool.map(lambda job: draw_picture(*job),
                          [(box, part, folder / name) for box in boxes
                           for name, part in box.pictures()]))
    manifest = {
        "about": "Made by scripts/export_enclosure.py; geometry hashes as it computes them.",
        "openscad": openscad_version(),
        "boxes": {box.name: {"source": box.source_hash(),
                             "files": {name: geometry_hash(folder / name)
                                       for name in box.files()}}
                  for box in boxes},
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                   encoding="utf-8")
    return manifest


def stale_sources(boxes: Sequence[Box], folder: Path = EXPORT) -> list[str]:
    """Boxes whose .scad, settings or parts changed since their files were exported."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [box.name for box in boxes]
    recorded = manifest.get("boxes", {})
    return [box.name for box in boxes
            if recorded.get(box.name, {}).get("source") != box.source_hash()]


def differences(boxes: Sequence[Box], folder: Path = EXPORT, jobs: int = 2) -> list[str]:
    """Export again into a temporary folder; one line per committed file that differs."""
    problems = [f"{name}: its .scad or settings changed since the export: run "
                "`python3 scripts/export_enclosure.py`" for name in stale_sources(boxes, folder)]
    with tempfile.TemporaryDirectory(prefix="bunco-enclosure-") as tmp:
        fresh = export_all(boxes, Path(tmp), pictures=False, jobs=jobs)
        for box in boxes:
            for name in box.files():
                committed = folder / name
                if not committed.is_file():
                    problems.append(f"{committed}: missing")
                elif geometry_hash(committed) != fresh["boxes"][box.name]["files"][name]:
                    problems.append(f"{committed}: not what {box.scad.name} makes now")
            for name, _ in box.pictures():
                if not (folder / name).is_file():
                    problems.append(f"{folder / name}: missing")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed exports with a fresh export; write nothing")
    parser.add_argument("--no-pictures", action="store_true", help="skip the PNG pictures")
    parser.add_argument("--jobs", type=int, default=2, help="OpenSCAD runs at once (default 2)")
    args = parser.parse_args(argv)
    try:
        boxes = load_boxes()
        if args.check:
            problems = differences(boxes, jobs=args.jobs)
            for line in problems:
                print(line, file=sys.stderr)
            if not problems:
                print(f"{sum(len(list(b.files())) for b in boxes)} files match their .scad")
            return 1 if problems else 0
        export_all(boxes, EXPORT, pictures=not args.no_pictures, jobs=args.jobs)
    except ExportError as exc:
        print(f"export_enclosure: {exc}", file=sys.stderr)
        return 2
    print(f"exported {', '.join(b.name for b in boxes)} to {EXPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
