"""The end-of-night standings and prizes as a plain text table."""

from __future__ import annotations

import sys
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.recordfile import read_record
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import Night
from bunco_pi.rules.record import replay


def standings_rows(night: Night) -> list[tuple[str, ...]]:
    weighted = night.rules.score_card.weighted_head
    names = {p.id: p.name for p in night.players}

    def key(pid: str) -> tuple[int, int, int]:
        c = night.cards[pid]
        return (-(c.weighted_wins if weighted else c.wins), -c.buncos, -c.points)

    rows = []
    for rank, pid in enumerate(sorted(night.cards, key=key), start=1):
        c = night.cards[pid]
        row = [str(rank), names[pid], str(c.wins), str(c.losses)]
        if weighted:
            row += [str(c.weighted_wins), str(c.weighted_losses)]
        row += [str(c.buncos)]
        if night.rules.scoring.baby_bunco:
            row.append(str(c.baby_buncos))
        if night.rules.wipeout.enabled:
            row.append(str(c.wipeouts))
        row.append(str(c.points))
        rows.append(tuple(row))
    return rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def render_report(night: Night) -> str:
    rules = night.rules
    header = ["#", "player", "W", "L"]
    if rules.score_card.weighted_head:
        header += ["W pts", "L pts"]
    header += ["buncos"]
    if rules.scoring.baby_bunco:
        header.append("baby")
    if rules.wipeout.enabled:
        header.append("wipeouts")
    header.append("points")
    names = {p.id: p.name for p in night.players}
    out = [f"Standings ({rules.name}, {len(night.history)} rounds, "
           f"{len(night.seating)} tables)", _table(tuple(header), standings_rows(night)), ""]
    if rules.traveler.enabled:
        out.append(f"Traveler: {names.get(night.traveler, 'nobody')}")
    if night.prizes:
        prize_rows = []
        for award in night.prizes:
            amount = f"${award.amount_cents / 100:.2f}" + ("" if award.cash else " (gift)")
            method = award.tie_break.split(":", 1)[0]
            note = f"{len(award.tied)}-way tie, {method}" if award.tied else ""
            prize_rows.append((award.name, names.get(award.player, "-"), amount, note))
        out += ["", "Prizes", _table(("prize", "winner", "amount", ""), prize_rows)]
        cash = sum(a.amount_cents for a in night.prizes if a.cash and a.player)
        out.append(f"Cash paid out: ${cash / 100:.2f}")
    return "\n".join(out)


def final_report(record: Path, rules: HouseRules, logs: Path) -> int:
    """Print a finished night's standings and its audit; the exit code of a demo night (0 when
    the record is complete and agrees with the rules)."""
    try:
        data = read_record(record)
    except UserError:
        print(f"bunco-pi demo: the head wrote no night record; see {logs}/head.log",
              file=sys.stderr)
        return 1
    print(render_report(replay(data, rules)))
    problems = audit_record(data, rules)
    for problem in problems:
        print(f"audit: {problem}", file=sys.stderr)
    print(f"\nNight record: {record}" + ("" if problems else " (audited: it agrees with the rules)"))
    return 1 if problems or not data.get("complete") else 0
