"""The audit's view of the log's order: each event allowed where it stands in the night.

A night goes ready -> playing (-> finishing once the bell rang) -> results -> ready, with a
break after the sets the rules name, then the prizes and the end; the host may seat a late
arrival, let someone leave or end the night only between rounds. An event out of its place is
one the engine refuses to replay, so the audit names it (a repeat of the event before it as a
duplicate). It reads the rest of the log without a duplicate or a table's entry when no round
is being played, as the engine would; any other event out of place it follows as if the night
had reached its place, so one missing event is one problem, not a problem at every later event.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.house import HouseRules

TABLE_KINDS = ("roll", "tally", "pass", "bell", "undo")
_BETWEEN = ("ready", "results", "break")
_ALLOWED = {
    "start": ("ready",),
    "ring": ("playing", "finishing"),
    "close": ("playing", "finishing"),
    "close-held": ("playing", "finishing"),
    "next": ("results",),
    "end-break": ("break",),
    "prizes": ("prizes",),
    "arrive": _BETWEEN,
    "leave": _BETWEEN,
    "end-night": _BETWEEN,
    # a timed round's clock starts once it is being played, the move break's once it closed;
    # the horn only while nothing else has ended the round
    "clock": ("playing", "results"),
    "pause": ("playing", "results"),
    "resume": ("playing", "results"),
    "time-up": ("playing",),
    **dict.fromkeys(TABLE_KINDS, ("playing", "finishing")),
}
# what the first of a duplicated pair did
_DONE = {"start": "started this round", "close": "closed this round",
         "close-held": "closed this round", "next": "went on from this round",
         "end-break": "ended the break", "prizes": "settled the prizes",
         "end-night": "ended the night"}
_PHASE = {"ready": "between rounds, before the bell starts the next",
          "playing": "during a round", "finishing": "during a round",
          "results": "after a round closed, before 'next'",
          "break": "during the break", "prizes": "at the prizes", "ended": "after the prizes"}


def check_order(log: list[Any], rules: HouseRules, say: Any) -> set[int]:
    """Say each event of ``log`` that cannot come where it stands; the positions of the events
    the rest of the audit reads the log without (duplicates, table entries between rounds)."""
    per_set = len(rules.night.targets)
    phase, closes, ended_by_host = "ready", 0, False
    refused: set[int] = set()
    last: dict[str, int] = {}  # kind -> position of its last accepted event
    last_control = ""  # the kind of the last accepted event that moved the night on

    def where(done: bool = False) -> str:
        """The round being played, or (``done``) the one last closed."""
        index = closes - 1 if done else closes
        return f"set {index // per_set + 1} round {index % per_set + 1}"

    for at, event in enumerate(log):
        if not isinstance(event, list) or not event or not isinstance(event[0], str):
            say(f"log entry {at}: {event!r} is not an event of a night")
            refused.add(at)
            continue
        kind = event[0]
        allowed = _ALLOWED.get(kind)
        if allowed is None:
            say(f"log entry {at}: '{kind}' is not an event of a night")
            refused.add(at)
            continue
        if phase not in allowed:
            duplicate = kind == last_control and kind in _DONE
            if duplicate or kind in TABLE_KINDS:
                refused.add(at)
            if duplicate:
                which = "the night" if kind in ("prizes", "end-night") else \
                    where(done=kind != "start")
                say(f"log entry {at}: a duplicate '{kind}': log entry {last[kind]} already "
                    f"{_DONE[kind]} ({which})")
            elif kind == "start" and phase == "break":
                say(f"log entry {at}: a round started during the break (the break ends with "
                    "'end-break')")
            elif kind == "end-break":
                say(f"log entry {at}: a break ended where the rules have none")
            elif kind in ("start", "next") and ended_by_host:
                say(f"log entry {at}: the night goes on after the host ended it")
            elif kind in ("arrive", "leave", "end-night") and phase in ("playing", "finishing"):
                say(f"{where()}: log entry {at} is a '{kind}' during the round, and seats "
                    "change only between rounds")
            elif kind in TABLE_KINDS:
                say(f"log entry {at}: a '{kind}' for table {event[1] if len(event) > 1 else '?'}"
                    f" {_PHASE[phase]}, when no table is playing")
            else:
                say(f"log entry {at}: '{kind}' cannot come {_PHASE[phase]}")
            if at in refused:
                continue
        if kind in TABLE_KINDS or kind in ("ring", "arrive", "leave", "clock", "pause",
                                            "resume", "time-up"):
            continue
        last[kind], last_control = at, kind
        if kind == "start":
            phase = "playing"
        elif kind in ("close", "close-held"):
            phase, closes = "results", closes + 1
        elif kind == "next":
            finished = closes // per_set if closes % per_set == 0 else 0
            phase = "prizes" if closes >= rules.rounds_per_night else \
                "break" if finished in rules.night.break_after_sets else "ready"
        elif kind == "end-break":
            phase = "ready"
        elif kind == "end-night":
            phase, ended_by_host = "prizes", True
        elif kind == "prizes":
            phase = "ended"
    return refused
