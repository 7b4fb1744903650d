"""The table box's start: read the config, open the journal, loop. The same on a Pico and
under the unix port; only the ``board`` differs (``pico.PicoBoard`` or a test's stand-in)."""

import gc
import os

# Each import compiles its module in RAM (a Pico W has under 200 KB): collect between them, so
# the next one finds the heap whole rather than in pieces.
from bunco_dice import logic

gc.collect()
from bunco_box import box  # noqa: E402

gc.collect()
from bunco_box.journal import Journal  # noqa: E402

gc.collect()

POLL_MS = 10
CONFIG = "box.json"


def _error(title, text):
    return {"screen": "error", "title": title, "lines": box.layout.wrap(text)}


def halt(board, text):
    """A problem the box cannot play through (no config): say it, keep saying it."""
    board.log(text)
    board.show(_error("cannot start", text), text)
    while not board.should_stop():
        board.sleep_ms(200)


def main(board, fs=os, config_path=CONFIG, journal_path="journal.log",
         state_path="state.json"):
    board.show({"screen": "break", "message": "starting", "detail": "table box"}, "starting...")
    try:
        config = box.load_config(config_path)
    except box.ConfigError as exc:
        # The journal is read and kept as it is: its entries go out once the config is fixed.
        kept = Journal(journal_path, fs)
        if kept.pending:
            board.log("journal: %d entries kept for the head" % kept.pending)
        halt(board, str(exc))
        return
    board.start_wifi(config["wifi_ssid"], config["wifi_password"])
    table = box.TableBox(board, config, fs, journal_path=journal_path, state_path=state_path,
                         dice=logic.three_dice)
    board.log("table box %d: journal holds %d unacknowledged, last seq %d"
              % (table.table, table.journal.pending, table.journal.last_seq))
    while not board.should_stop():
        try:
            table.step()
        except Exception as exc:  # a bug or no memory: say it, start afresh from the journal
            board.log("crashed: %r; restarting" % exc)
            board.show(_error("restarting", repr(exc)), repr(exc))
            board.reset()
            return
        board.sleep_ms(POLL_MS)
    if table.online:
        # A clean stop says offline itself (the will is for a power cut).
        try:
            table.client.publish(table.topic_status, table._status(False), qos=1, retain=True)
        except Exception:
            pass
        table.client.disconnect()
