"""The table box's journal in flash: every accepted entry, numbered, until the head has it.

Plain Python for MicroPython (on the Pico) and CPython (in tests). The file system comes in
as an argument (``os`` on the Pico, or a stand-in), so a test can count what is written.

The file is append-only, one record a line::

    {"s":17,"r":3,"x":["roll",[3,3,5]]}*8F2A

a JSON object, ``*``, the CRC-16/CCITT-FALSE of the JSON's bytes in hex, ``\\n``. An entry
record has ``s`` (its seq: 1, 2, 3 ... never reused), ``r`` (the head's round index) and ``x``
(the entry as it travels, ``bunco_pi/rules/entries.py``), and ``c`` for a host's command id.
A head record (``{"h":1,...}``, only ever the first line) carries what compaction dropped:
the last seq given out, the last seq the head acknowledged, the last round whose bell was
entered and the last host command entered, and ``"k":1``: the latest round's entries were kept.

A power cut at any instant leaves a file whose every line but perhaps the last is whole: an
append is one write of one short line. A last line without its newline or whose checksum
fails is a torn tail: it is dropped with a one-line message (the entry it held was never
shown, so never accepted). A bad line before the end is named and skipped.

Flash wear: one append of about 50 bytes per press (LittleFS writes it into the file's last
block, its wear levelling spreads the blocks); once the head has acknowledged COMPACT_AFTER
entries the file is rewritten with only the unacknowledged ones and those of the latest round
(the box folds that round's play from them while the head cannot hear it: ``tally``), written
beside it, then renamed over it: a power cut leaves the old file or the new one. An acknowledgement itself is
not written: after a reboot the head's retained ack says it again, and anything resent
meanwhile is dropped by the head as a duplicate.
"""

import json

# The dice tray's CRC-16/CCITT-FALSE: the box carries bunco_dice for its ROLL button anyway.
from bunco_dice.logic import crc16  # noqa: F401  (also this module's, for its readers)

COMPACT_AFTER = 64  # acknowledged entries in the file before it is rewritten without them


def record_line(record):
    body = json.dumps(record, separators=(",", ":"))
    return "%s*%04X\n" % (body, crc16(body.encode()))


def read_line(line):
    """The record a whole line (bytes, without its newline) holds, or None if damaged."""
    star = line.rfind(b"*")
    if star < 0 or len(line) - star != 5:
        return None
    body = line[:star]
    try:
        if int(line[star + 1:].decode(), 16) != crc16(body):
            return None
        record = json.loads(body.decode())
    except Exception:  # any damage at all: bad hex, bad UTF-8, bad JSON
        return None
    return record if isinstance(record, dict) else None


class Journal:
    """The entries of one table box, durable before they count."""

    def __init__(self, path, fs, opener=open, compact_after=COMPACT_AFTER):
        self.path = path
        self._fs = fs  # rename, remove (os on the Pico)
        self._open = opener
        self._compact_after = compact_after
        self.last_seq = 0  # the last seq given out
        self.acked = 0  # the highest seq the head has acknowledged (learned since boot)
        self.bell_round = -1  # the last round index a bell was entered for
        self.last_command = 0  # the last host command id entered
        self.entries = []  # (seq, round, wire entry, command or 0), unacknowledged, seq order
        self.round = None  # the latest round index an entry was made in
        self.round_records = []  # that round's entries, acknowledged or not, seq order
        # False once the head holds more of this box's entries than the journal does (it was
        # lost or replaced): the round's entries here are not all of them
        self.complete = True
        self.problems = []  # one line each: what loading found wrong (shown, logged)
        self.bytes_written = 0  # for the benchmark: what this journal wrote to flash
        self.writes = 0
        self._in_file = 0  # entry records in the file (acknowledged ones included)
        self._seen = 0  # the last entry record's seq, while reading
        self._load()

    # --- reading back -------------------------------------------------------------------------

    def _load(self):
        try:
            with self._open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return  # first boot: no journal yet
        lines = bytes(data).split(b"\n")
        tail = lines.pop()  # "" when the file ends in a newline, as it should
        rewrite = False
        if tail:
            self.problems.append("journal: dropped a torn last record (%d bytes), never shown"
                                 % len(tail))
            rewrite = True
        for number, line in enumerate(lines, 1):
            record = read_line(line)
            if record is None:
                last = number == len(lines)
                if last:
                    self.problems.append("journal: dropped a damaged last record (line %d)"
                                         % number)
                else:
                    self.problems.append("journal: line %d damaged, skipped" % number)
                rewrite = True
                continue
            self._take(record)
        if rewrite:
            self._rewrite()  # appends go after a whole line again

    def _take(self, record):
        if "h" in record:
            if not record.get("k"):
                # written before compaction kept the latest round: its start may be gone
                self.complete = False
            self.last_seq = max(self.last_seq, record.get("s", 0))
            self.acked = max(self.acked, record.get("a", 0))
            self.bell_round = max(self.bell_round, record.get("b", -1))
            self.last_command = max(self.last_command, record.get("c", 0))
            return
        seq = record.get("s")
        if not isinstance(seq, int) or seq <= self._seen:
            return  # a repeat of a seq already read: keep the first
        self._seen = seq
        self.last_seq = max(self.last_seq, seq)
        self._in_file += 1
        entry = record.get("x")
        command = record.get("c", 0)
        self.last_command = max(self.last_command, command)
        if entry == ["bell"]:
            self.bell_round = max(self.bell_round, record.get("r", -1))
        if seq > self.acked:
            self.entries.append((seq, record.get("r"), entry, command))
        self._in_round((seq, record.get("r"), entry, command))

    def _in_round(self, item):
        r = item[1]
        if not isinstance(r, int):
            return
        if self.round is None or r > self.round:
            if self.round is not None:
                self.complete = True  # a round begun here has every entry from its first
            self.round, self.round_records = r, []
        if r == self.round:
            self.round_records.append(item)

    def round_entries(self, round_index):
        """The entries (wire form) made in ``round_index``, if it is the latest; else none."""
        if round_index != self.round:
            return []
        return [item[2] for item in self.round_records]

    # --- writing --------------------------------------------------------------------------

    def append(self, round_index, entry, command=0):
        """Make one entry durable; its seq. OSError (a full flash) leaves nothing counted."""
        seq = self.last_seq + 1
        record = {"s": seq, "r": round_index, "x": entry}
        if command:
            record["c"] = command
        line = record_line(record)
        with self._open(self.path, "a") as f:
            f.write(line)
        self.bytes_written += len(line)
        self.writes += 1
        self.last_seq = seq
        self._in_file += 1
        self.entries.append((seq, round_index, entry, command))
        self._in_round((seq, round_index, entry, command))
        if entry == ["bell"]:
            self.bell_round = max(self.bell_round, round_index)
        if command:
            self.last_command = max(self.last_command, command)
        return seq

    def ack(self, seq):
        """The head has everything up to ``seq``: forget it (compacting now and then)."""
        if seq <= self.acked:
            return False
        if seq > self.last_seq:
            # The head holds more than this journal: it was lost or replaced. Number after it.
            self.problems.append("journal: the head has seq %d, this box only %d; going on "
                                 "from %d" % (seq, self.last_seq, seq))
            self.last_seq = seq
            self.complete = False
        self.acked = seq
        self.entries = [e for e in self.entries if e[0] > seq]
        if self._in_file - len(self._kept()) >= self._compact_after:
            self.compact()
        return True

    def _kept(self):
        """The records a rewrite keeps: the unacknowledged, and the latest round's."""
        kept = [item for item in self.round_records if item[0] <= self.acked]
        return kept + self.entries

    @property
    def pending(self):
        return len(self.entries)

    def compact(self):
        try:
            self._rewrite()
        except OSError as exc:
            # The old file is whole: it only holds more than it needs to. Try next time.
            self.problems.append("journal: compaction failed (%s), kept as it is" % exc)

    def _rewrite(self):
        tmp = self.path + ".new"
        head = {"h": 1, "s": self.last_seq, "a": self.acked, "b": self.bell_round,
                "c": self.last_command, "k": 1}
        lines = [record_line(head)]
        kept = self._kept()
        kept.sort(key=lambda item: item[0])
        for seq, round_index, entry, command in kept:
            record = {"s": seq, "r": round_index, "x": entry}
            if command:
                record["c"] = command
            lines.append(record_line(record))
        with self._open(tmp, "w") as f:
            for line in lines:
                f.write(line)
                self.bytes_written += len(line)
        self._fs.rename(tmp, self.path)
        self.writes += 1
        self._in_file = len(kept)
