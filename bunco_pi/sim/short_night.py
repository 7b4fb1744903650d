"""The demo's short night: any house rules cut down to one set of a few rounds.

A whole night at human pace takes over twenty minutes; a newcomer's first look should end by
itself in two or three. The rules keep everything else (scoring, bell, rotation, prizes), so
the short night is the same game, only fewer rounds. Pure text in, text out.
"""

from __future__ import annotations

import re

from bunco_pi.rules.house import parse_rules

SHORT_ROUNDS = 3
_HEADER = re.compile(r"\s*\[\s*([A-Za-z0-9_.]+)\s*\]\s*(#.*)?$")
_SHAPE_KEYS = re.compile(r"\s*(sets|targets|break_after_sets)\s*=")


def short_night_rules(text: str, rounds: int = SHORT_ROUNDS, source: str = "<rules>") -> str:
    """``text`` with its ``[night]`` shape replaced by one set of its first ``rounds`` targets
    and no break; raises UserError (naming ``source``) if ``text`` is not valid rules."""
    rules = parse_rules(text, source)
    targets = list(rules.night.targets[:max(1, rounds)])
    shape = ["sets = 1", f"targets = {targets}", "break_after_sets = []"]
    out: list[str] = []
    section = ""
    skipping_array = False
    for line in text.splitlines():
        if skipping_array:  # the rest of a multi-line array of a key we replace
            skipping_array = "]" not in line
            continue
        header = _HEADER.match(line)
        if header:
            section = header.group(1)
            out.append(line)
            if section == "night":
                out.extend(shape)
            continue
        if section == "night" and _SHAPE_KEYS.match(line):
            value = line.split("=", 1)[1].split("#", 1)[0]
            skipping_array = "[" in value and "]" not in value
            continue
        out.append(line)
    if not any(_HEADER.match(line) and _HEADER.match(line).group(1) == "night" for line in out):
        out.extend(["", "[night]", *shape])
    short = "\n".join(out) + "\n"
    parse_rules(short, source)  # the cut-down rules must still be valid rules
    return short
