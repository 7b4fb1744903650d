"""Where a table's entry may happen: the engine's one answer, asked at the door.

A table's entry is one of ``roll``, ``tally``, ``pass``, ``bell``, ``undo`` (the codec's names,
``rules/entries.py``). Whether it can happen depends on three places, and each is decided
once, here or in the fold that owns it:

- the night: a round is being played (``playing``, or ``finishing`` once the bell rang), the
  table plays tonight, and a ``bell`` only once the night's bell has latched (the host rang it,
  or a table that may end the round ended it): ``night_refusal``, asked by ``Night.apply``;
- the table's round: once its finishing turn and roll-offs are over, only ``AFTER_PLAY``
  entries (``TableRound.apply``, which also refuses dice that are not dice, a tally these
  house rules do not play, and an undo with nothing to take back);
- the round an entry is tagged with (``protocol.TableEvent``): ``round_refusal``, asked by the
  head's coordinator, since the night's fold does not see the tag.

The head applies a table's entry only if the engine takes it, so it never logs one the night
record's audit (``rules/audit/``) would flag; the audit decides the same questions from the
record with code of its own, sharing none of this.
"""

from __future__ import annotations

ENTRY_KINDS = ("roll", "tally", "pass", "bell", "undo")
# The night's phases in which a table's entry counts: its round is being played.
ROUND_PHASES = ("playing", "finishing")
# A table whose finishing turn and roll-offs are over can still hear the bell (which changes
# nothing there) and take back its last roll, tally or pass (which reopens it while the round
# is not closed); a roll, a tally or a pass there can no longer happen.
AFTER_PLAY = frozenset({"bell", "undo"})

BELL_NOT_RUNG = ("a bell nobody rang: no table has ended the round and the host has not "
                 "rung it")
PLAY_OVER = "the round is over at this table (its finishing turn and roll-offs are done)"


def night_refusal(phase: str, bell_rung: bool, tables: int, table: int,
                  kind: str) -> str | None:
    """Why table ``table``'s ``kind`` of entry cannot happen in a night at ``phase`` (with
    ``tables`` tables in play and its bell ``bell_rung``), or None if the night takes it."""
    if phase not in ROUND_PHASES:
        return f"no round is being played (the night is '{phase}')"
    if not 1 <= table <= tables:
        return f"there is no table {table} tonight"
    if kind == "bell" and not bell_rung:
        return BELL_NOT_RUNG
    return None


def round_refusal(entry_round: int, round_on: int | None) -> str | None:
    """Why an entry tagged for round ``entry_round`` (0-based) cannot count while
    ``round_on`` is being played (None: no round is), or None."""
    if round_on is None or entry_round == round_on:
        return None
    return f"entry for round {entry_round + 1}, but round {round_on + 1} is on"
