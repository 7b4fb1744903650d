"""Scripted table clients for tests of the head: each keeps its own fold of its round (as a
table box does), numbers its entries through a durable outbox, and follows the head's
retained state. Not a table box: no buttons, no screen; the test decides every roll."""

from __future__ import annotations

import queue
import random
from pathlib import Path
from typing import Any

from bunco_pi.net import envelope
from bunco_pi.net.broker import Broker
from bunco_pi.net.link import Message
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.protocol import encode_entry, merge_state, parts_named, seating_page, seats_at
from bunco_pi.rules.house import parse_rules
from bunco_pi.rules.table_round import Bell, Entry, Roll, TableRound, TableSetup
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender


class ScriptedTable:
    def __init__(self, number: int, broker: Broker, topics: Topics, data: Path, *,
                 keepalive: int = 10, resend_after: float = 0.5) -> None:
        self.number = number
        name = table_node(number)
        self.link = MqttLink(name, broker.host, broker.port, username=name,
                             password=broker.credentials.password(name),
                             status_topic=topics.status(name), keepalive=keepalive)
        self.outbox = Outbox(data / f"outbox-{number}.sqlite")
        self.sender = TableSender(self.link, topics, number, self.outbox,
                                  resend_after=resend_after)
        self.parts_topics = {topics.seating(seating_page(number)): "seating",
                             topics.rules(): "rules"}
        for topic in self.parts_topics:
            self.link.subscribe(topic)
        self.link.subscribe(topics.state())
        self.state: dict[str, Any] | None = None
        self.parts: dict[str, dict[str, Any]] = {}
        self.round: TableRound | None = None
        self.round_index = -1
        self.rules = None
        self.sent: list[tuple[int, Entry]] = []  # (round index, entry), in the order sent
        self.topics = topics

    def start(self) -> ScriptedTable:
        self.link.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self.link.stop(timeout)
        self.outbox.close()

    def pump(self) -> None:
        while True:
            try:
                item = self.link.inbox.get_nowait()
            except queue.Empty:
                break
            if self.sender.handle(item):
                continue
            if isinstance(item, Message) and item.topic == self.topics.state():
                env = envelope.try_decode(item.topic, item.payload)
                if env is not None:
                    self.state = env.payload
            elif isinstance(item, Message) and item.topic in self.parts_topics:
                env = envelope.try_decode(item.topic, item.payload)
                if env is not None:
                    self.parts[self.parts_topics[item.topic]] = env.payload
        self.sender.tick()
        self._follow()

    def _follow(self) -> None:
        state = self.state
        if not state or state.get("phase") not in ("playing", "finishing"):
            return
        if any(part not in self.parts for part in parts_named(state)):
            return  # the seating or rules this state goes with: not here yet
        state = merge_state(state, self.parts)
        if state["round_index"] != self.round_index:
            if self.rules is None:
                self.rules = parse_rules(state["rules_toml"])
            seats = tuple(seats_at(state, self.number) or ())
            ghosts = frozenset(p["id"] for p in state["players"] if p["ghost"]) & set(seats)
            self.round = TableRound.begin(TableSetup(
                self.number, seats, state["target"], self.rules,
                can_end_round=self.number == 1 or self.rules.round.ends_at == "any-table",
                ghosts=ghosts))
            self.round_index = state["round_index"]
        if state["bell"] and self.round is not None and not self.round.bell and not self.round.done:
            self.enter(Bell())

    @property
    def playing(self) -> bool:
        return self.round is not None and not self.round.done and self.state is not None \
            and self.state.get("phase") in ("playing", "finishing") \
            and self.state["round_index"] == self.round_index

    def enter(self, entry: Entry) -> None:
        assert self.round is not None
        self.round = self.round.apply(entry)
        self.sender.submit({"round": self.round_index, "entry": encode_entry(entry)})
        self.sent.append((self.round_index, entry))

    def roll(self, rng: random.Random) -> None:
        self.enter(Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))))
