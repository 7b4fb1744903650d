"""A small MQTT 3.1.1 client for the table box, written against the MQTT 3.1.1 standard
(OASIS, 2014): CONNECT with a will, PUBLISH at QoS 0/1, SUBSCRIBE, PINGREQ, and the packets
that answer them.

Why not micropython-lib's ``umqtt.simple``: it blocks. Its ``publish(qos=1)`` waits for the
PUBACK and its ``wait_msg`` turns a socket with a timeout back into a blocking one, so a Wi-Fi
that goes quiet would freeze the box, buttons and screen with it. A table box must keep taking
presses offline. Here every read is non-blocking: ``poll()`` takes what has arrived and hands
back whole messages; a QoS 1 publish is sent and not waited for (the head's own ack, kept in
the journal, is what delivery rests on); the keepalive finds a dead link.

Plain Python for MicroPython and CPython; the socket comes from ``open_socket(host, port,
timeout_s)`` (``socket`` on the Pico, the same on the unix port).
"""

import struct

CONNECT, CONNACK, PUBLISH, PUBACK = 0x10, 0x20, 0x30, 0x40
SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = 0x82, 0x90, 0xC0, 0xD0, 0xE0
EAGAIN = (11, 35, 110, 116)  # EAGAIN on Linux/lwIP, EAGAIN on BSD, ETIMEDOUT (lwIP, Linux)

REFUSED = {
    1: "refused: unacceptable protocol version",
    2: "refused: client id rejected",
    3: "refused: server unavailable",
    4: "refused: bad user name or password",
    5: "refused: not authorised (check the password)",
}


class MqttError(Exception):
    """The connection is gone or was refused; the text is one line."""


class Refused(MqttError):
    """The broker answered the CONNECT with a refusal (a wrong password, most often)."""


def _length(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | 0x80 if n else byte)
        if not n:
            return bytes(out)


def _str(s):
    if isinstance(s, str):
        s = s.encode()
    return struct.pack("!H", len(s)) + s


def packet(kind, body):
    return bytes((kind,)) + _length(len(body)) + body


def connect_packet(client_id, user, password, keepalive_s, will_topic, will_message,
                   clean_session=False):
    # Not clean by default: the broker keeps the session while the box is away and hands it
    # what was published for it meanwhile at QoS 1 (the host's undo, which is not retained).
    flags = 0x02 if clean_session else 0x00
    payload = _str(client_id)
    if will_topic:
        flags |= 0x04 | 0x08 | 0x20  # a will, QoS 1, retained
        payload += _str(will_topic) + _str(will_message)
    if user:
        flags |= 0x80 | 0x40
        payload += _str(user) + _str(password)
    header = _str("MQTT") + bytes((4, flags)) + struct.pack("!H", keepalive_s)
    return packet(CONNECT, header + payload)


def publish_packet(topic, message, qos, retain, pid):
    body = _str(topic) + (struct.pack("!H", pid) if qos else b"") + message
    return packet(PUBLISH | qos << 1 | (1 if retain else 0), body)


def subscribe_packet(pid, topics, qos):
    body = struct.pack("!H", pid)
    for topic in topics:
        body += _str(topic) + bytes((qos,))
    return packet(SUBSCRIBE, body)


def split_packet(buf):
    """``(kind, body, rest)`` for the first whole packet in ``buf``, or None if not whole."""
    if len(buf) < 2:
        return None
    n, shift, i = 0, 0, 1
    while True:
        if i >= len(buf):
            return None
        byte = buf[i]
        n |= (byte & 0x7F) << shift
        i += 1
        if not byte & 0x80:
            break
        shift += 7
        if shift > 21:
            raise MqttError("malformed packet length from the broker")
    if len(buf) < i + n:
        return None
    return buf[0], bytes(buf[i:i + n]), buf[i + n:]


class Client:
    """One connection to the broker; a new ``Client`` (or ``connect()``) after it is lost."""

    def __init__(self, open_socket, ticks_ms, ticks_diff, client_id, user, password,
                 keepalive_s=15, will_topic=None, will_message=b"", clean_session=False):
        self._open_socket = open_socket
        self._ticks = ticks_ms
        self._diff = ticks_diff
        self.client_id = client_id
        self.user = user
        self.password = password
        self.keepalive_s = keepalive_s
        self.will_topic = will_topic
        self.will_message = will_message
        self.clean_session = clean_session
        self.sock = None
        self._buf = b""
        self._pid = 0
        self._last_in = 0
        self._last_out = 0
        self._ping_sent = False

    @property
    def connected(self):
        return self.sock is not None

    def connect(self, host, port, timeout_s=3):
        """Open the socket, send CONNECT, wait (at most ``timeout_s``) for CONNACK."""
        self.close()
        sock = self._open_socket(host, port, timeout_s)
        self.sock = sock
        try:
            self._write(connect_packet(self.client_id, self.user, self.password,
                                       self.keepalive_s, self.will_topic, self.will_message,
                                       self.clean_session))
            start = self._ticks()
            while True:
                whole = split_packet(self._buf)
                if whole is not None:
                    break
                if self._diff(self._ticks(), start) > timeout_s * 1000:
                    raise MqttError("no answer from the broker in %d s" % timeout_s)
                self._read(wait=True)
            kind, body, self._buf = whole
            if kind != CONNACK or len(body) != 2:
                raise MqttError("the broker did not answer CONNECT with CONNACK")
            if body[1] != 0:
                raise Refused(REFUSED.get(body[1], "refused: code %d" % body[1]))
        except Exception:
            self.close()
            raise
        sock.setblocking(False)
        now = self._ticks()
        self._last_in = self._last_out = now
        self._ping_sent = False

    def close(self):
        sock, self.sock = self.sock, None
        self._buf = b""
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def disconnect(self):
        """A clean goodbye: the broker then does not publish the will."""
        if self.sock is not None:
            try:
                self._write(packet(DISCONNECT, b""))
            except (OSError, MqttError):
                pass
        self.close()

    def _next_pid(self):
        self._pid = self._pid % 65535 + 1
        return self._pid

    def publish(self, topic, message, qos=0, retain=False):
        pid = self._next_pid() if qos else 0
        self._write(publish_packet(topic, message, qos, retain, pid))

    def subscribe(self, topics, qos=1):
        self._write(subscribe_packet(self._next_pid(), topics, qos))

    def poll(self):
        """What has arrived: a list of ``(topic, message, retained)``; keeps the link alive.
        MqttError when it is gone (the broker closed it, or it went quiet)."""
        if self.sock is None:
            raise MqttError("not connected")
        self._read(wait=False)
        out = []
        while True:
            whole = split_packet(self._buf)
            if whole is None:
                break
            kind, body, self._buf = whole
            self._handle(kind, body, out)
        now = self._ticks()
        if self.keepalive_s:
            quiet = self._diff(now, self._last_in)
            if self._ping_sent and quiet > self.keepalive_s * 1500:
                self.close()
                raise MqttError("the broker went quiet")
            if not self._ping_sent and (quiet > self.keepalive_s * 500
                                        or self._diff(now, self._last_out)
                                        > self.keepalive_s * 500):
                self._write(packet(PINGREQ, b""))
                self._ping_sent = True
        return out

    def _handle(self, kind, body, out):
        if kind & 0xF0 == PUBLISH:
            qos = (kind >> 1) & 3
            n = struct.unpack("!H", body[:2])[0]
            topic = body[2:2 + n].decode()
            at = 2 + n
            if qos:
                pid = body[at:at + 2]
                at += 2
                self._write(packet(PUBACK, pid))
            out.append((topic, body[at:], bool(kind & 1)))
        elif kind == PINGRESP:
            self._ping_sent = False
        elif kind == SUBACK and b"\x80" in body[2:]:
            raise MqttError("the broker refused a subscription")
        # PUBACK, SUBACK: nothing to do (delivery rests on the head's ack)

    def _read(self, wait):
        try:
            data = self.sock.recv(1024)
        except OSError as exc:
            if exc.args and exc.args[0] in EAGAIN:
                return
            self.close()
            raise MqttError("connection lost (%s)" % exc)
        if data is None:  # MicroPython's non-blocking socket with nothing to read
            return
        if not data:
            self.close()
            raise MqttError("the broker closed the connection")
        self._buf += data
        self._last_in = self._ticks()

    def _write(self, data):
        if self.sock is None:
            raise MqttError("not connected")
        start = self._ticks()
        view = memoryview(data)
        while len(view):
            try:
                n = self.sock.send(view)
            except OSError as exc:
                if exc.args and exc.args[0] in EAGAIN and \
                        self._diff(self._ticks(), start) < 2000:
                    continue
                self.close()
                raise MqttError("connection lost (%s)" % exc)
            if n is None:
                n = 0
            view = view[n:]
        self._last_out = self._ticks()
