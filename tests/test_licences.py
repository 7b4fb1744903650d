"""The repository says what licence it is under, and every data file is listed in LICENSES.md."""

import fnmatch
import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What counts as data rather than source: what a reader cannot review as text, or did not write.
DATA_SUFFIXES = {".onnx", ".json", ".npz", ".png", ".svg", ".stl", ".3mf", ".scad", ".jpg"}
DATA_UNDER = ("bunco_pi/", "docs/", "hardware/", "tests/golden/")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split()
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".venv" not in p.parts]


def listed_patterns() -> list[str]:
    text = (ROOT / "LICENSES.md").read_text(encoding="utf-8")
    table = text.split("## Data in the repository", 1)[1].split("\n## ", 1)[0]
    return [p for row in table.splitlines() if row.startswith("| `")
            for p in re.findall(r"`([^`]+)`", row.split("|")[1])]


def test_licence_is_mit_as_pyproject_says():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_every_data_file_is_listed():
    patterns = listed_patterns()
    assert patterns, "LICENSES.md lists no files"
    data = [f for f in tracked_files()
            if Path(f).suffix.lower() in DATA_SUFFIXES and f.startswith(DATA_UNDER)]
    assert data
    unlisted = [f for f in data if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert not unlisted, f"add these to LICENSES.md's data table: {unlisted}"


def test_every_listed_pattern_names_files():
    # A line left behind for files that are gone misleads as much as a missing one.
    files = tracked_files()
    stale = [p for p in listed_patterns() if not any(fnmatch.fnmatch(f, p) for f in files)]
    assert not stale, f"LICENSES.md lists files that do not exist: {stale}"
