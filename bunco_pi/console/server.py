"""The console's web server: aiohttp on its own thread and event loop.

Viewers get one page and a server-sent-events stream (``/events``): every change of the night
is one ``data:`` line holding the whole snapshot, so a page that reconnects (the browser's
EventSource does it by itself after the head or the network comes back) is whole again at
once. The server keeps only the latest snapshot string; host requests go to the head's queue
through ``ConsoleBridge``, never to the night directly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from bunco_pi.console import desk
from bunco_pi.console.auth import Sessions, check_password
from bunco_pi.console.cards import cards_csv, cards_html
from bunco_pi.errors import UserError
from bunco_pi.season import load_nights, points_chart_svg, season_csv, season_table

log = logging.getLogger("bunco_pi.console")

COOKIE = "bunco_host"
CSRF_HEADER = "X-CSRF-Token"
KEEPALIVE = 15.0  # seconds between SSE comments, so a dead viewer is noticed
HOST_TIMEOUT = 10.0
WRONG_PASSWORD_DELAY = 0.5
STATIC = ("index.html", "console.js", "console.css")


class ConsoleServer:
    def __init__(self, host: str, port: int, *, password_hash: str | None,
                 season_dir: str | Path | None = None) -> None:
        self.host, self.port = host, port
        self.password_hash = password_hash
        self.season_dir = Path(season_dir) if season_dir else None
        self.bridge: desk.ConsoleBridge | None = None
        self.sessions = Sessions()
        self._latest = "{}"
        self._version = 0
        self._changed: asyncio.Condition | None = None
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
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    def publish(self, snapshot_json: str) -> None:
        """Any thread: the night's new snapshot for every viewer."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._set, snapshot_json)

    def _set(self, snapshot_json: str) -> None:
        self._latest = snapshot_json
        self._version += 1
        asyncio.ensure_future(self._notify())

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self._changed = asyncio.Condition()
            self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False,
                                         shutdown_timeout=1.0)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, self.port)
            loop.run_until_complete(site.start())
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._loop = loop
        self._ready.set()
        loop.run_forever()
        loop.close()

    # --- the app ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers])
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
        r.add_get("/season", self._season_page)
        r.add_get("/season.csv", self._season_csv)
        r.add_get("/season.svg", self._season_svg)
        return app

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
        await response.prepare(request)
        assert self._changed is not None
        seen = -1
        self.viewers += 1
        try:
            await response.write(b"retry: 1000\n\n")
            while True:
                if seen != self._version:
                    seen = self._version
                    await response.write(f"data: {self._latest}\n\n".encode())
                    continue
                async with self._changed:
                    try:
                        await asyncio.wait_for(
                            self._changed.wait_for(lambda last=seen: last != self._version),
                            KEEPALIVE)
                    except TimeoutError:
                        await response.write(b": still here\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.viewers -= 1
        return response

    # --- the host -----------------------------------------------------------------------------

    def _sid(self, request: web.Request) -> str | None:
        return request.cookies.get(COOKIE)

    async def _session(self, request: web.Request) -> web.Response:
        csrf = self.sessions.csrf(self._sid(request))
        return web.json_response({"host": csrf is not None, "csrf": csrf,
                                  "can_login": self.password_hash is not None})

    async def _login(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            password = body["password"]
            if not isinstance(password, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _refuse(400, "send the password as JSON: {\"password\": \"...\"}")
        ok = self.password_hash is not None and await asyncio.get_running_loop().run_in_executor(
            None, check_password, password, self.password_hash)
        if not ok:
            await asyncio.sleep(WRONG_PASSWORD_DELAY)
            return _refuse(403, "wrong password")
        sid, csrf = self.sessions.open()
        response = web.json_response({"host": True, "csrf": csrf})
        response.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/")
        return response

    async def _logout(self, request: web.Request) -> web.Response:
        if (refusal := self._check_host(request, csrf=True)) is not None:
            return refusal
        self.sessions.close(self._sid(request))
        response = web.json_response({"host": False})
        response.del_cookie(COOKIE, path="/")
        return response

    def _check_host(self, request: web.Request, *, csrf: bool) -> web.Response | None:
        token = self.sessions.csrf(self._sid(request))
        if token is None:
            return _refuse(401, "log in as the host first")
        if csrf and request.headers.get(CSRF_HEADER) != token:
            return _refuse(403, "missing or wrong CSRF token: reload the page")
        return None

    async def _host_action(self, request: web.Request) -> web.Response:
        if (refusal := self._check_host(request, csrf=True)) is not None:
            return refusal
        action = request.match_info["action"]
        try:
            body = await request.json() if request.can_read_body else {}
        except ValueError:
            return _refuse(400, "the request body is not JSON")
        if not isinstance(body, dict):
            return _refuse(400, "the request body must be a JSON object")
        try:
            work = self._work(action, body)
        except desk.Refused as exc:
            return _refuse(409, str(exc))
        if work is None:
            return _refuse(404, f"no host action '{action}'")
        try:
            message = await self._on_head(work)
        except desk.Refused as exc:
            return _refuse(409, str(exc))
        return web.json_response({"ok": True, "message": message})

    def _work(self, action: str, body: dict[str, Any]) -> Callable[..., Any] | None:
        assert self.bridge is not None
        if action == "roster":
            entries = body.get("roster")
            if not isinstance(entries, list):
                raise desk.Refused("send the roster as a list of {name, here}")
            return desk.set_roster(self.bridge, entries)
        if action in ("arrive", "leave", "undo"):
            return self._work_with_args(action, body)
        return {"start": desk.start_night, "bell": desk.ring_bell, "end": desk.end_night,
                "close-held": desk.close_held_round}.get(action)

    @staticmethod
    def _work_with_args(action: str, body: dict[str, Any]) -> Callable[..., Any]:
        if action == "undo":
            table = body.get("table")
            if isinstance(table, bool) or not isinstance(table, int):
                raise desk.Refused("say which table: {\"table\": 2}")
            return desk.undo_last(table)
        player = body.get("player")
        if not isinstance(player, str) or not player:
            raise desk.Refused("say whose seat: {\"player\": \"ghost1\"}")
        if action == "leave":
            return desk.leave(player)
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 40:
            raise desk.Refused("the late arrival needs a name of 1 to 40 characters")
        return desk.arrive(player, name)

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


def _refuse(status: int, text: str) -> web.Response:
    return web.json_response({"ok": False, "error": text}, status=status)
