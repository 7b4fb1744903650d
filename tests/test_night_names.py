"""A whole night of three tables whose players have names in other scripts, a late arrival
seated between rounds through the host's desk: every table draws every frame (no "cannot draw",
no frame left from before), and every table ends on the prizes screen."""

from __future__ import annotations

import time

from bunco_pi.console.desk import arrive
from bunco_pi.head.service import HeadTask, make_players
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.sim.inprocess_night import InprocessNight
from bunco_pi.table.screens import EndView, render

NAMES = ["Наташа", "O\u2019Brien", "王秀英", "Ελένη", "Małgorzata", "Růžena", "Nguyễn Thị",
         "فاطمة", "שרה", "Ann 🎲"]
LATE = "佐藤花子"


def _wait(predicate, what, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_night_with_names_in_ten_scripts_and_a_late_arrival_draws_on_every_table(
        tmp_path, capfd):
    text = preset_text("individual").replace("targets = [1, 2, 3, 4, 5, 6]", "targets = [1, 2]")
    rules = parse_rules(text)
    night = InprocessNight(rules, text, 3, len(NAMES), tmp_path, tmp_path / "night.json",
                           fast=False, seed=4, pace="fast")  # the host waits 2.5 s a phase
    night.players = make_players(NAMES, None, 3)
    ghost = next(p.id for p in night.players if p.ghost)
    night.start()
    try:
        _wait(lambda: night.coordinator.night is not None
              and night.coordinator.night.phase == "results", "the first round's results", 90)
        task = HeadTask(arrive(ghost, LATE))  # the console's own request, on the head's thread
        night.service.link.inbox.put(task)
        assert task.done.result(15) == f"{LATE} takes the seat"
        _wait(lambda: night.coordinator.ended, "the night's end", 120)
        _wait(lambda: all(box.node.mode == "ended" for box in night.boxes),
              "every table's prizes screen", 30)
        for box in night.boxes:
            assert box.node.sync(5.0)
        err = capfd.readouterr().err
        assert "cannot draw" not in err, err[-2000:]
        winners = {w for box in night.boxes for _, w in box.node.view().prizes}
        assert winners and winners <= set(NAMES) | {LATE}
        for box in night.boxes:
            view = box.node.view()
            assert isinstance(view, EndView)
            shown = box.sink.device.image.convert("1").tobytes()
            assert shown == render(view).tobytes(), f"table {box.node.table_number}: stale"
        late = night.coordinator.night.player(ghost)
        assert (late.name, late.ghost) == (LATE, False)
    finally:
        night.close()
