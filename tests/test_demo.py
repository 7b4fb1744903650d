"""`bunco-pi demo`: the README's main job."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bunco_pi.cli import main
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset, preset_text
from tests.conftest import _require_mosquitto


@pytest.mark.slow
def test_a_full_24_round_night_with_separate_processes_over_mosquitto(tmp_path):
    """The head and 3 tables as separate processes, virtual scorekeepers pressing virtual
    buttons: the night record is valid, every roll scored right, W/L adding up, the pot paid."""
    _require_mosquitto()
    record = tmp_path / "night.json"
    done = subprocess.run(
        [sys.executable, "-m", "bunco_pi.cli", "demo", "--full", "--fast", "--no-screens", "--record",
         str(record), "--workdir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads(record.read_text())
    assert data["complete"] and len(data["rounds"]) == 24
    assert audit_record(data, preset("classic")) == []
    assert sum(p["amount"] for p in data["prizes"] if p["cash"]) == pytest.approx(60.0)
    assert "Cash paid out: $60.00" in done.stdout
    assert "audited: it agrees with the rules" in done.stdout
    # each table was a process of its own, and each wrote its own outbox
    outboxes = sorted(p.name for p in (tmp_path / "work").glob("table-*/outbox-*.sqlite"))
    assert outboxes == [f"outbox-demo-table-{n}.sqlite" for n in (1, 2, 3)]


def test_without_mosquitto_it_says_so_and_plays_in_one_process(tmp_path, monkeypatch, capsys):
    import bunco_pi.net.broker as broker
    from bunco_pi.errors import UserError

    def missing() -> str:
        raise UserError("mosquitto (the MQTT broker) is not installed: sudo apt-get install mosquitto")

    monkeypatch.setattr(broker, "find_mosquitto", missing)
    rules = tmp_path / "short.toml"
    rules.write_text(preset_text("individual").replace("targets = [1, 2, 3, 4, 5, 6]",
                                                       "targets = [1, 2]"))
    record = tmp_path / "night.json"
    code = main(["demo", "--fast", "--tables", "2", "--rules", str(rules), "--record",
                 str(record), "--workdir", str(tmp_path / "work")])
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    assert "in-process link" in out.err and "not installed" in out.err
    data = json.loads(record.read_text())
    assert data["complete"] and len(data["rounds"]) == 2
    assert audit_record(data, parse_rules(rules.read_text())) == []


@pytest.mark.parametrize("argv, problem", [
    (["--tables", "0"], "--tables must be 1 to 500"),
    (["--tables", "2", "--players", "9"], "--players must be 1 to 8"),
    (["--rules", "nosuch"], "neither a preset"),
])
def test_bad_options_are_one_line(argv, problem, capsys, tmp_path):
    assert main(["demo", "--workdir", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0]
