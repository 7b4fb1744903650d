"""scripts/face_reader_boxes.py: the face reader at the finder's box and at the label's, counted
against the labels (a rendered plain throw of three, kept with the refusal tests)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "face_reader_boxes.py"
ROLL = Path(__file__).with_name("fixtures") / "refusals" / "roll"


def folder(tmp_path: Path, labels: str | None = None) -> Path:
    """A labelled folder of the one throw; ``labels`` in place of its own."""
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    shutil.copy(ROLL.with_suffix(".jpg"), tmp_path / "images" / "roll.jpg")
    (tmp_path / "labels" / "roll.txt").write_text(labels or ROLL.with_suffix(".txt").read_text())
    return tmp_path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def box_counts(out: str) -> dict[str, tuple[int, int]]:
    counts = {}
    for line in out.splitlines():
        box, sep, rest = line.partition(": ")
        if sep and rest.endswith(" wrong and sure"):
            right, wrong = rest.split(" right and sure, ")
            counts[box] = (int(right), int(wrong.split()[0]))
    return counts


def test_each_die_found_is_counted_once_at_each_box(tmp_path):
    result = run(str(folder(tmp_path)), "--split", "all")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("3 labelled dice found")
    counts = box_counts(result.stdout)
    assert len(counts) == 4
    assert counts["the label's box"] == (3, 0)  # the throw's 2, 3 and 2, read at their labels
    assert all(right + wrong <= 3 for right, wrong in counts.values())


def test_a_die_labelled_another_face_is_counted_wrong_not_right(tmp_path):
    own = ROLL.with_suffix(".txt").read_text().splitlines()
    relabelled = "\n".join(["5" + own[0][1:], *own[1:]])  # the first die's 2 labelled a 6
    result = run(str(folder(tmp_path, relabelled)), "--split", "all", "--list")
    assert result.returncode == 0, result.stderr
    assert box_counts(result.stdout)["the label's box"] == (2, 1)
    assert "roll (" not in result.stdout  # nothing read right at the label's box alone


@pytest.mark.parametrize("args, says", [
    (["--faces", "no-such-reader.onnx"], "no-such-reader.onnx: no such dice face reader file"),
    (["--split", "nosuch"], "unknown split 'nosuch'"),
])
def test_a_user_mistake_is_one_line_naming_it(tmp_path, args, says):
    result = run(str(folder(tmp_path)), *args)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and says in result.stderr and "Traceback" not in result.stderr


def test_a_reading_short_of_sure_is_counted_neither_right_nor_wrong(tmp_path):
    result = run(str(folder(tmp_path)), "--split", "all", "--sure", "1.01")  # no belief is that sure
    assert result.returncode == 0, result.stderr
    assert set(box_counts(result.stdout).values()) == {(0, 0)}
