"""What a link to the broker hands its owner, and the interface both links share.

A link's network thread never touches the owner's state: it turns everything that happens
into one of the small frozen records below and hands it to a single sink (by default a
``queue.Queue``; for asyncio pass ``lambda e: loop.call_soon_threadsafe(q.put_nowait, e)``).
The owner consumes them on its own thread, in order.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool = False
    qos: int = 1


@dataclass(frozen=True)
class Connected:
    """The link is (re)connected; ``session_present`` False means queued messages were lost."""

    session_present: bool


@dataclass(frozen=True)
class Disconnected:
    reason: str


@dataclass(frozen=True)
class Published:
    """The broker acknowledged (``ok``) or refused a QoS 1 publish with this message id."""

    mid: int
    ok: bool
    reason: str = ""


LinkEvent = Message | Connected | Disconnected | Published
Sink = Callable[[LinkEvent], None]


class Receipt(Protocol):
    mid: int

    def acknowledged(self) -> bool: ...

    def wait(self, timeout: float) -> bool: ...


class Link(Protocol):
    """A client of the broker; ``MqttLink`` over the network, ``InprocLink`` in one process."""

    name: str
    inbox: queue.Queue[LinkEvent]
    # QoS 1 messages, and messages of any QoS, the link's own thread has received, counted
    # there before its owner takes them from the inbox: a busy owner is not a link that
    # receives nothing, and a link that reads its QoS 0 messages but no QoS 1 one is stuck.
    received: int
    heard: int

    @property
    def connected(self) -> bool: ...

    def start(self) -> None: ...

    def wait_connected(self, timeout: float) -> bool: ...

    def stop(self) -> None: ...

    def reconnect(self) -> None: ...

    def subscribe(self, pattern: str, qos: int = 1) -> None: ...

    def wait_subscribed(self, timeout: float) -> bool: ...

    def publish(self, topic: str, payload: bytes, qos: int = 1,
                retain: bool = False) -> Receipt: ...
