"""The head's real shell for table tests: ``HeadService`` on a thread of its own."""

from __future__ import annotations

import random
import threading

from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HeadService
from bunco_pi.rules.house import preset, preset_text


class ServiceHead:
    """The head's real shell (HeadService) on a thread of its own, over the in-process broker;
    the test speaks to it only through its inbox, as the bell button and the console do."""

    def __init__(self, connect, topics, log_path, players, tables=2, rules="classic"):
        self.coord = Coordinator(preset(rules), preset_text(rules), topics.night, tables,
                                 entropy=random.Random(3))
        self.link = connect(None)
        self.topics, self.log_path, self.players = topics, log_path, players
        self._stop = threading.Event()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self._ready.wait(5)

    def _run(self):
        with EventLog(self.log_path) as log:
            self.service = HeadService(self.coord, self.link, log, self.topics, self.players)
            self.service.start()
            self._ready.set()
            while not self._stop.is_set():
                self.service.step(timeout=0.02)
            self.link.stop()

    def put(self, item):
        self.link.inbox.put(item)

    def close(self):
        self._stop.set()
        self.thread.join(5)

