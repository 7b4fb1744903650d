"""The Pico table box: buttons and dice in, the journal and the head's broker out, the OLED.

Plain Python for MicroPython (the Pico) and its unix port (the tests). Everything that
touches hardware is the ``board`` (``pico.py`` on a Pico; a stand-in in the tests): the clock,
the buttons' levels, the screen, random bytes, Wi-Fi, sockets, the log. Files go through
``open`` and the ``fs`` module (LittleFS on the Pico).

The contract is the Pi box's (``bunco_pi/protocol.py``, docs/network.md): the box logs in as
its table's broker user (``table-N``, whose ACL lets it write only its events and its status)
with its user as its client id, leaves a retained ``offline`` will, and sends each entry
``{"round": r, "entry": [...]}`` in the envelope ``{"v", "sender", "table", "seq", "payload"}``
at QoS 1. An entry is in the journal before it shows; it is sent again until the head's
retained ack covers its seq; the head drops a seq it already has.

What a press means is ``presses``, where each thing on the screen goes is ``layout`` (both
shared with the Pi box). The scores, the roller and whether this table's round is over are the
head's, from the table's retained view (``table/<n>/view``), which the head publishes after
each entry it commits; while some of the box's own entries have not reached the head (offline,
or the head's view not caught up), the box shows its own fold of the round's play
(``tally``, under the rules the head's state names), and refuses there what those rules
refuse. Offline, the box keeps taking presses and says how many wait.
"""

import json

try:  # on the Pico: copied beside main.py
    import layout
    import presses
    import tally
except ImportError:  # CPython, in a checkout (the tests read the config with it)
    from bunco_pi.table import layout, presses, tally
from bunco_box import mqtt
from bunco_box.journal import Journal

PROTOCOL_VERSION = 1  # bunco_pi.protocol.PROTOCOL_VERSION and the envelope's VERSION
HEAD = "head"
PLAYING = ("playing", "finishing")
ROLES = ("point", "three", "bunco", "pass", "undo", "roll")
REQUIRED = ("table", "night", "broker_host", "broker_port", "user", "password")
OPTIONAL = {"wifi_ssid": "", "wifi_password": "", "keepalive": 15, "display": "ssd1306",
            "tumble_ms": 600, "resend_s": 3}

DEBOUNCE_MS = 30
HOLD_MS = 800  # held this long makes a hold: the Pi box's hold_time
ACK_GRACE_MS = 2000  # connected this long with no retained ack: the head has nothing of ours
RECONNECT_MS = (1000, 10000)  # the wait between tries, doubling
REFUSED_RETRY_MS = 30000  # a refused password is retried this seldom
RESEND_AT_MOST_MS = 30000
HEARTBEAT_MS = 2000  # bunco_pi.protocol.HEARTBEAT_S: what the journal holds, said to the head
TICK_MS = 1000  # a running round clock is drawn again this often
KEPT = ("phase", "round_index", "set", "round", "target", "bell", "epoch", "pos", "online",
        "fold", "timer")  # of the head's state: what the box reads


class ConfigError(Exception):
    """The config file is not usable; the text is one line naming the file and the problem."""


def read_config(text, name="box.json"):
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(name + ": not JSON (see bunco-pi pico config)")
    if not isinstance(data, dict):
        raise ConfigError(name + ": not a JSON object")
    for key in REQUIRED:
        if key not in data:
            raise ConfigError(name + ": missing key '" + key + "'")
    table = data["table"]
    if not isinstance(table, int) or not 1 <= table <= 999:
        raise ConfigError(name + ": 'table' must be a number 1..999")
    if data["user"] != "table-%d" % table:
        raise ConfigError(name + ": 'user' must be 'table-%d' for table %d" % (table, table))
    port = data["broker_port"]
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError(name + ": 'broker_port' must be a number 1..65535")
    config = dict(OPTIONAL)
    config.update(data)
    return config


def load_config(path, opener=open):
    try:
        with opener(path) as f:
            text = f.read()
    except OSError:
        raise ConfigError(path + ": not found (write it with bunco-pi pico config)")
    return read_config(text, path)


def _is_older(held, incoming):
    """``bunco_pi.protocol.is_older``: a message at ``incoming`` is older than ``held``."""
    if held is None:
        return False
    if incoming is None:
        return True
    return incoming[0] == held[0] and incoming[1] < held[1]


def _position(message):
    epoch, pos = message.get("epoch"), message.get("pos")
    if isinstance(epoch, str) and isinstance(pos, int) and pos >= 0:
        return (epoch, pos)
    return None


class Button:
    """One button's gestures from its level: ``down``, then ``tap`` or ``hold``. A button
    not in ``waits`` taps at once when pressed; one in it taps on release, or holds.

    Debounce as the Pi box's: the first edge counts at once, then the contact is ignored for
    DEBOUNCE_MS; when that window closes the real level is looked at again. A chattering press
    counts once, and a held button never repeats."""

    def __init__(self, role):
        self.role = role
        self._level = False
        self._edge_at = None  # when the last counted edge came: edges are ignored a while after
        self._down_at = 0
        self._held = False

    def feed(self, now, pressed, waits, diff):
        out = []
        if self._edge_at is not None and diff(now, self._edge_at) < DEBOUNCE_MS:
            pass  # bouncing: ignored
        elif pressed != self._level:
            self._level = pressed
            self._edge_at = now
            if pressed:
                self._down_at, self._held = now, False
                out.append("down" if self.role in waits else "tap")
            elif self.role in waits and not self._held:
                out.append("tap")
        if self._level and self.role in waits and not self._held \
                and diff(now, self._down_at) >= HOLD_MS:
            self._held = True
            out.append("hold")
        return out


class TableBox:
    def __init__(self, board, config, fs, opener=open, journal_path="journal.log",
                 state_path="state.json", dice=None):
        self.board = board
        self.config = config
        self.table = config["table"]
        self.name = config["user"]
        prefix = "bunco/" + config["night"]
        self.topic_events = "%s/table/%d/events" % (prefix, self.table)
        self.topic_ack = "%s/table/%d/ack" % (prefix, self.table)
        self.topic_view = "%s/table/%d/view" % (prefix, self.table)
        self.topic_command = "%s/table/%d/command" % (prefix, self.table)
        self.topic_state = prefix + "/state"
        self.topic_status = "%s/node/%s/status" % (prefix, self.name)
        self._open = opener
        self._fs = fs
        self._state_path = state_path
        self._dice = dice  # three_dice(random_bytes) of the dice tray's logic
        self.journal = Journal(journal_path, fs, opener)
        self.state = None  # the head's small state, as last heard (or kept in flash)
        self.view = None  # this table's view, as last heard
        self._state_at = None
        self._view_at = None
        self.client = mqtt.Client(board.open_socket, board.ticks_ms, board.ticks_diff,
                                  self.name, self.name, config["password"],
                                  keepalive_s=config["keepalive"],
                                  will_topic=self.topic_status,
                                  will_message=self._status(False))
        self.online = False
        self.refused = ""
        self._ready = self.journal.last_seq > 0  # numbering cannot clash with the head's
        self._connected_at = 0
        self._next_try = 0
        self._try_wait = RECONNECT_MS[0]
        self._resend_wait = config["resend_s"] * 1000
        self._last_progress = 0
        self._waiting_since = None  # when the oldest entry the head has not acknowledged went
        self._beat_at = 0
        self._refusal = None  # the head's last refusal, said once
        self.buttons = [Button(role) for role in ROLES]
        self.flash = ""
        self.alert = ""  # a problem shown until the next press
        self._tumble_until = None
        self._timer_at = None  # when the head's round clock was heard (our own clock)
        self._fold = None  # (round, last seq, the state's rules) and the round's play folded
        self._dirty = True
        self._drawn_at = 0
        self._shown = None
        self._load_state()
        for problem in self.journal.problems:
            self.problem(problem)
        self.journal.problems = []

    # --- the log and the screen's problem line ------------------------------------------------

    def problem(self, text):
        """A one-line problem: in the log and on the OLED until the next press."""
        self.board.log(text)
        self.alert = text
        self._dirty = True

    def _status(self, online):
        return json.dumps({"v": PROTOCOL_VERSION, "sender": self.name,
                           "payload": {"status": "online" if online else "offline"}}).encode()

    # --- the head's state, kept in flash so a box that boots without Wi-Fi plays on ----------

    def _load_state(self):
        try:
            with self._open(self._state_path) as f:
                kept = json.loads(f.read())
            self.state, self.view = kept.get("state"), kept.get("view")
        except (OSError, ValueError, AttributeError):
            return
        if self.state is not None:
            self._state_at = _position(self.state)
        if self.view is not None:
            self._view_at = _position(self.view)

    def _save_state(self):
        tmp = self._state_path + ".new"
        try:
            with self._open(tmp, "w") as f:
                f.write(json.dumps({"state": self.state, "view": self.view}))
            self._fs.rename(tmp, self._state_path)
        except OSError as exc:
            self.board.log("state.json: cannot keep the head's state (%s)" % exc)

    # --- what the round here is ----------------------------------------------------------------

    @property
    def round_index(self):
        s = self.state
        if s is not None and s.get("phase") in PLAYING and isinstance(s.get("round_index"), int):
            return s["round_index"]
        return None

    def _round_view(self):
        v, r = self.view, self.round_index
        if v is not None and r is not None and v.get("round_index") == r:
            return v
        return None

    def _round_over_here(self):
        """This table's play of the round is over: the head says so, and nothing sent since is
        waiting; or, while something is, the box's own fold says so."""
        v = self._round_view()
        if self._head_says():
            return v is not None and bool(v.get("done"))
        play = self.play()
        if play is not None:
            return play.over
        return v is not None and bool(v.get("done")) and self.journal.pending == 0

    def _head_says(self):
        """The head's view is the score to show: it has every entry of this box's (online,
        nothing waiting) and is about this round."""
        return self.online and self.journal.pending == 0 and self._round_view() is not None

    def play(self):
        """This round's play as the box folds it from its own journal, under the rules the
        head's state names (``tally``); None when it cannot (no rules heard, a journal that
        lost the round's start, no round on)."""
        s, r = self.state or {}, self.round_index
        rules = s.get("fold")
        journal = self.journal
        if r is None or not isinstance(rules, dict) or not journal.complete \
                or not isinstance(s.get("target"), int):
            return None
        key = (r, journal.last_seq, s.get("target"), len(rules))
        if self._fold is not None and self._fold[0] == key:
            return self._fold[1]
        v = self._round_view() or {}
        play = tally.Play(rules, s["target"], v.get("ghost_seats") or (),
                          tally.can_end_round(rules, self.table))
        try:
            play.fold(journal.round_entries(r))
        except (tally.Refused, KeyError, TypeError, ValueError) as exc:
            # the journal holds what the rules refuse (a head that changed its rules): the
            # head's fold is the only one to show
            self.board.log("fold: %s; showing the head's score" % exc)
            play = None
        self._fold = (key, play)
        return play

    def _roller_seat(self):
        if not self._head_says():
            play = self.play()
            if play is not None:
                return play.roller_seat
        v = self._round_view()
        seat = v.get("roller_seat") if v is not None else None
        return seat if isinstance(seat, int) else 0

    def _roller(self):
        v = self._round_view()
        if v is None:
            return "?"
        seats, seat = v.get("seats") or [], self._roller_seat()
        if 1 <= seat <= len(seats):
            return str(seats[seat - 1])
        return "?"

    def _twos_travel(self):
        """Three 2s take the traveler in this round: the head's word (the box reads no house
        rules), in the table's view."""
        v = self._round_view()
        return bool(v is not None and v.get("twos_travel"))

    # --- entries --------------------------------------------------------------------------------

    def enter(self, entry, command=0):
        """Journal an entry, then send it; True if it counted."""
        r = self.round_index
        if r is None:
            self.flash = "no round on: wait"
            return False
        if not self._ready:
            self.flash = "joining the night..."
            return False
        # A table whose play is over takes only the bell and an undo: while the head's round
        # is open (round_index is set only then), an undo takes back a mistaken last point and
        # reopens the table's round, as on the Pi box.
        if self._round_over_here() and "bell" not in entry and "undo" not in entry:
            self.flash = "round over here"
            return False
        wire = presses.wire_entry(entry)
        play = self.play()
        if play is not None and "bell" not in entry:
            try:
                play.apply(wire)  # tried on the fold: what the rules refuse is never stored
            except tally.Refused as exc:
                self.flash = str(exc)
                self._fold = None
                return False
        try:
            seq = self.journal.append(r, wire, command)
        except OSError as exc:
            self._fold = None
            self.problem("journal: cannot write (%s): not counted" % exc)
            return False
        if play is not None and "bell" not in entry:
            self._fold = ((r, seq) + self._fold[0][2:], play)  # the fold has it already
        self.board.log("stored " + json.dumps({"s": seq, "r": r, "x": wire}))
        if self._waiting_since is None:
            self._waiting_since = self.board.ticks_ms()
        self._send(seq, r, wire, command)
        self._dirty = True
        return True

    def _send(self, seq, round_index, wire, command=0):
        if not self.online:
            return
        payload = {"round": round_index, "entry": wire}
        if command:
            payload["command"] = command
        data = json.dumps({"v": PROTOCOL_VERSION, "sender": self.name, "table": self.table,
                           "seq": seq, "payload": payload})
        try:
            self.client.publish(self.topic_events, data.encode(), qos=1)
        except mqtt.MqttError as exc:
            self._lost(str(exc))

    def _resend(self):
        for seq, r, wire, command in self.journal.entries:
            if not self.online:
                return
            self._send(seq, r, wire, command)
        self._last_progress = self.board.ticks_ms()

    # --- buttons -------------------------------------------------------------------------------

    def press(self, role, kind):
        if kind != "down":
            self.alert = ""
        r = self.round_index
        if role == "roll":
            if kind == "tap":
                self._roll()
            return
        twos = self._twos_travel()
        if kind == "down":
            self.alert = ""
            if r is not None:
                self.flash = presses.down_flash(role, twos)
            self._dirty = True
            return
        if r is None:
            self.flash = "no round on: wait"
            self._dirty = True
            return
        action, entry = presses.playing_press(role, kind, twos)
        if action == presses.ENTER:
            name = self._roller()
            if self.enter(entry):
                self.flash = presses.entry_flash(entry, name)
        elif action is not None:
            self._undo(action == presses.UNDO_TURN)
        self._dirty = True

    def _undo(self, whole_turn):
        """Undo the last entry, or held, the whole turn as the Pi box does (as many undos as
        the box's fold says the turn holds; without a fold, one)."""
        count = 1
        play = self.play() if whole_turn else None
        if play is not None:
            count = play.undo_turn_count()
            if not count:
                self.flash = "nothing to undo"
                return
        done = 0
        while done < count and self.enter({"undo": 1}):
            done += 1
        if done:
            self.flash = "undone: whole turn" if whole_turn and count > 1 else "undone"

    def _roll(self):
        if self._tumble_until is not None:
            return  # still tumbling
        if self.round_index is None:
            self.flash = "no round on: wait"
            self._dirty = True
            return
        tumble = self.config["tumble_ms"]
        if tumble <= 0:
            self._settle()
        else:
            self._tumble_until = self.board.ticks_add(self.board.ticks_ms(), tumble)
            self.flash = "rolling..."
            self._dirty = True

    def _settle(self):
        self._tumble_until = None
        dice = self._dice(self.board.random_bytes)
        name = self._roller()
        if self.enter({"roll": list(dice)}):
            self.flash = presses.entry_flash({"roll": dice}, name)
        self._dirty = True

    # --- the broker ------------------------------------------------------------------------------

    def _lost(self, reason):
        if self.online:
            self.board.log("offline: " + reason)
        self.online = False
        self.client.close()
        self._dirty = True

    def _connect(self, now):
        if not self.board.wifi_up():
            if self.online:
                self._lost("Wi-Fi lost")
            return
        try:
            self.client.connect(self.config["broker_host"], self.config["broker_port"])
        except mqtt.Refused as exc:
            text = "broker " + str(exc)
            if text != self.refused:
                self.refused = text
                self.problem(text)
            self._next_try = self.board.ticks_add(now, REFUSED_RETRY_MS)
            return
        except (mqtt.MqttError, OSError) as exc:
            self._next_try = self.board.ticks_add(now, self._try_wait)
            self._try_wait = min(self._try_wait * 2, RECONNECT_MS[1])
            if self.online:
                self._lost(str(exc))
            return
        try:
            self.client.subscribe([self.topic_ack, self.topic_state, self.topic_view,
                                   self.topic_command], qos=1)
            self.client.publish(self.topic_status, self._status(True), qos=1, retain=True)
        except mqtt.MqttError as exc:
            self._lost(str(exc))
            return
        self.online, self.refused = True, ""
        if self.alert.startswith("broker refused"):
            self.alert = ""
        self._try_wait = RECONNECT_MS[0]
        self._connected_at = now
        self._resend_wait = self.config["resend_s"] * 1000
        self.board.log("online: %s:%d as %s" % (self.config["broker_host"],
                                                self.config["broker_port"], self.name))
        self._resend()
        self._dirty = True

    def _network(self, now):
        diff = self.board.ticks_diff
        if not self.online:
            if diff(now, self._next_try) >= 0:
                self._connect(now)
            return
        if not self.board.wifi_up():
            self._lost("Wi-Fi lost")
            return
        try:
            messages = self.client.poll()
        except mqtt.MqttError as exc:
            self._lost(str(exc))
            return
        for topic, data, _retained in messages:
            self._message(topic, data)
        if not self._ready and diff(now, self._connected_at) >= ACK_GRACE_MS:
            self._ready = True  # no retained ack came: the head has nothing of this table's
            self._dirty = True
        if self.journal.pending and diff(now, self._last_progress) >= self._resend_wait:
            self.board.log("no ack for %d ms, resent %d" % (self._resend_wait,
                                                           self.journal.pending))
            self._resend()
            self._resend_wait = min(self._resend_wait * 2, RESEND_AT_MOST_MS)
        if diff(now, self._beat_at) >= HEARTBEAT_MS:
            self._beat_at = now
            self._heartbeat(now)
        self._follow_bell()

    def _heartbeat(self, now):
        """QoS 0, not retained, on the box's own status topic (bunco_pi.protocol.Heartbeat): it
        reaches the head even when the head's QoS 1 intake is stuck, and the head's intake
        watch then connects again."""
        j, since = self.journal, self._waiting_since
        waiting = self.board.ticks_diff(now, since) / 1000 if j.pending and since is not None else 0
        body = {"status": "online", "heartbeat": 1, "holds": j.last_seq, "acked": j.acked,
                "waiting": round(waiting, 1)}
        try:
            self.client.publish(self.topic_status, json.dumps(
                {"v": PROTOCOL_VERSION, "sender": self.name, "payload": body}).encode())
        except mqtt.MqttError as exc:
            self._lost(str(exc))

    def _message(self, topic, data):
        try:
            doc = json.loads(data)
        except ValueError:
            self.board.log("%s: not JSON, ignored" % topic)
            return
        if not isinstance(doc, dict) or doc.get("sender") != HEAD \
                or not isinstance(doc.get("payload"), dict):
            self.board.log("%s: not from the head, ignored" % topic)
            return
        payload = doc["payload"]
        if payload.get("v", PROTOCOL_VERSION) != PROTOCOL_VERSION:
            self.problem("head speaks protocol %s, box %d" % (payload.get("v"),
                                                              PROTOCOL_VERSION))
            return
        if topic == self.topic_ack:
            seq = payload.get("seq")
            if isinstance(seq, int):
                self._ready = True
                if self.journal.ack(seq):
                    self._last_progress = self.board.ticks_ms()
                    self._resend_wait = self.config["resend_s"] * 1000
                    self._dirty = True
                    self._waiting_since = self._last_progress if self.journal.pending else None
            refused = payload.get("refused")
            if isinstance(refused, dict) and isinstance(refused.get("seq"), int) \
                    and refused.get("seq") != self._refusal:
                # logged and acknowledged at the head, never counted: say so, once
                self._refusal = refused["seq"]
                self.board.log("head refused #%d: %s" % (refused["seq"], refused.get("reason")))
                self.flash = "head refused #%d" % refused["seq"]
                self._dirty = True
                for line in self.journal.problems:
                    self.problem(line)
                self.journal.problems = []
        elif topic == self.topic_state:
            at = _position(payload)
            if _is_older(self._state_at, at):
                return
            self._state_at = at
            keep = {k: payload[k] for k in KEPT if k in payload}
            if "timer" in keep or (self.state or {}).get("timer") is not None:
                # the head says it again at every change: count down from now
                self._timer_at = self.board.ticks_ms()
            if keep != self.state:
                self.state = keep
                self._save_state()
                self._dirty = True
        elif topic == self.topic_view:
            at = _position(payload)
            if _is_older(self._view_at, at):
                return
            self._view_at = at
            kept_round = (self.view or {}).get("round_index")
            self.view = payload
            if payload.get("round_index") != kept_round:
                # once a round: who sits here, for a box that boots again without Wi-Fi
                self._save_state()
            self._dirty = True
        elif topic == self.topic_command:
            self._command(payload)

    def _command(self, payload):
        cid, r = payload.get("id"), payload.get("round")
        if payload.get("command") != "undo" or not isinstance(cid, int):
            self.board.log("command: not understood, ignored")
            return
        if cid <= self.journal.last_command:
            return  # entered already (a redelivery)
        if r != self.round_index:
            self.board.log("the host's undo %d is for round %s, not played here; ignored"
                           % (cid, r))
            return
        if self.enter({"undo": 1}, command=cid):
            self.flash = "undone by the host"

    def _follow_bell(self):
        """The head's bell rang for the round here: enter a Bell at this point, once."""
        s, r = self.state, self.round_index
        if r is None or not s.get("bell") or self.journal.bell_round >= r or not self._ready:
            return
        if self.enter({"bell": True}):
            self.flash = "BELL! finish the turn"

    # --- the loop -----------------------------------------------------------------------------

    def step(self):
        now = self.board.ticks_ms()
        diff = self.board.ticks_diff
        levels = self.board.buttons()
        waits = presses.hold_roles(self._twos_travel())
        for button in self.buttons:
            for kind in button.feed(now, levels.get(button.role, False), waits, diff):
                self.press(button.role, kind)
        if self._tumble_until is not None and diff(now, self._tumble_until) >= 0:
            self._settle()
        self._network(now)
        # A round clock runs: draw it again each second (the frame is sent only if it changed).
        ticking = (self.state or {}).get("timer") is not None \
            and diff(now, self._drawn_at) >= TICK_MS
        if self._dirty or ticking:
            self._dirty = False
            self._drawn_at = now
            view, status = self.screen(), self.status_line()
            if (view, status) != self._shown:
                self._shown = (view, status)
                self.board.show(view, status)

    def status_line(self):
        """The box's one line about itself (the log's, the tests'): a problem, offline and what
        waits, joining, or what the last press did."""
        if self.alert:
            return self.alert
        if not self.online:
            if self.refused:
                return self.refused
            n = self.journal.pending
            return "offline, %d waiting" % n if n else "offline"
        if not self._ready:
            return "joining the night..."
        return self.flash

    def _net(self):
        """What the Pi box's link says on its screen when the head cannot hear the table."""
        if not self.online:
            return self.status_line()
        if not self._ready:
            return "joining the night..."
        return ""

    def _seats(self):
        v = self.view or {}
        seats = [str(name) for name in (v.get("seats") or [])][:4]
        return seats + ["?"] * (4 - len(seats))

    def _timer(self):
        s = self.state or {}
        if s.get("timer") is None or self._timer_at is None:
            return ""
        elapsed = self.board.ticks_diff(self.board.ticks_ms(), self._timer_at) / 1000
        return layout.timer_text(s["timer"], elapsed)

    def screen(self):
        """What the OLED shows: the Pi box's screen for this moment, as ``layout`` draws it
        (``bunco_pi/table/machine.py``'s ``view``, from what this box knows)."""
        if self.alert:
            return {"screen": "error", "title": "table %d" % self.table,
                    "lines": layout.wrap(self.alert)}
        s, v = self.state or {}, self._round_view()
        phase = s.get("phase")
        net = self._net()
        if phase in PLAYING and v is not None:
            seat = self._roller_seat() or 1
            rules = s.get("fold") or {}
            play = None if self._head_says() else self.play()
            if play is not None:
                score, seat_scores = play.team_scores, play.points
            else:
                score = v.get("score") or [0, 0]
                seat_scores = v.get("seat_scores") or [0, 0, 0, 0]
            individual = rules.get("team") is False
            if self._round_over_here():
                # the play is over here; who won and who moves is the head's to say
                return {"screen": "results", "table": self.table,
                        "won": score[0] >= score[1], "score_a": score[0],
                        "score_b": score[1], "moves": [],
                        "headline": "round over" if individual else "",
                        "hint": self.flash or net or "next: head's bell"}
            flash = self.flash
            return {"screen": "playing", "table": self.table, "target": s.get("target"),
                    "score_a": score[0], "score_b": score[1], "roller": self._roller(),
                    "roller_team": "A" if seat % 2 else "B", "set_number": s.get("set") or 1,
                    "bell": bool(s.get("bell")), "flash": flash, "warning": net,
                    "seat_scores": list(seat_scores) if individual else None,
                    "roller_seat": seat, "timer": self._timer()}
        view = self.view or {}
        if phase == "results" and isinstance(view.get("result"), dict):
            result = view["result"]
            score = result.get("score") or [0, 0]
            seats = view.get("seats") or []
            losers = [str(name) for name in result.get("losers") or []]
            headline = ""
            if (s.get("fold") or {}).get("team") is False:
                headline = "%s move%s" % (" & ".join(losers), "s" if len(losers) == 1 else "")
            moves = ["%s -> T%s S%s" % (m.get("name"), m.get("to_table"), m.get("to_seat"))
                     for m in view.get("moves") or []]
            return {"screen": "results", "table": self.table,
                    "won": bool(seats) and seats[0] in (result.get("winners") or []),
                    "score_a": score[0], "score_b": score[1],
                    "moves": moves or ["stay seated"], "headline": headline,
                    "hint": self.flash or net or "next: head's bell"}
        if phase == "break":
            return {"screen": "break", "message": "break", "detail": self.flash or net}
        if phase == "prizes":
            return {"screen": "break", "message": "prizes", "detail": self.flash or net}
        if phase == "ended":
            return {"screen": "end", "prizes": [[str(p.get("name")), str(p.get("winner"))]
                                                for p in view.get("prizes") or []]}
        if phase in PLAYING:
            message = "round on: joining"
        elif phase == "ready":
            message = "round %s soon" % s.get("round")
        elif phase is None:
            message = "waiting for the head"
        else:
            message = "waiting for round"
        return {"screen": "waiting", "table": self.table, "players": self._seats(),
                "message": self.flash or net or message}
