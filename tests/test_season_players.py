"""The season keeps players by a stable season id, never by name: a leaver and a late arrival
seated under the same name stay two players, and the host merges or splits players on purpose
(`bunco-pi season --merge/--split`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bunco_pi.cli import main
from bunco_pi.errors import UserError
from bunco_pi.season import load_nights, points_over_nights, season_table
from bunco_pi.season_players import PLAYERS_FILE, read_players

FIGURES = ("wins", "losses", "buncos", "baby_buncos", "points")


def _night(folder: Path, label: str, seed: int, players: int = 8) -> dict:
    path = folder / f"{label}.json"
    assert main(["sim", "--players", str(players), "--seed", str(seed), "--record",
                 str(path)]) == 0
    return json.loads(path.read_text(encoding="utf-8"))


def _rename(folder: Path, label: str, renames: dict[str, str]) -> dict:
    """Give players of a kept night other names, as a host typing them would have."""
    path = folder / f"{label}.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    for p in record["players"]:
        p["name"] = renames.get(p["id"], p["name"])
    path.write_text(json.dumps(record), encoding="utf-8")
    return record


def _totals(records: list[dict]) -> dict[str, int]:
    """Every figure of every card, added up straight from the records."""
    return {k: sum(c[k] for r in records for c in r["cards"].values()) for k in FIGURES}


def test_a_leaver_and_a_late_arrival_of_the_same_name_stay_two_players(tmp_path, capsys):
    """The host mends a mis-tapped "Leaves" by seating the same name in a ghost's seat: two
    cards under one name that night. Keyed by name, the first card's wins and points vanished;
    keyed by id, both stay, and nothing is lost or counted twice."""
    record = _night(tmp_path, "2026-03-06-club", seed=11)
    first, second = list(record["cards"])[:2]
    name = next(p["name"] for p in record["players"] if p["id"] == first)
    record = _rename(tmp_path, "2026-03-06-club", {second: name})
    rows = season_table(load_nights(tmp_path))
    same = [r for r in rows if r.name == name]
    assert len(same) == 2 and len({r.player for r in same}) == 2
    cards = record["cards"]
    assert sorted((r.wins, r.points) for r in same) == sorted(
        (cards[pid]["wins"], cards[pid]["points"]) for pid in (first, second))
    assert {k: sum(getattr(r, k) for r in rows) for k in FIGURES} == _totals([record])
    assert sum(r.nights for r in rows) == len(cards)


def test_the_same_name_on_two_nights_is_one_player_with_a_stable_id(tmp_path):
    one = _night(tmp_path, "2026-03-06-club", seed=11)
    two = _night(tmp_path, "2026-03-13-club", seed=12)
    rows = {r.name: r for r in season_table(load_nights(tmp_path))}
    names = {p["name"] for p in one["players"] if p["id"] in one["cards"]}
    assert all(rows[n].nights == 2 for n in names)
    ids = {r.name: r.player for r in rows.values()}
    # The head keeps the players; a third night where "Ann" is spelt "ann " joins Ann.
    assert main(["season", str(tmp_path)]) == 0
    three = _night(tmp_path, "2026-03-20-club", seed=13)
    ann = next(p["id"] for p in three["players"] if p["name"] == "Ann")
    _rename(tmp_path, "2026-03-20-club", {ann: "ann "})
    rows = season_table(load_nights(tmp_path))
    assert {r.player: r.nights for r in rows}[ids["Ann"]] == 3
    assert {r.name: r.player for r in rows if r.name != "ann "} == \
        {n: s for n, s in ids.items() if n != "Ann"}
    assert _totals([one, two, three])["points"] == sum(r.points for r in rows)


def test_the_host_merges_and_splits_players_on_purpose(tmp_path, capsys):
    _night(tmp_path, "2026-03-06-club", seed=11)
    record = _night(tmp_path, "2026-03-13-club", seed=12)
    # "Bea" signed in as "Beatrice" the second night: two season players until merged.
    bea = next(p["id"] for p in record["players"] if p["name"] == "Bea")
    _rename(tmp_path, "2026-03-13-club", {bea: "Beatrice"})
    rows = {r.name: r for r in season_table(load_nights(tmp_path))}
    keep, other = rows["Bea"].player, rows["Beatrice"].player
    before = sum(r.points for r in rows.values())
    capsys.readouterr()
    assert main(["season", str(tmp_path), "--merge", keep, other, "--players"]) == 0
    out = capsys.readouterr().out
    assert f"{other} merged into {keep}" in out
    assert f"2026-03-13-club/{bea} (Beatrice)" in out
    rows = {r.player: r for r in season_table(load_nights(tmp_path))}
    assert other not in rows and rows[keep].nights == 2 and rows[keep].name == "Beatrice"
    assert sum(r.points for r in rows.values()) == before
    assert read_players(tmp_path)[f"2026-03-13-club/{bea}"] == keep
    # ... and the second night's card was someone else after all: split it off again.
    assert main(["season", str(tmp_path), "--split", f"2026-03-13-club/{bea}"]) == 0
    rows = {r.player: r for r in season_table(load_nights(tmp_path))}
    assert rows[keep].nights == 1 and sum(r.points for r in rows.values()) == before
    split_id = read_players(tmp_path)[f"2026-03-13-club/{bea}"]
    assert split_id not in (keep, other) and rows[split_id].name == "Beatrice"
    series = points_over_nights(load_nights(tmp_path))
    assert series[split_id][0] == 0 and series[split_id][1] == rows[split_id].points


def test_mistaken_merges_and_a_broken_players_file_are_one_line(tmp_path, capsys):
    _night(tmp_path, "2026-03-06-club", seed=11)
    assert main(["season", str(tmp_path), "--merge", "s1", "s99"]) == 2
    assert "no season player 's99'" in capsys.readouterr().err
    assert main(["season", str(tmp_path), "--split", "2026-03-06-club/p99"]) == 2
    assert "no card '2026-03-06-club/p99'" in capsys.readouterr().err
    (tmp_path / PLAYERS_FILE).write_text('{"format": "x"}')
    with pytest.raises(UserError, match=f"{PLAYERS_FILE}: not a bunco-pi list"):
        load_nights(tmp_path)
    (tmp_path / PLAYERS_FILE).write_text('{"format": "bunco-pi-season-players/1", "players": '
                                         '{"s1": ["a/p1"], "s2": ["a/p1"]}}')
    assert main(["season", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "card 'a/p1' is with s1 and s2" in err and err.count("\n") == 1
