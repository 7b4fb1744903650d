"""The audit's view of timed rounds: the clocks in the log, and what counted after the horn.

From the house rules' keys alone: a timed round's clock runs ``round.minutes`` from when the
head started it, each pause moves its deadline on by exactly the pause's length, the horn
(``time-up``) sounds at or after the deadline (on time unless marked ``late``: the head was
down at the deadline), and a move break lasts ``round.move_seconds``. At each table, after the
bell it heard (its ``bell`` entry), no roll of the round counts, except under ``at_horn =
"finish-roll"`` the roll in hand: one roller's, one throw of the dice (or the button presses
of one roll). Roll-offs that settle a tie are not the round's rolls.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.house import HouseRules

# How far after its deadline the head's horn may sound and still be on time: the head looks
# at its clock several times a second, and a loaded machine may be slow to do so.
ON_TIME = 2.0
_EPSILON = 1e-3


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_clocks(log: list[Any], rules: HouseRules, say: Any) -> None:
    """Say every clock event of ``log`` that disagrees with the rules or with the clock before
    it (``log`` as the audit reads it: refused events are None)."""
    timing = rules.round
    timed = timing.minutes > 0
    per_set = len(rules.night.targets)
    closes = 0
    clock: dict[str, Any] | None = None  # phase, deadline, paused_at
    round_clock_seen = False
    in_round = False
    last_time = float("-inf")

    def where() -> str:
        return f"set {closes // per_set + 1} round {closes % per_set + 1}"

    for at, event in enumerate(log):
        if not isinstance(event, list) or not event:
            continue
        kind, args = event[0], event[1:]
        if kind == "start":
            if timed and clock is not None and clock["phase"] == "round":
                say(f"{where()}: log entry {at} starts a round while a round clock runs")
            clock, round_clock_seen, in_round = None, False, True
            continue
        if kind in ("close", "close-held"):
            if timed and not round_clock_seen:
                say(f"{where()}: a timed round closed (log entry {at}) without its clock")
            closes += 1
            clock, in_round = None, False
            continue
        if kind in ("next", "ring"):
            clock = None
            continue
        if kind not in ("clock", "pause", "resume", "time-up"):
            continue
        times = [a for a in args if _number(a)]
        if not times:
            say(f"log entry {at}: a '{kind}' without its time")
            continue
        now = float(times[0])
        if now < last_time - _EPSILON:
            say(f"log entry {at}: a '{kind}' at {now}, earlier than the clock event before it "
                f"({last_time})")
        last_time = max(last_time, now)
        if kind == "clock":
            phase = args[0] if args else None
            if len(times) != 2:
                say(f"log entry {at}: a clock needs its start and its deadline")
                continue
            length = times[1] - times[0]
            if phase in ("round", "move") and in_round != (phase == "round"):
                say(f"log entry {at}: a {phase} clock "
                    + ("between rounds" if phase == "round" else "during a round"))
            if phase == "round":
                if not timed:
                    say(f"{where()}: log entry {at} times a round, but the rules' rounds are "
                        "not timed")
                elif abs(length - timing.minutes * 60) > _EPSILON:
                    say(f"{where()}: the round clock (log entry {at}) runs {length:g} s, the "
                        f"rules say {timing.minutes:g} minutes")
                round_clock_seen = True
            elif phase == "move":
                if abs(length - timing.move_seconds) > _EPSILON:
                    say(f"{where()}: the move break (log entry {at}) lasts {length:g} s, the "
                        f"rules say {timing.move_seconds} s")
            else:
                say(f"log entry {at}: a clock of {phase!r}")
                continue
            clock = {"phase": phase, "deadline": float(times[1]), "paused_at": None}
        elif kind == "pause":
            if clock is None or clock["paused_at"] is not None:
                say(f"log entry {at}: a pause with no running clock")
                continue
            clock["paused_at"] = now
        elif kind == "resume":
            if clock is None or clock["paused_at"] is None:
                say(f"log entry {at}: a resume with no paused clock")
                continue
            if len(times) != 2:
                say(f"log entry {at}: a resume needs its time and its new deadline")
                continue
            moved = clock["deadline"] + (now - clock["paused_at"])
            if abs(times[1] - moved) > _EPSILON:
                say(f"log entry {at}: the clock resumed to end at {times[1]}, but a pause of "
                    f"{now - clock['paused_at']:g} s moves its deadline to {moved}")
            clock["deadline"], clock["paused_at"] = float(times[1]), None
        else:  # the horn
            late = args[1:] == ["late"]
            if timing.ends_by not in ("time", "time-or-goal"):
                say(f"{where()}: a horn (log entry {at}), but time does not end these rounds")
            if clock is None or clock["phase"] != "round":
                say(f"{where()}: a horn (log entry {at}) with no round clock running")
                continue
            if clock["paused_at"] is not None:
                say(f"{where()}: a horn (log entry {at}) while the clock was paused")
            elif now < clock["deadline"] - _EPSILON:
                say(f"{where()}: the horn (log entry {at}) sounded {clock['deadline'] - now:.3f}"
                    " s before the deadline")
            elif not late and now - clock["deadline"] > ON_TIME:
                say(f"{where()}: the horn (log entry {at}) sounded {now - clock['deadline']:.1f}"
                    " s after the deadline and is not marked late")
            clock = None


def check_after_horn(log: list[Any], rounds: list[dict[str, Any]], rules: HouseRules,
                     say: Any) -> None:
    """At each table of each timed round, what the record counts after the bell the table
    heard: nothing of the round under "stop", the roll in hand under "finish-roll"."""
    if not rules.round.minutes > 0:
        return
    starts = [at for at, e in enumerate(log) if isinstance(e, list) and e[:1] == ["start"]]
    per_set = len(rules.night.targets)
    for index, rnd in enumerate(rounds):
        if index >= len(starts):
            break
        begin = starts[index]
        end = starts[index + 1] if index + 1 < len(starts) else len(log)
        heard: dict[int, int] = {}
        for at in range(begin, end):
            e = log[at]
            if isinstance(e, list) and len(e) >= 2 and e[0] == "bell" and e[1] not in heard:
                heard[e[1]] = at
        where = f"set {index // per_set + 1} round {index % per_set + 1}"
        for table in rnd.get("tables", []):
            bell = heard.get(table.get("table"))
            if bell is None:
                continue
            after = [r for r in table.get("rolls", [])
                     if not r.get("rolloff") and isinstance(r.get("at"), int) and r["at"] > bell]
            if not after:
                continue
            here = f"{where} table {table.get('table')}"
            if rules.round.at_horn == "stop":
                say(f"{here}: {len(after)} roll(s) of the round counted after the table heard "
                    f"the horn (log entry {bell}), and everyone stops at the horn")
                continue
            rollers = {r.get("player") for r in after}
            throws = sum(1 for r in after if r.get("dice") is not None)
            if len(rollers) > 1 or throws > 1 or (throws == 1 and after[-1].get("dice") is None):
                say(f"{here}: {len(after)} roll(s) by {sorted(map(str, rollers))} counted after "
                    f"the table heard the horn (log entry {bell}), more than the roll in hand")
