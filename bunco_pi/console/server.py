"""The console's web server: aiohttp on its own thread and event loop.

Viewers get one page and a server-sent-events stream (``/events``): every change of the night
is one ``data:`` line holding the whole snapshot, so a page that reconnects (the browser's
EventSource does it by itself after the head or the network comes back) is whole again at
once. The server keeps only the latest snapshot string; host requests go to the head's queue
through ``ConsoleBridge``, never to the night directly.

Every connection goes through ``limits.Guard`` (caps per address and in all, idle and header
timeouts, event streams that must keep reading), and every JSON body is read under a time
limit and checked field by field (``bodies``) before anything acts on it. With HTTPS on, the
host's pages and actions answer only there and the session cookie is ``Secure``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from bunco_pi.console import desk, pages
from bunco_pi.console.auth import Guesses, Sessions, check_password_and_release
from bunco_pi.console.bodies import BadBody, host_body, login_body, read_json
from bunco_pi.console.cards import cards_csv, cards_html
from bunco_pi.console.limits import (
    ACCEPT_BATCH,
    Connection,
    Guard,
    GuardedProtocol,
    Limits,
    address_key,
    quiet_exception_handler,
    small_send_buffer,
)
from bunco_pi.errors import UserError
from bunco_pi.season import load_nights, points_chart_svg, season_csv, season_table

log = logging.getLogger("bunco_pi.console")

COOKIE = "bunco_host"
CSRF_HEADER = "X-CSRF-Token"
KEEPALIVE = 15.0  # seconds between SSE comments, so a dead viewer is noticed
HOST_TIMEOUT = 10.0
WRONG_PASSWORD_DELAY = 0.5
# Password checks waiting for the one hashing thread (scrypt takes 16 MiB while it runs);
# past this a try is refused at once rather than queued.
HASH_QUEUE = 4
STATIC = ("index.html", "console.js", "console.css", "cards.css", "cards.js", "table-cards.css")
HOST_ACTIONS = ("roster", "start", "bell", "end", "close-held", "arrive", "leave", "undo",
                "pause", "resume")
# Over its cap an event stream is told to come back later (an EventSource retries by itself;
# a 503 would make it give up for good).
STREAM_FULL_RETRY_MS = 20_000
PATCHES_KEPT = 16


class ConsoleServer:
    def __init__(self, host: str, port: int, *, password_hash: str | None,
                 season_dir: str | Path | None = None, limits: Limits | None = None,
                 https_port: int | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.host, self.port = host, port
        self.password_hash = password_hash
        self.season_dir = Path(season_dir) if season_dir else None
        self.bridge: desk.ConsoleBridge | None = None
        self.sessions = Sessions()
        self.guesses = Guesses()
        self.limits = (limits or Limits()).for_open_files()
        self.guard = Guard(self.limits)
        if (https_port is None) != (tls is None):
            raise ValueError("HTTPS needs both a port and a TLS context")
        self.https_port, self.tls = https_port, tls
        self._hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="console-hash")
        self._hash_waiting = 0
        self._servers: list[asyncio.AbstractServer] = []
        self._chores: asyncio.Task | None = None
        self._latest = "{}"
        self._version = 0
        # the last few patches by version: a page a few snapshots behind catches up on them
        self._patches: deque[tuple[int, str]] = deque(maxlen=PATCHES_KEPT)
        # resolved, and replaced, at each new snapshot: what every idle stream waits on
        self._news: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.viewers = 0

    # --- life cycle (called from the head's thread) ------------------------------------------

    def start(self) -> ConsoleServer:
        self._thread = threading.Thread(target=self._serve, name="console", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise UserError(f"console on port {self.port}: cannot listen ({self._error})")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._hashing.shutdown(wait=False, cancel_futures=True)

    async def _shutdown(self) -> None:
        if self._chores is not None:
            self._chores.cancel()
        for server in self._servers:
            server.close()
        assert self._runner is not None
        await self._runner.cleanup()
        self.guard.close_all()
        # Whatever is still running (hundreds of event streams, say) ends here, on a running
        # loop: left to the garbage collector after the loop closed, each logged a traceback.
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=5)

    def publish(self, snapshot_json: str, patch_json: str | None = None) -> None:
        """Any thread: the night's new snapshot for every viewer, and what changed since the
        last one (``wire.Wire``; None: every page takes the whole)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._set, snapshot_json, patch_json)

    def _set(self, snapshot_json: str, patch_json: str | None = None) -> None:
        self._latest = snapshot_json
        self._version += 1
        if patch_json is None:
            self._patches.clear()
        else:
            self._patches.append((self._version, patch_json))
        news, self._news = self._news, asyncio.get_running_loop().create_future()
        if news is not None and not news.done():
            news.set_result(None)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(quiet_exception_handler(self.guard.refusals))
        try:
            self._news = loop.create_future()
            self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False,
                                         shutdown_timeout=1.0,
                                         keepalive_timeout=self.limits.idle_timeout)
            loop.run_until_complete(self._runner.setup())
            self.port = loop.run_until_complete(self._listen(self.port, None))
            if self.https_port is not None:
                self.https_port = loop.run_until_complete(self._listen(self.https_port, self.tls))
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._chores = loop.create_task(self._every_interval())
        self._loop = loop
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _listen(self, port: int, tls: ssl.SSLContext | None) -> int:
        """Listen on ``port`` (0: any free one) with every connection under the guard; aiohttp's
        own sites would hand each accepted socket straight to its handler."""
        assert self._runner is not None
        handler = self._runner.server
        assert handler is not None
        server = await asyncio.get_running_loop().create_server(
            lambda: GuardedProtocol(self.guard, handler(), tls), self.host, port,
            backlog=ACCEPT_BATCH, reuse_address=True)
        self._servers.append(server)
        return server.sockets[0].getsockname()[1]

    async def _every_interval(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, self.limits.log_every))
            self.guard.refusals.flush()

    # --- the app ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guarded, self._headers],
                              client_max_size=self.limits.body_max)
        r = app.router
        r.add_get("/", self._page)
        r.add_get("/static/{name}", self._static)
        r.add_get("/favicon.ico", self._no_icon)
        r.add_get("/events", self._events)
        r.add_get("/api/snapshot", self._snapshot)
        r.add_get("/api/session", self._session)
        r.add_post("/api/login", self._login)
        r.add_post("/api/logout", self._logout)
        r.add_post("/api/host/{action}", self._host_action)
        r.add_get("/host/night.json", self._download_record)
        r.add_get("/host/cards.csv", self._download_cards_csv)
        r.add_get("/host/cards.html", self._download_cards_html)
        r.add_get("/host/audit.txt", self._download_audit)
        r.add_get("/host/tables.html", self._table_cards)
        r.add_get("/season", self._season_page)
        r.add_get("/season.csv", self._season_csv)
        r.add_get("/season.svg", self._season_svg)
        pages.register(r, lambda: self._latest, self._nights)
        return app

    @web.middleware
    async def _guarded(self, request: web.Request, handler: Callable[..., Awaitable[Any]]) -> Any:
        """The request is in progress (its connection is not idle) until its handler returns;
        an error of ours is one line in the log and a plain 500, never a traceback to a
        stranger or a flood of them in the log."""
        conn = self.guard.request_started(request.transport)
        try:
            return await handler(request)
        except (web.HTTPException, asyncio.CancelledError):
            raise
        except ConnectionError:
            # the client went before its answer (a guest dropped or closed to make room):
            # nothing to say, to anyone; aiohttp would log it as an error with a traceback
            return web.Response(status=400, text="the connection went first")
        except BadBody as exc:
            return _refuse(exc.status, str(exc))
        except Exception as exc:  # a bug: the log says where, the client only that it failed
            kind = f"errors in {request.method} {request.path}"
            self.guard.refusals.refuse(kind, f"{type(exc).__name__}: {exc}"[:200])
            if self.guard.refusals.counts[kind] == 1:
                log.error("console: %s %s failed", request.method, request.path, exc_info=exc)
            return _refuse(500, "the console could not do that; the head's log says why")
        finally:
            self.guard.request_ended(conn)

    @web.middleware
    async def _headers(self, request: web.Request, handler: Callable[..., Awaitable[Any]]) -> Any:
        response = await handler(request)
        # everything comes from the Pi: no other origin may load scripts, styles or frames
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    async def _page(self, request: web.Request) -> web.StreamResponse:
        return self._file("index.html")

    async def _no_icon(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return self._file(name)

    def _file(self, name: str) -> web.Response:
        body = resources.files("bunco_pi.console").joinpath("static", name).read_bytes()
        kind = {"html": "text/html", "js": "text/javascript", "css": "text/css"}[name.rsplit(".", 1)[1]]
        return web.Response(body=body, content_type=kind, charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    async def _snapshot(self, request: web.Request) -> web.Response:
        return web.Response(text=self._latest, content_type="application/json")

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache"})
        conn = self.guard.connection(request.transport)
        address = conn.address if conn is not None else address_key(request.remote)
        if not self.guard.start_stream(conn, address):
            response.force_close()
            await response.prepare(request)
            await response.write(f"retry: {STREAM_FULL_RETRY_MS}\n: the console has as many "
                                 "viewers as it serves; trying again soon\n\n".encode())
            return response
        small_send_buffer(request.transport, self.limits.stream_sndbuf)
        seen = -1
        self.viewers += 1
        try:
            await response.prepare(request)
            await self._send(conn, response, b"retry: 1000\n\n")
            while True:
                if seen != self._version:
                    version, news = self._version, self._news_since(seen)
                    await self._send(conn, response, news)
                    seen = version
                    continue
                assert self._news is not None
                try:  # shielded: a stream's time-out must not cancel every stream's wait
                    await asyncio.wait_for(asyncio.shield(self._news), KEEPALIVE)
                except TimeoutError:
                    await self._send(conn, response, b": still here\n\n")
        except TimeoutError:  # the viewer stopped reading: what it holds of the head goes
            self.guard.refusals.refuse("event streams dropped for not reading",
                                       f"nothing taken for {self.limits.write_timeout:g} s")
            if request.transport is not None:
                request.transport.abort()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.viewers -= 1
            self.guard.end_stream(conn, None if conn is not None else address)
        return response

    def _news_since(self, seen: int) -> bytes:
        """The patches a page that has seen version ``seen`` misses, or the whole snapshot
        when it has none yet, or missed more than the patches kept."""
        missed = [text for version, text in self._patches if version > seen]
        if seen < 0 or len(missed) != self._version - seen:
            return f"data: {self._latest}\n\n".encode()
        return "".join(f"event: patch\ndata: {text}\n\n" for text in missed).encode()

    async def _send(self, conn: Connection | None, response: web.StreamResponse,
                    data: bytes) -> None:
        """Write, and wait until the kernel has taken all of it, for ``write_timeout`` at most
        (TimeoutError): a slow reader holds one message in the head, never a backlog."""
        await asyncio.wait_for(response.write(data), self.limits.write_timeout)
        if conn is not None and conn.protocol is not None:
            await asyncio.wait_for(conn.protocol.drained(), self.limits.write_timeout)

    # --- the host -----------------------------------------------------------------------------

    def _sid(self, request: web.Request) -> str | None:
        return request.cookies.get(COOKIE)

    def _plain_http_refusal(self, request: web.Request) -> web.Response | None:
        """With HTTPS on, the host's password, cookie and token never travel in clear."""
        if self.https_port is None or request.secure:
            return None
        host = (request.host or "").rsplit(":", 1)[0]
        if not host or not all(c.isalnum() or c in ".-[]:" for c in host) or len(host) > 255:
            host = "<the head>"  # the Host header is the client's to say: echo only a name
        return _refuse(403, f"the host's desk is at https://{host}:{self.https_port}/#host")

    async def _session(self, request: web.Request) -> web.Response:
        # Whether the cookie is a live session, never its CSRF token: that is given once, in
        # the log-in's answer, so a cookie alone (stolen, or sent by another site) acts on
        # nothing.
        return web.json_response({"host": self.sessions.valid(self._sid(request)),
                                  "can_login": self.password_hash is not None,
                                  "https_port": self.https_port})

    async def _login(self, request: web.Request) -> web.Response:
        if (refusal := self._plain_http_refusal(request)) is not None:
            return refusal
        address = address_key(request.transport.get_extra_info("peername")
                              if request.transport else request.remote)
        wait = self.guesses.wait(address)
        if wait > 0:
            self.guard.refusals.refuse("password tries while waiting after wrong ones")
            return _refuse(429, f"too many wrong passwords: try again in {wait:.0f} s",
                           {"Retry-After": str(max(1, round(wait)))})
        password = login_body(await read_json(request, self.limits.body_timeout))
        if self.password_hash is None:
            return _refuse(403, "no host password is set on the head")
        if self._hash_waiting >= HASH_QUEUE:
            self.guard.refusals.refuse("password tries while the checker is busy")
            return _refuse(429, "the head is checking other passwords: try again in a second",
                           {"Retry-After": "1"})
        self._hash_waiting += 1
        try:
            ok = await asyncio.get_running_loop().run_in_executor(
                self._hashing, check_password_and_release, password, self.password_hash)
        finally:
            self._hash_waiting -= 1
        if not ok:
            self.guesses.failed(address)
            self.guard.refusals.refuse("wrong passwords", f"last from {address}")
            await asyncio.sleep(WRONG_PASSWORD_DELAY)
            return _refuse(403, "wrong password")
        self.guesses.succeeded(address)
        sid, csrf = self.sessions.open()
        log.info("console: the host logged in from %s (any older session has ended)", address)
        response = web.json_response({"host": True, "csrf": csrf})
        response.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/",
                            secure=self.https_port is not None)
        return response

    async def _logout(self, request: web.Request) -> web.Response:
        if (refusal := self._check_host(request, csrf=True)) is not None:
            return refusal
        self.sessions.close(self._sid(request))
        response = web.json_response({"host": False})
        response.del_cookie(COOKIE, path="/")
        return response

    def _check_host(self, request: web.Request, *, csrf: bool) -> web.Response | None:
        if (refusal := self._plain_http_refusal(request)) is not None:
            return refusal
        sid = self._sid(request)
        if not self.sessions.valid(sid):
            return _refuse(401, "log in as the host first")
        if csrf and not self.sessions.check(sid, request.headers.get(CSRF_HEADER)):
            return _refuse(403, "missing or wrong CSRF token: log in again")
        if not csrf:
            self.sessions.use(sid)
        return None

    async def _host_action(self, request: web.Request) -> web.Response:
        if (refusal := self._check_host(request, csrf=True)) is not None:
            return refusal
        action = request.match_info["action"]
        if action not in HOST_ACTIONS:
            return _refuse(404, f"no host action '{action}'")
        body = host_body(action, await read_json(request, self.limits.body_timeout))
        try:
            work = self._work(action, body)
            message = await self._on_head(work)
        except desk.Refused as exc:
            return _refuse(409, str(exc))
        return web.json_response({"ok": True, "message": message})

    def _work(self, action: str, body: dict[str, Any]) -> Callable[..., Any]:
        """The head's work for ``action``; ``body`` has been checked by ``host_body``."""
        assert self.bridge is not None
        if action == "roster":
            return desk.set_roster(self.bridge, body["roster"])
        if action == "undo":
            return desk.undo_last(body["table"])
        if action == "leave":
            if not body["player"]:
                raise desk.Refused("say whose seat: {\"player\": \"ghost1\"}")
            return desk.leave(body["player"])
        if action == "arrive":
            name = body["name"]
            if not body["player"]:
                raise desk.Refused("say whose seat: {\"player\": \"ghost1\"}")
            return desk.arrive(body["player"], name)
        return {"start": desk.start_night, "bell": desk.ring_bell, "end": desk.end_night,
                "close-held": desk.close_held_round, "pause": desk.pause_clock,
                "resume": desk.resume_clock}[action]

    async def _on_head(self, work: Callable[..., Any]) -> Any:
        if self.bridge is None:
            raise desk.Refused("the head is not running")
        task = self.bridge.task(work)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(task.done), HOST_TIMEOUT)
        except TimeoutError:
            raise desk.Refused("the head did not answer in time; try again") from None

    async def _record(self, request: web.Request) -> dict[str, Any] | web.Response:
        if (refusal := self._check_host(request, csrf=False)) is not None:
            return refusal
        try:
            return await self._on_head(desk.night_record)
        except desk.Refused as exc:
            return _refuse(409, str(exc))

    async def _download_record(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        if isinstance(record, web.Response):
            return record
        return web.Response(text=json.dumps(record, indent=1), content_type="application/json",
                            headers=_attachment(f"{record_name(self)}.json"))

    async def _download_cards_csv(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        if isinstance(record, web.Response):
            return record
        return web.Response(text=cards_csv(record), content_type="text/csv",
                            headers=_attachment(f"{record_name(self)}-cards.csv"))

    async def _download_cards_html(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        if isinstance(record, web.Response):
            return record
        return web.Response(text=cards_html(record), content_type="text/html")

    async def _table_cards(self, request: web.Request) -> web.Response:
        """A card per table to print before the night: its number, a QR code to the board,
        the night's rules in a paragraph."""
        if (refusal := self._check_host(request, csrf=False)) is not None:
            return refusal
        if self.bridge is None:
            return _refuse(409, "the head is not running")
        from bunco_pi.console.table_cards import table_cards_html

        coordinator = self.bridge.service.coordinator  # rules, text and size: fixed at start
        url = self.bridge.url or f"http://{request.host}/"
        page = await asyncio.to_thread(table_cards_html, coordinator.table_count, url,
                                       coordinator.rules, coordinator.rules_toml,
                                       coordinator.name)
        return web.Response(text=page, content_type="text/html")

    async def _download_audit(self, request: web.Request) -> web.Response:
        """The audit's verdict on the night record as it stands (bunco-pi audit's text)."""
        record = await self._record(request)
        if isinstance(record, web.Response):
            return record
        from bunco_pi.rules.audit import Verdict, audit_record

        assert self.bridge is not None
        rules = self.bridge.service.coordinator.rules  # immutable, set when the head started
        name = f"{record_name(self)}.json"
        problems = await asyncio.to_thread(audit_record, record, rules)
        verdict = Verdict(name, rules.name, tuple(problems))
        return web.Response(text=verdict.text(), content_type="text/plain",
                            headers=_attachment(f"{record_name(self)}-audit.txt"))

    # --- the season ---------------------------------------------------------------------------

    def _nights(self) -> list:
        if self.season_dir is None or not self.season_dir.is_dir():
            return []
        try:
            return load_nights(self.season_dir)
        except UserError as exc:
            log.error("season: %s", exc)
            return []

    async def _season_page(self, request: web.Request) -> web.Response:
        from bunco_pi.console.season_page import season_html

        nights = self._nights()
        return web.Response(text=season_html(nights), content_type="text/html")

    async def _season_csv(self, request: web.Request) -> web.Response:
        return web.Response(text=season_csv(season_table(self._nights())), content_type="text/csv",
                            headers=_attachment("season.csv"))

    async def _season_svg(self, request: web.Request) -> web.Response:
        return web.Response(text=points_chart_svg(self._nights()), content_type="image/svg+xml")


def record_name(server: ConsoleServer) -> str:
    bridge = server.bridge
    return f"night-{bridge.service.coordinator.name}" if bridge is not None else "night"


def _attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


def _refuse(status: int, text: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"ok": False, "error": text}, status=status, headers=headers)
