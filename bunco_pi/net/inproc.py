"""An in-process broker and link with the same interface and semantics as the MQTT ones.

For tests of the core and for ``bunco-pi demo`` when mosquitto is not installed. It keeps
MQTT's promises that the rest of the code relies on: retained messages (an empty payload
clears one), wildcard subscriptions, a last will published when a link drops without saying
goodbye, and persistent sessions (a dropped link keeps its subscriptions and the QoS 1
messages published meanwhile are delivered when it comes back). Delivery is synchronous:
``publish`` returns after every subscriber's sink has the message.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from paho.mqtt.client import topic_matches_sub

from bunco_pi.net.link import Connected, Disconnected, LinkEvent, Message, Published, Sink
from bunco_pi.net.mqtt import status_payload


class InprocReceipt:
    def __init__(self, mid: int, delivered: bool) -> None:
        self.mid = mid
        self._delivered = delivered

    def acknowledged(self) -> bool:
        return self._delivered

    def wait(self, timeout: float) -> bool:
        return self._delivered


@dataclass
class _Session:
    sink: Sink
    subs: list[tuple[str, int]] = field(default_factory=list)
    online: bool = False
    queued: list[Message] = field(default_factory=list)


class InprocBroker:
    """Holds retained messages and sessions; thread-safe (one lock)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._retained: dict[str, bytes] = {}
        self._sessions: dict[str, _Session] = {}
        self._wills: dict[str, tuple[str, bytes]] = {}
        self._mid = 0

    def link(self, name: str, *, status_topic: str | None = None,
             sink: Sink | None = None) -> InprocLink:
        return InprocLink(self, name, status_topic=status_topic, sink=sink)

    def retained(self, topic: str) -> bytes | None:
        with self._lock:
            return self._retained.get(topic)

    # --- used by InprocLink -----------------------------------------------------------------

    def _connect(self, name: str, sink: Sink, will: tuple[str, bytes] | None,
                 subs: list[tuple[str, int]]) -> None:
        with self._lock:
            session = self._sessions.get(name)
            present = session is not None
            if session is None:
                session = self._sessions[name] = _Session(sink)
            session.sink, session.online = sink, True
            # Like MqttLink, which subscribes again on every connect.
            session.subs += [sub for sub in subs if sub not in session.subs]
            if will is not None:
                self._wills[name] = will
            sink(Connected(present))
            for pattern, qos in session.subs:
                self._send_retained(session, pattern, qos)
            queued, session.queued = session.queued, []
            for msg in queued:
                sink(msg)

    def _disconnect(self, name: str, *, graceful: bool) -> None:
        with self._lock:
            session = self._sessions.get(name)
            if session is None or not session.online:
                return
            session.online = False
            session.sink(Disconnected("graceful" if graceful else "connection lost"))
            will = self._wills.pop(name, None)
            if will is not None and not graceful:
                self._publish(will[0], will[1], 1, True)

    def _subscribe(self, name: str, pattern: str, qos: int) -> None:
        with self._lock:
            session = self._sessions[name]
            if (pattern, qos) not in session.subs:
                session.subs.append((pattern, qos))
            self._send_retained(session, pattern, qos)

    def _send_retained(self, session: _Session, pattern: str, qos: int) -> None:
        for topic, payload in sorted(self._retained.items()):
            if topic_matches_sub(pattern, topic):
                session.sink(Message(topic, payload, True, qos))

    def _publish(self, topic: str, payload: bytes, qos: int, retain: bool) -> int:
        with self._lock:
            if retain:
                if payload:
                    self._retained[topic] = payload
                else:
                    self._retained.pop(topic, None)
            for session in self._sessions.values():
                grant = max((q for p, q in session.subs if topic_matches_sub(p, topic)),
                            default=None)
                if grant is None:
                    continue
                msg = Message(topic, payload, False, min(grant, qos))
                if session.online:
                    session.sink(msg)
                elif msg.qos > 0:
                    session.queued.append(msg)
            self._mid = self._mid % 65535 + 1
            return self._mid


class InprocLink:
    """Same interface as :class:`~bunco_pi.net.mqtt.MqttLink`; :meth:`cut` drops it abruptly."""

    def __init__(self, broker: InprocBroker, name: str, *, status_topic: str | None = None,
                 sink: Sink | None = None) -> None:
        self.name = name
        self.status_topic = status_topic
        self.inbox: queue.Queue[LinkEvent] = queue.Queue()
        self._deliver: Sink = sink or self.inbox.put
        self.received = self.heard = 0
        self._broker = broker
        self._online = False
        self._subs: list[tuple[str, int]] = []

    def _sink(self, event: LinkEvent) -> None:
        if isinstance(event, Message):
            self.heard += 1
            self.received += 1 if event.qos else 0
        self._deliver(event)

    @property
    def connected(self) -> bool:
        return self._online

    def start(self) -> None:
        will = None
        if self.status_topic is not None:
            will = (self.status_topic, status_payload(self.name, False))
        self._online = True
        self._broker._connect(self.name, self._sink, will, list(self._subs))
        if self.status_topic is not None:
            self.publish(self.status_topic, status_payload(self.name, True), retain=True)

    def wait_connected(self, timeout: float) -> bool:
        return self._online

    def wait_subscribed(self, timeout: float) -> bool:
        return self._online  # subscriptions take effect at once here

    def subscribe(self, pattern: str, qos: int = 1) -> None:
        self._subs.append((pattern, qos))
        if self._online:
            self._broker._subscribe(self.name, pattern, qos)

    def publish(self, topic: str, payload: bytes, qos: int = 1,
                retain: bool = False) -> InprocReceipt:
        if not self._online:
            # Dropped, and the receipt says so: the outbox sender resends on reconnect.
            return InprocReceipt(0, False)
        mid = self._broker._publish(topic, payload, qos, retain)
        if qos > 0:
            self._sink(Published(mid, True))
        return InprocReceipt(mid, True)

    def reconnect(self) -> None:
        """Disconnect and connect again, the session kept."""
        self._online = False
        self._broker._disconnect(self.name, graceful=True)
        self.start()

    def cut(self) -> None:
        """Lose the connection without a goodbye: the broker publishes the will."""
        self._online = False
        self._broker._disconnect(self.name, graceful=False)

    def stop(self) -> None:
        if self._online and self.status_topic is not None:
            self.publish(self.status_topic, status_payload(self.name, False), retain=True)
        self._online = False
        self._broker._disconnect(self.name, graceful=True)
