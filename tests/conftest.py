"""Shared fixtures: a fresh gpiozero MockFactory per test; a real mosquitto on a free loopback
port, links to it, and a cuttable wire; the labelled dice photos."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bunco_pi.errors import UserError
from bunco_pi.net.broker import Broker, find_mosquitto
from bunco_pi.net.link import LinkEvent
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics

_nights = itertools.count(1)

# The documented place of the labelled dice photos, beside the repository; or set the variable.
_BESIDE_REPO = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "dice-photos"
PHOTOS = Path(os.environ.get("BUNCO_DICE_PHOTOS", _BESIDE_REPO))


def _require_mosquitto() -> None:
    try:
        find_mosquitto()
    except UserError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    """One broker for the session; tests keep apart by night name. The broker binds a client
    id to its user, so a test that watches beside a head logs in as ``watcher`` (read-only)."""
    _require_mosquitto()
    with Broker(tables=4, readers=("watcher",)) as b:
        yield b


@pytest.fixture
def private_broker() -> Iterator[Broker]:
    """A broker of the test's own, for tests that stop or kill it."""
    _require_mosquitto()
    with Broker(tables=4) as b:
        yield b


@pytest.fixture
def topics() -> Topics:
    return Topics(f"t{next(_nights)}-{uuid.uuid4().hex[:6]}")


LinkFactory = Callable[..., MqttLink]


@pytest.fixture
def make_link(broker: Broker) -> Iterator[LinkFactory]:
    yield from _link_factory(broker)


@pytest.fixture
def make_private_link(private_broker: Broker) -> Iterator[LinkFactory]:
    yield from _link_factory(private_broker)


def _link_factory(b: Broker) -> Iterator[LinkFactory]:
    links: list[MqttLink] = []

    def make(user: str, *, password: str | None = None, port: int | None = None,
             status_topic: str | None = None, start: bool = True,
             wait: bool = True) -> MqttLink:
        link = MqttLink(
            user, b.host, port or b.port, username=user,
            password=b.credentials.password(user) if password is None else password,
            status_topic=status_topic, client_id=f"{user}-{uuid.uuid4().hex[:8]}",
            keepalive=5, reconnect_delay=(0.05, 0.5),
        )
        links.append(link)
        if start:
            link.start()
            if wait:
                assert link.wait_connected(5), f"{user} did not connect"
        return link

    yield make
    for link in links:
        link.stop(timeout=1)


def pump(inbox: queue.Queue[LinkEvent], handle: Callable[[LinkEvent], object],
         until: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Feed events to ``handle`` on this thread until ``until()``; bounded by ``timeout``."""
    deadline = time.monotonic() + timeout
    while not until():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        with contextlib.suppress(queue.Empty):
            handle(inbox.get(timeout=min(left, 0.05)))
    return True


def collect(inbox: queue.Queue[LinkEvent], seconds: float) -> list[LinkEvent]:
    """Everything that arrives within ``seconds`` (a bounded quiet wait)."""
    out: list[LinkEvent] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            out.append(inbox.get(timeout=left))
        except queue.Empty:
            break
    return out


class CutProxy:
    """A TCP relay on loopback whose wire can be cut (every connection dropped, new ones
    closed at once) and restored: a table losing its Wi-Fi while the rest of the night goes on.

    ``cut(silent=True)`` is a Wi-Fi gone quiet instead: nothing is closed, every byte either way
    is dropped (no FIN, no RST), new connections are taken and never answered; each end finds
    out only by its own keepalive. Connections cut silently stay dead after ``restore()``.

    ``hold_replies()`` drops every byte from the broker to the clients from then on, and lets
    theirs through: their QoS 1 messages reach the broker, and no PUBACK comes back.
    """

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._closing = threading.Event()
        self._silent = False
        self._dead: set[socket.socket] = set()  # connections cut silently: bytes dropped
        self._upstreams: set[socket.socket] = set()  # the broker's ends
        self._replies_held = False
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            if not self._up.is_set():
                if self._silent:  # taken, never answered: a connect that times out
                    with self._lock:
                        self._socks.append(client)
                        self._dead.add(client)
                    threading.Thread(target=self._relay, args=(client, client),
                                     daemon=True).start()
                else:
                    client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=2)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._socks += [client, upstream]
                self._upstreams.add(upstream)
            for a, b in ((client, upstream), (upstream, client)):
                t = threading.Thread(target=self._relay, args=(a, b), daemon=True)
                t.start()

    def _relay(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if src in self._dead or dst in self._dead:
                    continue  # cut silently: the bytes are lost on the way
                if self._replies_held and src in self._upstreams:
                    continue
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self, silent: bool = False) -> None:
        self._up.clear()
        if silent:
            self._silent = True
            with self._lock:
                self._dead.update(self._socks)
            return
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def hold_replies(self) -> None:
        self._replies_held = True

    def restore(self) -> None:
        self._silent = False
        self._up.set()

    def close(self) -> None:
        self._closing.set()
        self._silent = False
        self.cut()
        self._listener.close()
        self._threads[0].join(2)


@pytest.fixture
def cut_proxy(broker: Broker) -> Iterator[CutProxy]:
    proxy = CutProxy(broker.port)
    yield proxy
    proxy.close()


@pytest.fixture
def mock_factory():
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    previous = Device.pin_factory
    factory = MockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        factory.close()
        Device.pin_factory = previous


@pytest.fixture
def photos() -> Path:
    """The labelled dice photos; tests using them skip when they are not here."""
    if not (PHOTOS / "images").is_dir():
        pytest.skip(f"dice photos not found at {PHOTOS}: 310 labelled webcam photos (MIT) from "
                    "matteop65/Dice_Detection_Recognition; docs/dice-camera.md 'Getting the "
                    "photos' says how to fetch them; or set BUNCO_DICE_PHOTOS to their folder")
    return PHOTOS


# scripts/test.sh runs the suite on two workers (pytest-xdist, --dist loadgroup). The nights
# played by real processes whose faults are timed (a wire cut for 30 s, a keepalive missed, a
# head killed mid-round and back before its deadline) run one after another on one worker, so
# that no two of them share the machine's cores; they start first, as together they are the
# longest part of the run (some 14 of its 15 minutes). Everything else is spread over both workers.
NIGHTS_WITH_TIMED_FAULTS = frozenset({
    "test_timed_night", "test_night_faults", "test_hostile", "test_pico_night",
    "test_night_held", "test_intake_watch", "test_night_names", "test_pico_box",
    "test_service_watchdog", "test_head_service", "test_roster_restart", "test_delivery",
    "test_intake_limits",
})


@pytest.hookimpl(wrapper=True)  # around xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]
                                  ) -> Iterator[None]:
    if not config.pluginmanager.hasplugin("xdist"):  # pytest alone, as on a Pi's python3
        return (yield)
    nights = [item for item in items if item.path.stem in NIGHTS_WITH_TIMED_FAULTS]
    for item in nights:
        item.add_marker(pytest.mark.xdist_group("nights"))
    chosen = set(map(id, nights))
    items[:] = nights + [item for item in items if id(item) not in chosen]
    return (yield)
