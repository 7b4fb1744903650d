"""A hall of 500 tables: the console sends a page what changed, not the whole night.

The snapshot built with a ``Memo`` is the snapshot built from scratch; the patch ``Wire`` makes,
applied to the last snapshot the way the page applies it (top-level keys replaced, board rows
replaced by index), gives the new one; and a real server's event stream sends a page that is
up to date the patches, and a page that connects (or fell too far behind) the whole."""

from __future__ import annotations

import json
import socket
import time

from bunco_pi.console.server import PATCHES_KEPT, ConsoleServer
from bunco_pi.console.snapshot import Memo, console_snapshot
from bunco_pi.console.wire import Wire
from bunco_pi.head.groups import TableGroup
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import Night, Player, RingBell, StartRound, TableEntry
from bunco_pi.rules.table_round import Bell, Pass, Tally

TABLES = 500


def _night() -> Night:
    players = [Player(f"p{i}", f"P{i}") for i in range(TABLES * 4 - 1)]
    players.append(Player("ghost1", "Ghost 1", True))
    seating = [tuple(p.id for p in players[t * 4:t * 4 + 4]) for t in range(TABLES)]
    return Night.start(preset("classic"), players, seating)


def _apply(snap: dict, patch: dict) -> dict:
    out = dict(snap)  # the caller's snapshot is a fresh json.loads: its rows can be replaced
    out["board"] = list(snap["board"])
    out.update(patch["set"])
    for index, row in patch["rows"].items():
        out["board"][int(index)] = row
    return out


def test_a_patch_applied_to_the_last_snapshot_is_the_new_one_and_is_small() -> None:
    memo, wire = Memo(), Wire()
    online = set(range(1, TABLES + 1))
    groups = (TableGroup("hall A", tuple(range(1, 251))),
              TableGroup("hall B", tuple(range(251, 501))))

    def both(night: Night, online: set[int], check: bool = True) -> tuple[dict, str, str | None]:
        full, patch = wire.encode(console_snapshot(night, name="hall", table_count=TABLES,
                                                   online=online, groups=groups, memo=memo))
        if check:  # the memo changes nothing (built from scratch, 500 tables take a while)
            fresh = console_snapshot(night, name="hall", table_count=TABLES, online=online,
                                     groups=groups)
            assert json.loads(full) == json.loads(json.dumps(fresh))
        return json.loads(full), full, patch

    night = _night()
    last, full, patch = both(night, online)
    assert patch is None  # the first: pages take the whole
    steps = [lambda n: n.apply(StartRound()), lambda n: n.apply(TableEntry(7, Tally("point"))),
             lambda n: n.apply(TableEntry(300, Tally("point"))), lambda n: n.apply(RingBell())]
    steps += [lambda n, t=t, e=e: n.apply(TableEntry(t, e)) for t in (1, 2, 499, 500)
              for e in (Bell(), Pass())]
    sizes = []
    for i, step in enumerate(steps):
        night = step(night)
        if i == 2:
            online = online - {12}  # table 12's box drops
        new, full, patch = both(night, online, check=i < 5 or i == len(steps) - 1)
        assert patch is not None
        assert _apply(last, json.loads(patch)) == new
        sizes.append((len(patch), len(full)))
        last = new
    # one table's score is one row, not the hall
    assert sizes[1][0] < 1_000 < 400_000 < sizes[1][1]
    assert last["groups"][0]["offline"] == [12] and last["groups"][0]["online"] == 249
    assert last["phase"] == "finishing" and len(last["waiting_for"]) > 400
    assert last["board"][499]["score"] == [0, 0] and last["board"][6]["score"] == [1, 0]


def _events(sock: socket.socket, count: int, timeout: float = 10) -> list[tuple[str, str]]:
    """The next ``count`` events of a stream as (event type, data)."""
    buf, out = b"", []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"only {len(out)} events came: {buf[-300:]!r}"
        while b"\n\n" in buf and len(out) < count:
            block, buf = buf.split(b"\n\n", 1)
            kind, data = "message", None
            for line in block.decode().splitlines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
            if data is not None:
                out.append((kind, data))
        if len(out) < count:
            buf += sock.recv(1 << 20)
    return out


def _stream(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock


def test_the_stream_sends_patches_to_a_page_that_has_the_last_and_the_whole_to_others() -> None:
    srv = ConsoleServer("127.0.0.1", 0, password_hash=None).start()
    try:
        srv.publish('{"night":"a","n":0}')
        time.sleep(0.2)
        early = _stream(srv.port)
        assert _events(early, 1) == [("message", '{"night":"a","n":0}')]
        for n in range(1, 4):
            srv.publish(f'{{"night":"a","n":{n}}}', f'{{"set":{{"n":{n}}},"rows":{{}}}}')
            kind, data = _events(early, 1)[0]
            assert kind == "patch" and json.loads(data)["set"] == {"n": n}
        late = _stream(srv.port)  # a page that connects now gets the whole, once
        assert _events(late, 1) == [("message", '{"night":"a","n":3}')]
        srv.publish('{"night":"b"}')  # no patch: every page takes the whole
        assert _events(early, 1) == [("message", '{"night":"b"}')]
        assert _events(late, 1) == [("message", '{"night":"b"}')]
        early.close()
        late.close()
        # a page further behind than the patches kept is sent the whole
        assert srv._news_since(0).startswith(b"data: ")
        for n in range(PATCHES_KEPT + 2):
            srv.publish(f'{{"n":{n}}}', f'{{"set":{{"n":{n}}},"rows":{{}}}}')
        deadline = time.monotonic() + 5
        while b'"n":' + str(PATCHES_KEPT + 1).encode() not in srv._latest.encode():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        behind = srv._version - PATCHES_KEPT - 1
        assert srv._news_since(behind) == f'data: {{"n":{PATCHES_KEPT + 1}}}\n\n'.encode()
        assert srv._news_since(behind + 1).count(b"event: patch") == PATCHES_KEPT
    finally:
        srv.stop()
