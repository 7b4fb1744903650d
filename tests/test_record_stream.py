"""The night record written in pieces (a 500-table night's record never stands whole in
memory) is byte for byte the record written in one piece."""

from __future__ import annotations

import json

import pytest

from bunco_pi import recordfile
from bunco_pi.recordfile import read_record, record_chunks, write_record
from bunco_pi.rules.house import preset
from bunco_pi.rules.record import build_record, record_items
from bunco_pi.sim.players import simulate_night


@pytest.mark.parametrize("chunk", [1, 7, 200])
def test_a_streamed_record_is_the_record_json_dumps_writes(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(recordfile, "CHUNK_ITEMS", chunk)
    result = simulate_night(preset("classic"), 12, 4)
    whole = build_record(result.night, result.log, seed=4, source="sim")
    expected = json.dumps(whole, separators=(",", ":")) + "\n"
    streamed = tmp_path / "streamed.json"
    write_record(streamed, record_items(result.night, result.log, seed=4, source="sim"))
    assert streamed.read_text(encoding="utf-8") == expected
    written = tmp_path / "dict.json"
    write_record(written, whole)
    assert written.read_text(encoding="utf-8") == expected
    assert read_record(streamed) == whole
    assert "".join(record_chunks({"a": [], "b": {"c": [1]}, "d": "é"})) == \
        json.dumps({"a": [], "b": {"c": [1]}, "d": "é"}, separators=(",", ":"))


def test_the_rounds_and_the_log_are_made_only_as_they_are_written():
    result = simulate_night(preset("classic"), 8, 2)
    items = dict(record_items(result.night, result.log, seed=2, source="sim"))
    rounds, log = items["rounds"], items["log"]
    assert not isinstance(rounds, list) and not isinstance(log, list)
    assert len(list(rounds)) == len(result.night.history)
    assert len(list(log)) == len(result.log)
