"""A paho-mqtt 2.x client for one node, set up the way this project needs it.

- MQTT v5, ``clean_start=False`` and a SessionExpiryInterval, so the broker keeps the node's
  subscriptions and queued QoS 1 messages across a reconnect or a restart of the node;
- TCP_NODELAY on the socket (with ``set_tcp_nodelay`` on the broker a QoS 1 round trip is
  ~0.5 ms instead of ~88 ms);
- a retained birth ``online`` on connect and a retained last will ``offline``;
- ``connect_async`` + ``loop_start``: paho's thread connects, reconnects with exponential
  backoff and runs the callbacks;
- every callback is guarded (an exception escaping one would kill paho's thread) and only
  hands a record to the sink; the owner consumes them on its own thread;
- ``drop_larger_than``: a message bigger than any the owner takes is dropped in paho's thread,
  never queued (paho has acknowledged it already, so the broker's in-flight slot comes back):
  a flood of big messages costs the owner no memory;
- ``reconnect()``: drop the connection and make a new one, the session kept (the head's way
  out when it stops receiving while tables wait).
"""

from __future__ import annotations

import functools
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bunco_pi.net import envelope
from bunco_pi.net.link import (
    Connected,
    Disconnected,
    LinkEvent,
    Message,
    Published,
    Sink,
)

log = logging.getLogger(__name__)

SESSION_EXPIRY_S = 12 * 3600  # longer than a night: a node rebooting mid-night keeps its session
DROP_LOG_S = 10.0  # at most one line this often about messages dropped for their size
F = TypeVar("F", bound=Callable[..., Any])


def status_payload(node: str, online: bool) -> bytes:
    return envelope.message(node, {"status": "online" if online else "offline"})


def _guarded(func: F) -> F:
    @functools.wraps(func)
    def wrapper(self: MqttLink, *args: Any, **kwargs: Any) -> Any:
        try:
            return func(self, *args, **kwargs)
        except Exception:
            log.exception("%s: error in MQTT callback %s (ignored)", self.name, func.__name__)
            return None

    return wrapper  # type: ignore[return-value]


class PahoReceipt:
    """Whether the broker acknowledged one QoS 1 publish (PUBACK)."""

    def __init__(self, info: mqtt.MQTTMessageInfo) -> None:
        self._info = info
        self.mid = info.mid

    def acknowledged(self) -> bool:
        try:
            return self._info.is_published()
        except RuntimeError:  # paho's word for a message queued while offline: not yet
            return False

    def wait(self, timeout: float) -> bool:
        # paho's wait_for_publish raises for a message queued while offline; poll instead.
        deadline = time.monotonic() + timeout
        while not self.acknowledged():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True


class MqttLink:
    """One node's connection to mosquitto.

    ``client_id`` defaults to ``name``: keep it stable, the broker keys the session on it.
    ``status_topic`` (``Topics.status(name)``) gets the retained birth and will. Use
    :attr:`inbox` (or pass ``sink``) to receive :class:`~bunco_pi.net.link.LinkEvent` records.
    """

    def __init__(self, name: str, host: str, port: int, *, username: str | None = None,
                 password: str | None = None, status_topic: str | None = None,
                 sink: Sink | None = None, keepalive: int = 10,
                 reconnect_delay: tuple[float, float] = (0.1, 2.0),
                 session_expiry: int = SESSION_EXPIRY_S, client_id: str | None = None,
                 max_packet_size: int | None = None,
                 drop_larger_than: int | None = None) -> None:
        self.name = name
        self.host, self.port = host, port
        self.status_topic = status_topic
        self.inbox: queue.Queue[LinkEvent] = queue.Queue()
        self._sink: Sink = sink or self.inbox.put
        self._connected = threading.Event()
        self._subs: tuple[tuple[str, int], ...] = ()  # replaced whole, never mutated
        # Message ids of SUBSCRIBEs not yet acknowledged; guarded by the condition's lock.
        self._sub_cond = threading.Condition()
        self._subs_unacked: set[int] = set()
        self._last_refusal = ""
        self._keepalive = keepalive
        self._session_expiry = session_expiry
        # MQTT v5's Maximum Packet Size: the broker drops, rather than delivers, any message
        # bigger than this for this node. Not for the head: mosquitto 2.0.11 keeps the
        # in-flight slot of each message it drops so (docs/network.md, "Limits").
        self._max_packet_size = max_packet_size
        self._drop_larger_than = drop_larger_than
        # Messages dropped for their size, and when the last line about them was logged:
        # written by paho's thread only.
        self.dropped = 0
        # QoS 1 messages, and messages of any QoS, paho's thread has received (the head's
        # intake watch): counted there, read by the owner.
        self.received = self.heard = 0
        self._dropped_logged = 0
        self._drop_logged_at = -1e9

        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or name,
                             protocol=mqtt.MQTTv5)
        if username is not None:
            client.username_pw_set(username, password)
        if status_topic is not None:
            client.will_set(status_topic, status_payload(name, False), qos=1, retain=True)
        client.reconnect_delay_set(*reconnect_delay)
        # No cap on this node's own QoS 1 messages awaiting the broker's PUBACK. paho's default
        # of 20 holds the rest back in its queue until earlier PUBACKs come: at 500 tables the
        # head's bell, published after a batch's hundreds of acks and views, would wait there
        # for their round trips. TCP paces the connection; mosquitto takes a client's QoS 1
        # messages without a quota (tests/test_mqtt.py).
        client.max_inflight_messages_set(0)
        client.on_socket_open = self._on_socket_open
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        self._client = client

    # --- owner-side API (any thread; paho's publish/subscribe are thread-safe) -------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = self._session_expiry
        if self._max_packet_size is not None:
            props.MaximumPacketSize = self._max_packet_size
        self._client.connect_async(self.host, self.port, keepalive=self._keepalive,
                                   clean_start=False, properties=props)
        self._client.loop_start()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def subscribe(self, pattern: str, qos: int = 1) -> None:
        self._subs = (*self._subs, (pattern, qos))
        # Unconditional: if not connected paho refuses it and _on_connect sends the new list;
        # if a connect is completing right now this closes the gap.
        self._send_subscribe(self._client, pattern, qos)

    def wait_subscribed(self, timeout: float) -> bool:
        """Wait until connected and every subscription so far is acknowledged by the broker
        (a message published before that may not reach this node)."""
        deadline = time.monotonic() + timeout
        if not self._connected.wait(timeout):
            return False
        with self._sub_cond:
            return self._sub_cond.wait_for(lambda: not self._subs_unacked,
                                           max(0.0, deadline - time.monotonic()))

    def _send_subscribe(self, client: mqtt.Client, pattern: str, qos: int) -> None:
        # Holding the lock across the call: the SUBACK callback cannot run before the mid
        # is recorded.
        with self._sub_cond:
            rc, mid = client.subscribe(pattern, qos)
            if rc == mqtt.MQTT_ERR_SUCCESS and mid is not None:
                self._subs_unacked.add(mid)

    def publish(self, topic: str, payload: bytes, qos: int = 1,
                retain: bool = False) -> PahoReceipt:
        return PahoReceipt(self._client.publish(topic, payload, qos=qos, retain=retain))

    def reconnect(self) -> None:
        """Drop the connection and connect again (the broker keeps the session: what is
        queued for this node comes after the new connect). From the owner's thread."""
        self._client.disconnect()
        self._client.loop_stop()
        self._connected.clear()
        self.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Say ``offline`` (retained), disconnect cleanly, stop paho's thread."""
        if self.connected and self.status_topic is not None:
            self.publish(self.status_topic, status_payload(self.name, False),
                         retain=True).wait(timeout)
        self._client.disconnect()
        self._client.loop_stop()
        self._connected.clear()

    # --- paho callbacks (paho's thread): hand records to the sink, nothing else ------------

    @_guarded
    def _on_socket_open(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        if hasattr(sock, "setsockopt"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @_guarded
    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            text = str(reason)
            if text != self._last_refusal:  # once per change, not once per retry
                log.warning("%s: broker %s:%s refused the connection: %s",
                            self.name, self.host, self.port, text)
                self._last_refusal = text
            self._sink(Disconnected(f"refused: {text}"))
            return
        self._last_refusal = ""
        with self._sub_cond:
            self._subs_unacked.clear()  # a new connection: earlier SUBACKs will never come
        for pattern, qos in self._subs:
            self._send_subscribe(client, pattern, qos)
        if self.status_topic is not None:
            client.publish(self.status_topic, status_payload(self.name, True), qos=1,
                           retain=True)
        self._connected.set()
        self._sink(Connected(bool(flags.session_present)))

    @_guarded
    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        log.debug("%s: cannot reach broker %s:%s, retrying", self.name, self.host, self.port)

    @_guarded
    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        if was:
            log.info("%s: disconnected from broker: %s", self.name, reason)
            self._sink(Disconnected(str(reason)))

    @_guarded
    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        self.heard += 1
        if msg.qos:
            self.received += 1
        limit = self._drop_larger_than
        if limit is not None and len(msg.payload) > limit:
            self._drop(msg.topic, len(msg.payload), limit)
            return
        self._sink(Message(msg.topic, bytes(msg.payload), bool(msg.retain), msg.qos))

    def _drop(self, topic: str, size: int, limit: int) -> None:
        # One line at most every DROP_LOG_S, with the count since the last: a flood must not
        # become a flood of log lines.
        self.dropped += 1
        now = time.monotonic()
        if now - self._drop_logged_at >= DROP_LOG_S:
            log.warning("%s: dropped %d message(s) over %d bytes (the latest %d bytes on %s)",
                        self.name, self.dropped - self._dropped_logged, limit, size,
                        envelope.clip(topic, 120))
            self._dropped_logged, self._drop_logged_at = self.dropped, now

    @_guarded
    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any,
                    properties: Any) -> None:
        ok = not reason.is_failure
        if not ok:
            # mosquitto answers an MQTT v5 publish the ACL denies with "Not authorized".
            log.warning("%s: broker refused publish (mid %d): %s", self.name, mid, reason)
        self._sink(Published(mid, ok, str(reason)))

    @_guarded
    def _on_subscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any,
                      properties: Any) -> None:
        with self._sub_cond:
            self._subs_unacked.discard(mid)
            self._sub_cond.notify_all()
        for reason in reasons:
            if reason.is_failure:
                log.warning("%s: broker refused a subscription: %s", self.name, reason)
