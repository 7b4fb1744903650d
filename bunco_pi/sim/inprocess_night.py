"""The demo's night without mosquitto: the head and every table in this one process, each on
its own thread, talking over the in-process link instead of MQTT.

The same code runs as in a networked night (HeadService, TableBox with NetTableLink, the
simulated scorekeepers pressing mock pins); only the broker is a dictionary in memory.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from pathlib import Path
from typing import Any

from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HEAD_NAME, HeadService, HostAutomation, make_players
from bunco_pi.net.inproc import InprocBroker, InprocLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.rules.house import PRESET_NAMES, HouseRules, preset_text
from bunco_pi.sim.report import final_report


class InprocessNight:
    def __init__(self, rules: HouseRules, rules_toml: str, tables: int, players: int,
                 workdir: Path, record: Path, *, fast: bool, seed: int,
                 pace: str | None = None) -> None:
        self.broker = InprocBroker()
        self.topics = Topics("demo")
        self.tables = tables
        self.workdir = workdir
        self.coordinator = Coordinator(rules, rules_toml, "demo", tables,
                                       entropy=random.Random(seed))
        from bunco_pi.sim.players import make_players as sim_players

        names = [p.name for p in sim_players(players) if not p.ghost]
        self.players = make_players(names, None, tables)
        self.record = record
        self.fast = fast
        self.pace = pace or ("fast" if fast else "human")
        self.seed = seed
        self.stop = threading.Event()
        self.frames = [workdir / f"table-{n}.frame" for n in range(1, tables + 1)]
        self.boxes: list[Any] = []
        self.service: HeadService | None = None  # once the head's thread has made it
        self.keepers: list[Any] = []
        self.head_thread = threading.Thread(target=self._head, name="head", daemon=True)

    def _head(self) -> None:
        link = InprocLink(self.broker, HEAD_NAME, status_topic=self.topics.status(HEAD_NAME))
        with EventLog(self.workdir / "night-demo.sqlite") as log:
            service = HeadService(self.coordinator, link, log, self.topics, self.players,
                                  record_path=str(self.record),
                                  host=HostAutomation(0 if self.fast else 2.5))
            self.service = service
            service.start()
            ended_at = None
            while not self.stop.is_set():
                service.step(timeout=0.05)
                if self.coordinator.ended:
                    ended_at = ended_at or time.monotonic()
                    if time.monotonic() - ended_at > 1.0:
                        break
            service.write_record()
            link.stop()

    def start(self) -> None:
        from gpiozero.pins.mock import MockFactory

        from bunco_pi.hardware.oled import DisplayConfig, open_device
        from bunco_pi.table.box import TableBox
        from bunco_pi.table.config import load_config
        from bunco_pi.table.frame_file import FrameFile
        from bunco_pi.table.net_link import NetTableLink
        from bunco_pi.table.simulated_scorekeeper import SimulatedScorekeeper

        self.head_thread.start()
        for n in range(1, self.tables + 1):
            config = load_config(None).with_overrides(number=n)
            name = table_node(n)

            def connect(sink: Any, name: str = name) -> InprocLink:
                return InprocLink(self.broker, name, status_topic=self.topics.status(name),
                                  sink=sink)

            link = NetTableLink(connect, self.topics, n,
                                self.workdir / f"outbox-demo-table-{n}.sqlite")
            factory = MockFactory()
            box = TableBox(config, self.coordinator.rules, link, ":memory:",
                           device=open_device(DisplayConfig(kind="dummy")), pin_factory=factory,
                           on_frame=FrameFile(self.frames[n - 1]))
            keeper = SimulatedScorekeeper(factory, config.buttons.pins,
                                          debounce=config.buttons.debounce,
                                          hold_time=config.buttons.hold_time,
                                          seed=self.seed * 1000 + n,
                                          pace=self.pace)
            box.node.watchers.append(keeper.observe)
            box.start()
            keeper.start()
            self.boxes.append(box)
            self.keepers.append(keeper)

    def headline(self) -> str:
        night = self.coordinator.night
        if night is None:
            return f"Lobby: {len(self.coordinator.online)} of {self.tables} tables online"
        bell = "  *** BELL ***" if night.bell_rung and night.phase in ("playing", "finishing") \
            else ""
        return f"Set {night.set_number} round {night.round_number}, target {night.target}: " \
               f"{night.phase}{bell}"

    def close(self) -> None:
        self.stop.set()
        self.head_thread.join(10)
        for keeper in self.keepers:
            keeper.stop()
        for box in self.boxes:
            box.stop()


def play_inprocess(args: argparse.Namespace, rules: HouseRules, record: Path, players: int,
                   workdir: Path, pace: str) -> int:
    rules_toml = preset_text(args.rules) if args.rules in PRESET_NAMES else \
        Path(args.rules).read_text(encoding="utf-8")
    night = InprocessNight(rules, rules_toml, args.tables, players, workdir, record,
                           fast=args.fast, seed=args.seed, pace=pace)
    night.start()
    last = ""
    try:
        while night.head_thread.is_alive():
            line = night.headline()
            if line != last:
                print(line, flush=True)
                last = line
            time.sleep(0.2)
    except KeyboardInterrupt:
        night.close()
        print(f"Stopped. The night so far is in {record}")
        return 130
    night.close()
    return final_report(record, rules, workdir)
