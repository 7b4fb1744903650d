"""The console against a hostile guest, over real loopback sockets: connection and event-stream
caps, the idle (slowloris) and write timeouts, the host's session (item 4 of the review: the
cookie is not the whole key) and strictly typed JSON bodies (item 10: deep nesting is a clean
400, ``"here": "false"`` is refused). Every loop is bounded in count and time."""

from __future__ import annotations

import json
import logging
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from bunco_pi.console.auth import hash_password
from bunco_pi.console.limits import ROOM_GRACE, Limits, RefusalLog
from bunco_pi.console.server import CSRF_HEADER, ConsoleServer
from tests.test_console_desk import PASSWORD, call, desk, login  # noqa: F401  (a fixture)

HOST_PASSWORD = "tables-and-dice"


def _server(**limits) -> ConsoleServer:
    defaults = {"idle_timeout": 1.0, "write_timeout": 1.5}
    return ConsoleServer("127.0.0.1", 0, password_hash=hash_password(HOST_PASSWORD),
                         limits=Limits(**{**defaults, **limits})).start()


@pytest.fixture
def server():
    made: list[ConsoleServer] = []

    def make(**limits) -> ConsoleServer:
        made.append(_server(**limits))
        return made[-1]

    yield make
    for s in made:
        s.stop()


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    return sock


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _request(port: int, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None, source: str = "127.0.0.1"
             ) -> tuple[int, dict, dict[str, str]]:
    """One request from ``source`` (a loopback address), its status, JSON and headers."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json",
                                                       **(headers or {})})
        reply = conn.getresponse()
        raw = reply.read()
        return reply.status, (json.loads(raw) if raw else {}), dict(reply.getheaders())
    finally:
        conn.close()


def _wait(predicate, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


# --- connections -------------------------------------------------------------------------------


def test_an_idle_or_slowloris_connection_is_closed_and_a_real_request_is_not(server):
    srv = server(idle_timeout=1.0)
    idle = _connect(srv.port)
    slow = _connect(srv.port)
    slow.sendall(b"GET /api/snapshot HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    t0 = time.monotonic()
    for _ in range(3):
        time.sleep(0.3)
        slow.sendall(b"X-Slow: 1\r\n")  # a header now and then does not buy more time
    assert _closed_by_server(idle, 3) and _closed_by_server(slow, 3)
    assert time.monotonic() - t0 < 3
    assert _request(srv.port, "GET", "/api/session")[0] == 200
    _wait(lambda: srv.guard.connections == 0, "the closed connections to be forgotten")


def test_one_address_cannot_take_more_than_its_share_and_others_still_get_in(server):
    srv = server(per_address=5, connections=40, idle_timeout=5.0)
    mine = [_connect(srv.port, "127.0.0.2") for _ in range(8)]
    _wait(lambda: srv.guard.refusals.counts["connections over one address's cap"] == 3,
          "three of the eight to be refused")
    assert srv.guard.connections == 5
    assert _request(srv.port, "GET", "/api/session", source="127.0.0.3")[0] == 200
    for sock in mine:
        sock.close()


def test_at_the_total_cap_the_oldest_idle_connection_makes_room(server):
    srv = server(per_address=30, connections=30, idle_timeout=5.0)
    crowd = [_connect(srv.port, f"127.0.1.{1 + n % 10}") for n in range(30)]
    _wait(lambda: srv.guard.connections == 30, "thirty connections")
    # the host asks for something while every slot is held by an idle socket
    assert _request(srv.port, "GET", "/api/session", source="127.0.0.9")[0] == 200
    assert _closed_by_server(crowd[0], 2)  # the oldest went
    assert srv.guard.connections <= 30
    for sock in crowd:
        sock.close()


def test_the_console_keeps_files_for_the_night_under_a_low_open_file_limit():
    limits = Limits(connections=512, streams=200, fd_reserve=256).for_open_files(400)
    assert limits.connections == 80 and limits.streams == 40
    assert Limits().for_open_files(1024).connections == 512  # the default fits systemd's 1024


# --- event streams -----------------------------------------------------------------------------


def _open_stream(port: int, source: str = "127.0.0.1") -> tuple[socket.socket, bytes]:
    sock = _connect(port, source)
    sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    while b"retry:" not in head:  # the first event follows the headers
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head


def test_event_streams_are_capped_per_address_and_in_all(server):
    srv = server(streams=4, streams_per_address=2, idle_timeout=5.0)
    a1, _ = _open_stream(srv.port, "127.0.2.1")
    a2, _ = _open_stream(srv.port, "127.0.2.1")
    a3, head = _open_stream(srv.port, "127.0.2.1")
    assert b"retry: 20000" in head and _closed_by_server(a3, 3)  # come back in 20 s
    b1, _ = _open_stream(srv.port, "127.0.2.2")
    b2, _ = _open_stream(srv.port, "127.0.2.2")
    c1, head = _open_stream(srv.port, "127.0.2.3")
    assert b"retry: 20000" in head and _closed_by_server(c1, 3)
    assert srv.viewers == 4
    a1.close()
    _wait(lambda: srv.guard.streams == 3, "the closed stream to free its slot")
    c2, head = _open_stream(srv.port, "127.0.2.3")
    assert b"retry: 1000" in head
    for sock in (a2, b1, b2, c2):
        sock.close()


def test_a_viewer_that_stops_reading_is_dropped_and_one_that_reads_is_not(server):
    srv = server(write_timeout=1.0, idle_timeout=5.0)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", srv.port))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    reader, _ = _open_stream(srv.port)
    reader.settimeout(0.05)
    big = json.dumps({"night": "x", "pad": "y" * 50_000})
    got = 0
    deadline = time.monotonic() + 20
    while srv.guard.refusals.counts["event streams dropped for not reading"] == 0:
        assert time.monotonic() < deadline, "the stalled viewer was never dropped"
        srv.publish(big)
        try:
            while True:
                got += len(reader.recv(1 << 20))
        except TimeoutError:
            pass
    assert srv.guard.refusals.counts["event streams dropped for not reading"] == 1
    assert got > 500_000 and srv.viewers == 1  # the reader was served all along
    _wait(lambda: srv.guard.connections == 1, "the stalled viewer's connection to go")
    reader.close()
    stalled.close()


# --- logging -------------------------------------------------------------------------------------


def test_each_kind_of_refusal_is_one_line_per_interval(caplog):
    now = [0.0]
    refusals = RefusalLog(60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="bunco_pi.console"):
        for _ in range(10_000):
            refusals.refuse("connections over one address's cap")
            refusals.refuse("wrong passwords")
        now[0] += 61
        refusals.flush()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4 and all("\n" not in line for line in lines)
    assert "9999 times in the last 61 s" in lines[2]


def test_accept_out_of_files_is_a_counted_line_not_a_traceback_each(caplog):
    import asyncio

    from bunco_pi.console.limits import quiet_exception_handler

    refusals = RefusalLog(60)
    handle = quiet_exception_handler(refusals)
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.DEBUG):
            for _ in range(13_000):  # what asyncio reported each second in the review
                handle(loop, {"message": "socket.accept() out of system resource",
                              "exception": OSError(24, "Too many open files")})
    finally:
        loop.close()
    assert len(caplog.records) == 1 and not caplog.records[0].exc_info
    assert "Too many open files" in caplog.records[0].getMessage()
    assert refusals.counts["socket.accept() out of system resource"] == 13_000


# --- item 4: the cookie is not the whole key -------------------------------------------------------


def _login(port: int, source: str = "127.0.0.1", password: str = HOST_PASSWORD
           ) -> tuple[int, dict, dict[str, str]]:
    return _request(port, "POST", "/api/login", json.dumps({"password": password}).encode(),
                    source=source)


def _cookie(headers: dict[str, str]) -> str:
    return headers["Set-Cookie"].split(";")[0]


def test_the_cookie_alone_never_yields_the_csrf_token_nor_acts(server):
    srv = server(idle_timeout=5.0)
    status, reply, headers = _login(srv.port)
    assert status == 200 and reply["csrf"]
    cookie = _cookie(headers)
    status, session, _ = _request(srv.port, "GET", "/api/session", headers={"Cookie": cookie})
    assert status == 200 and session["host"] is True
    assert "csrf" not in session and reply["csrf"] not in json.dumps(session)
    # what a thief with only the cookie can do: nothing that changes the night
    status, _, _ = _request(srv.port, "POST", "/api/logout", b"{}", {"Cookie": cookie})
    assert status == 403
    status, _, _ = _request(srv.port, "POST", "/api/logout", b"{}",
                            {"Cookie": cookie, CSRF_HEADER: reply["csrf"]})
    assert status == 200


def test_a_new_login_ends_the_old_session(server):
    srv = server(idle_timeout=5.0)
    _, first, first_headers = _login(srv.port, "127.0.0.5")
    _, second, second_headers = _login(srv.port, "127.0.0.6")
    old = {"Cookie": _cookie(first_headers), CSRF_HEADER: first["csrf"]}
    status, session, _ = _request(srv.port, "GET", "/api/session", headers=old)
    assert session["host"] is False
    assert _request(srv.port, "POST", "/api/logout", b"{}", old)[0] == 401
    new = {"Cookie": _cookie(second_headers), CSRF_HEADER: second["csrf"]}
    assert _request(srv.port, "POST", "/api/logout", b"{}", new)[0] == 200


def test_sessions_expire_after_half_an_hour_unused():
    from bunco_pi.console.auth import IDLE_SECONDS, SESSION_SECONDS

    assert IDLE_SECONDS <= 30 * 60 and SESSION_SECONDS <= 8 * 3600


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "console.crt", folder / "console.key"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext",
         "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True, timeout=60, check=False)
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    return cert, key


def test_with_https_the_host_logs_in_only_there_and_the_cookie_is_secure(certificate):
    from bunco_pi.console.run import tls_context

    cert, key = certificate
    srv = ConsoleServer("127.0.0.1", 0, password_hash=hash_password(HOST_PASSWORD),
                        limits=Limits(idle_timeout=2.0), https_port=0,
                        tls=tls_context(cert, key)).start()
    try:
        status, reply, _ = _login(srv.port)
        assert status == 403 and f"https://127.0.0.1:{srv.https_port}/#host" in reply["error"]
        assert _request(srv.port, "GET", "/api/snapshot")[0] == 200  # the board stays open
        client = ssl.create_default_context(cafile=str(cert))
        request = urllib.request.Request(
            f"https://127.0.0.1:{srv.https_port}/api/login", method="POST",
            data=json.dumps({"password": HOST_PASSWORD}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=client, timeout=10) as answer:
            cookie = answer.headers["Set-Cookie"]
            assert answer.status == 200 and json.loads(answer.read())["csrf"]
        assert "Secure" in cookie and "HttpOnly" in cookie
        # a client that never finishes its TLS handshake is closed like any idle one
        silent = _connect(srv.https_port)
        assert _closed_by_server(silent, 4)
    finally:
        srv.stop()


# --- passwords ---------------------------------------------------------------------------------------


def test_wrong_passwords_are_refused_with_back_off_and_the_right_one_works_elsewhere(server):
    srv = server(idle_timeout=5.0)
    answers = [_login(srv.port, "127.0.3.1", "wrong-password-1")[0] for _ in range(6)]
    assert answers[:3] == [403, 403, 403] and answers[3:] == [429, 429, 429]
    status, reply, headers = _login(srv.port, "127.0.3.1", "wrong-password-1")
    assert status == 429 and int(headers["Retry-After"]) >= 1 and "try again in" in reply["error"]
    assert _login(srv.port, "127.0.3.1")[0] == 429  # the right one waits too, from there
    assert _login(srv.port, "127.0.3.2")[0] == 200  # and works from another address


# --- item 10: every JSON body strictly typed -----------------------------------------------------------


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000,
                                  b'{"password":' + b"[" * 3000 + b"]" * 3000 + b"}",
                                  b"{" * 50 + b'"a":1' + b"}" * 50])
def test_deeply_nested_json_to_the_login_is_a_clean_400(server, caplog, body):
    srv = server(idle_timeout=5.0, body_max=256 * 1024)
    with caplog.at_level(logging.DEBUG):
        status, reply, _ = _request(srv.port, "POST", "/api/login", body)
    assert status == 400 and "nests deeper" in reply["error"]
    assert not any(r.exc_info for r in caplog.records)
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("body, expect", [
    (b'{"password": 12345678901}', "must be a string"),
    (b'{"password": "x", "admin": true}', "unknown field 'admin'"),
    (b"[]", "send a JSON object"),
    (b"\xff\xfe{", "not JSON"),
    (b"{}", "missing field 'password'"),
])
def test_a_login_body_of_the_wrong_shape_is_a_400_naming_the_field(server, body, expect):
    srv = server(idle_timeout=5.0)
    status, reply, _ = _request(srv.port, "POST", "/api/login", body)
    assert status == 400 and expect in reply["error"]


def test_here_false_as_a_string_is_refused_not_checked_in(desk):  # noqa: F811
    service, base = desk
    cookie, csrf = login(base)
    status, reply, _ = call(base, "/api/host/roster",
                            {"roster": [{"name": "Ann", "here": "false"},
                                        {"name": "Bea", "here": True}]}, cookie, csrf)
    assert status == 400 and "line 1: field 'here' must be true or false, not a string" \
        in reply["error"]
    assert all(p.ghost or p.name != "Ann" for p in service.players)
    status, reply, _ = call(base, "/api/host/roster",
                            {"roster": [{"name": "Ann", "here": False},
                                        {"name": "Bea", "here": True}]}, cookie, csrf)
    assert status == 200 and reply["message"].startswith("1 checked in")
    assert "Ann" not in [p.name for p in service.players]


@pytest.mark.parametrize("action, body, expect", [
    ("undo", {"table": True}, "field 'table' must be a whole number, not true or false"),
    ("undo", {"table": 2.0}, "field 'table' must be a whole number, not a number"),
    ("arrive", {"player": "ghost1", "name": ["Zoe"]}, "field 'name' must be a string"),
    ("leave", {"player": "p1", "also": "p2"}, "unknown field 'also'"),
    ("bell", {"ring": True}, "unknown field 'ring'"),
    ("roster", {"roster": [{"name": "Ann", "here": 1}]}, "must be true or false"),
    ("roster", {"roster": ["Ann"]}, "line 1: send a JSON object"),
])
def test_every_host_action_takes_only_its_own_fields_of_their_own_types(desk, action, body,  # noqa: F811
                                                                          expect):
    _, base = desk
    cookie, csrf = login(base)
    status, reply, _ = call(base, f"/api/host/{action}", body, cookie, csrf)
    assert status == 400 and expect in reply["error"]


def test_deeply_nested_json_to_a_host_action_is_a_clean_400(desk):  # noqa: F811
    _, base = desk
    cookie, csrf = login(base)
    request = urllib.request.Request(
        base + "/api/host/roster", data=b'{"roster":' + b"[" * 5000 + b"]" * 5000 + b"}",
        headers={"Content-Type": "application/json", "Cookie": cookie, CSRF_HEADER: csrf},
        method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert "nests deeper" in json.loads(refused.value.read())["error"]


def test_for_room_a_silent_connection_goes_before_one_that_has_sent_something(server):
    srv = server(per_address=30, connections=10, idle_timeout=5.0)
    talker = _connect(srv.port, "127.0.4.1")
    talker.sendall(b"GET /api/snapshot HTTP/1.1\r\n")  # the oldest, halfway through its headers
    _wait(lambda: len(srv.guard._waiting) == 1, "the talker's bytes")
    silent = [_connect(srv.port, "127.0.4.2") for _ in range(9)]
    _wait(lambda: srv.guard.connections == 10, "ten connections")
    time.sleep(ROOM_GRACE + 0.2)  # each has had its time to speak
    newcomer = _connect(srv.port, "127.0.4.3")
    assert _closed_by_server(silent[0], 2)  # the oldest silent one, not the older talker
    talker.sendall(b"Host: x\r\n\r\n")
    talker.settimeout(5)
    assert talker.recv(100).startswith(b"HTTP/1.1 200")
    for sock in (talker, newcomer, *silent):
        sock.close()


def test_for_room_a_connection_just_made_is_spared_while_a_slowloris_waits(server):
    """A burst of accepts must not close the newest connection of the burst (the host's, its
    request already in its socket) while an old client still dribbles its headers."""
    srv = server(per_address=30, connections=3, idle_timeout=5.0)
    slow = _connect(srv.port, "127.0.5.1")
    slow.sendall(b"GET / HTTP/1.1\r\n")
    _wait(lambda: len(srv.guard._waiting) == 1, "the slow client's bytes")
    time.sleep(ROOM_GRACE + 0.2)
    fresh = [_connect(srv.port, "127.0.5.2") for _ in range(2)]
    _wait(lambda: srv.guard.connections == 3, "three connections")
    host = _connect(srv.port, "127.0.5.3")
    assert _closed_by_server(slow, 2)
    for sock in fresh:
        sock.sendall(b"GET /api/session HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
    for sock in (host, *fresh):
        sock.close()


def test_whom_a_connection_counts_against():
    from bunco_pi.console.limits import address_key

    assert address_key(("192.168.1.23", 50000)) == "192.168.1.23"
    assert address_key(("::ffff:192.168.1.23", 50000, 0, 0)) == "192.168.1.23"
    # two phones on the party's IPv6 LAN share its /64 but are two guests
    assert address_key(("fd00::1:2", 1, 0, 0)) != address_key(("fd00::3:4", 1, 0, 0))


def test_the_console_stops_quietly_with_viewers_still_connected(caplog):
    srv = _server(idle_timeout=5.0)
    streams = [_open_stream(srv.port, f"127.0.6.{1 + n % 20}")[0] for n in range(60)]
    _wait(lambda: srv.viewers == 60, "sixty viewers")
    with caplog.at_level(logging.DEBUG):
        srv.stop()
        import gc

        gc.collect()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert "Traceback" not in caplog.text
    for sock in streams:
        assert _closed_by_server(sock, 3)
        sock.close()
