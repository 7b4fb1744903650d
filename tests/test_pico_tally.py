"""The Pico box's fold of its round's play (``table/tally.py``) against the rules engine.

The reference is the engine itself on CPython (``TableRound``, which the head and the Pi box
fold every entry through), fed the same entries: random rounds of rolls, tallies, passes,
undos and the bell under each of the four groups' presets, and the same again under the
MicroPython unix port (the very file that goes onto the Pico)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bunco_pi.head.views import fold_rules
from bunco_pi.rules import entries as codec
from bunco_pi.rules.house import PRESET_NAMES, preset
from bunco_pi.rules.table_round import (
    FINISHING,
    PLAYING,
    RuleViolation,
    TableRound,
    TableSetup,
)
from bunco_pi.table import tally
from tests.pico_boxes import micropython

ROOT = Path(__file__).resolve().parent.parent
SEATS = ("p1", "p2", "p3", "p4")


def random_round(rng: random.Random, length: int) -> list[list[Any]]:
    out: list[list[Any]] = []
    for _ in range(length):
        pick = rng.random()
        if pick < 0.45:
            out.append(["roll", [rng.randint(1, 6) for _ in range(3)]])
        elif pick < 0.62:
            out.append(["tally", "point"])
        elif pick < 0.67:
            out.append(["tally", "three"])
        elif pick < 0.69:
            out.append(["tally", "three", 2])
        elif pick < 0.71:
            out.append(["tally", "bunco"])
        elif pick < 0.73:
            out.append(["tally", "wipeout"])
        elif pick < 0.88:
            out.append(["pass"])
        elif pick < 0.97:
            out.append(["undo"])
        else:
            out.append(["bell"])
    return out


def engine_run(rules_name: str, target: int, ghosts: frozenset[str], can_end: bool,
               wire: list[list[Any]]) -> list[Any]:
    """What the engine says after each entry: the scores, the roller, the bell and whether the
    play is over, or "refused"; ``None`` once the play is over (the head's from there)."""
    state = TableRound.begin(TableSetup(table=1, seats=SEATS, target=target,
                                        rules=preset(rules_name), can_end_round=can_end,
                                        ghosts=ghosts))
    out: list[Any] = []
    for entry in wire:
        if state.phase not in (PLAYING, FINISHING):
            out.append(None)
            continue
        try:
            state = state.apply(codec.decode_entry(entry))
        except RuleViolation:
            out.append("refused")
            continue
        playing = state.phase in (PLAYING, FINISHING)
        # from the end of play on (extra rolls, a roll-off, the result) it is the head's
        out.append([list(state.seat_points), state.roller_seat if playing else 0, state.bell,
                    not playing])
    return out


def tally_run(rules: dict[str, Any], target: int, ghost_seats: list[int], can_end: bool,
              wire: list[list[Any]]) -> list[Any]:
    play = tally.Play(rules, target, ghost_seats, can_end)
    out: list[Any] = []
    for entry in wire:
        if play.over:
            out.append(None)
            continue
        try:
            play.apply(entry)
        except tally.Refused:
            out.append("refused")
            continue
        out.append([list(play.points), 0 if play.over else play.roller_seat, play.bell,
                    play.over])
    return out


CASES = [(name, seed) for name in PRESET_NAMES for seed in range(40)]


def case(name: str, seed: int) -> tuple[dict[str, Any], int, list[int], bool, list[list[Any]]]:
    rng = random.Random(f"{name}-{seed}")
    target = rng.randint(1, 6)
    ghost_seats = [rng.randint(1, 4)] if seed % 5 == 0 else []
    can_end = seed % 3 != 0
    return fold_rules(preset(name)), target, ghost_seats, can_end, random_round(rng, 120)


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_the_fold_is_the_engines_entry_for_entry(name: str, seed: int) -> None:
    rules, target, ghost_seats, can_end, wire = case(name, seed)
    ghosts = frozenset(SEATS[s - 1] for s in ghost_seats)
    expected = engine_run(name, target, ghosts, can_end, wire)
    assert tally_run(rules, target, ghost_seats, can_end, wire) == expected
    assert any(step not in (None, "refused") for step in expected)  # it played


def test_the_rounds_reach_every_corner() -> None:
    """The random rounds are not all alike: between them they end by the goal, by a BUNCO
    and by the bell, refuse entries, and finish a turn after the bell."""
    seen = set()
    for name, seed in CASES:
        rules, target, ghost_seats, can_end, wire = case(name, seed)
        play = tally.Play(rules, target, ghost_seats, can_end)
        for entry in wire:
            if play.over:
                break
            try:
                play.apply(entry)
            except tally.Refused:
                seen.add("refused")
                continue
            if play.phase == tally.FINISHING:
                seen.add("finishing")
        if play.over:
            seen.add("bell" if play.bell and max(play.team_scores) < rules["goal"]
                     and not any(play.buncos) else "ended")
        if any(play.buncos):
            seen.add("bunco")
    assert seen >= {"refused", "finishing", "bell", "ended", "bunco"}


def test_under_micropython_the_fold_is_the_same(tmp_path: Path) -> None:
    exe = micropython()
    (tmp_path / "tally.py").write_bytes((ROOT / "bunco_pi" / "table" / "tally.py").read_bytes())
    script = tmp_path / "run_tally.py"
    script.write_text(
        "import json, sys, tally\n"
        "for line in sys.stdin:\n"
        "    rules, target, ghosts, can_end, wire = json.loads(line)\n"
        "    play = tally.Play(rules, target, ghosts, can_end)\n"
        "    out = []\n"
        "    for entry in wire:\n"
        "        if play.over:\n"
        "            out.append(None)\n"
        "            continue\n"
        "        try:\n"
        "            play.apply(entry)\n"
        "        except tally.Refused:\n"
        "            out.append('refused')\n"
        "            continue\n"
        "        out.append([list(play.points), 0 if play.over else play.roller_seat, play.bell,\n"
        "                    play.over])\n"
        "    print(json.dumps(out))\n")
    chosen = CASES[::7]
    lines = "".join(json.dumps(case(name, seed)) + "\n" for name, seed in chosen)
    done = subprocess.run([exe, "-X", "heapsize=128k", str(script)], input=lines,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={"MICROPYPATH": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(got) == len(chosen)
    for (name, seed), result in zip(chosen, got, strict=True):
        rules, target, ghost_seats, can_end, wire = case(name, seed)
        ghosts = frozenset(SEATS[s - 1] for s in ghost_seats)
        assert result == engine_run(name, target, ghosts, can_end, wire), (name, seed)


@pytest.mark.parametrize(("name", "seed"), CASES[::3])
def test_a_held_undo_takes_back_the_turn_the_pi_box_takes_back(name: str, seed: int) -> None:
    from bunco_pi.table.book import RoundBook

    rules, target, ghost_seats, can_end, wire = case(name, seed)
    ghosts = frozenset(SEATS[s - 1] for s in ghost_seats)
    book = RoundBook(preset(name), 1, 1, 1, target, SEATS, can_end, ghosts=ghosts)
    play = tally.Play(rules, target, ghost_seats, can_end)
    checked = 0
    for entry in wire:
        if play.over:
            break
        try:
            book = book.add(json_entry(entry))
        except RuleViolation:
            continue
        play.apply(entry)
        whole = book.undo_turn()
        assert play.undo_turn_count() == (whole["undo"] if whole else 0)
        checked += 1
    assert checked > 0


def json_entry(wire: list[Any]) -> dict[str, Any]:
    """The Pi box's form of an entry (``table/game.py``)."""
    kind = wire[0]
    if kind == "roll":
        return {"roll": list(wire[1])}
    if kind == "tally":
        return {"tally": wire[1], **({"face": wire[2]} if len(wire) > 2 else {})}
    return {"pass": True} if kind == "pass" else {"bell": True} if kind == "bell" \
        else {"undo": 1}
