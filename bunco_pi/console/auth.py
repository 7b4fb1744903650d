"""The host's password (stored hashed), how many guesses it takes, sessions and CSRF tokens.

The password is set at install (``bunco-pi head --set-host-password``) and only its scrypt hash
is kept, in a file of the head's config folder readable by the service alone; a password the
host chooses must pass ``weakness()``. A login gives a random session id in an HttpOnly,
SameSite=Strict cookie and, in the login's answer only, the session's CSRF token: every
state-changing request must carry it in the ``X-CSRF-Token`` header, and nothing hands it out
again for the cookie (a stolen cookie alone can change nothing). One host: a new login ends
every older session; a session ends after ``IDLE_SECONDS`` unused or ``SESSION_SECONDS`` in all.

``Guesses`` decides when a password may be tried at all: each address gets a few wrong tries,
then waits twice as long after every further one; when everyone together guesses wrong too
often, every address that has guessed wrong waits, while one that has not can still log in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bunco_pi.errors import UserError

SCHEME = "scrypt"
N, R, P = 2**14, 8, 1
MIN_LENGTH = 10
MIN_DISTINCT = 6
MIN_BITS = 40
SESSION_SECONDS = 8 * 3600  # a night, at most
IDLE_SECONDS = 30 * 60
# What people pick when asked for a password, and what this one would be guessed as first.
COMMON = frozenset((
    "password", "passwrd", "letmein", "welcome", "qwerty", "qwertyuiop", "asdfgh", "asdfghjkl",
    "zxcvbnm", "iloveyou", "admin", "administrator", "monkey", "dragon", "football", "baseball",
    "sunshine", "princess", "trustno", "abc", "abcdef", "abcdefgh", "bunco", "bunconight",
    "buncopi", "buncoparty", "buncohost", "night", "host", "dice", "party", "raspberry",
    "raspberrypi", "secret", "changeme", "default", "guest",
))


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=N, r=R, p=P, dklen=32)
    return "$".join([SCHEME, str(N), str(R), str(P), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()])


def check_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.strip().split("$")
        if scheme != SCHEME:
            return False
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r),
                             p=int(p), dklen=32)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(digest))


def weakness(password: str) -> str | None:
    """Why ``password`` is too weak for the host, or None. It must have ``MIN_LENGTH``
    characters, ``MIN_DISTINCT`` different ones, about ``MIN_BITS`` bits by the kinds of
    character it uses, and be more than a common word with digits or symbols around it."""
    if len(password) < MIN_LENGTH:
        return f"it must have at least {MIN_LENGTH} characters"
    if len(set(password)) < MIN_DISTINCT:
        return f"it must have at least {MIN_DISTINCT} different characters"
    letters = "".join(c for c in password.lower() if c.isalpha())
    if letters in COMMON:
        return "it is a common password, or a word with digits around it"
    if _is_run(password.lower()):
        return "it is a run of characters (like 1234567890 or abcdefghij)"
    pool = sum(size for test, size in ((str.islower, 26), (str.isupper, 26), (str.isdigit, 10))
               if any(test(c) for c in password))
    pool += 33 if any(not c.isalnum() for c in password) else 0
    if len(password) * math.log2(max(pool, 2)) < MIN_BITS:
        return f"it is too easy to guess: make it longer (about {MIN_BITS} bits or more)"
    return None


def _is_run(text: str) -> bool:
    steps = {ord(b) - ord(a) for a, b in zip(text, text[1:], strict=False)}
    return len(steps) == 1 and steps <= {-1, 0, 1}


def check_password_and_release(password: str, stored: str) -> bool:
    """``check_password``, its 16 MiB of scrypt handed back to the system when it is done.

    glibc raises its mmap threshold to the size of the first big block freed, so from the
    second check on scrypt's block came from the hashing thread's own heap, whose top is never
    given back: a login's memory stayed with the head for the night. A fixed threshold (which
    also turns the raising off) keeps blocks that big mmapped, and unmapped when freed."""
    _big_blocks_mapped()
    return check_password(password, stored)


_MMAP_THRESHOLD = -3  # mallopt's M_MMAP_THRESHOLD
_BIG_BLOCK = 4 * 1024 * 1024
_mapped = False


def _big_blocks_mapped() -> None:
    global _mapped
    if _mapped:
        return
    _mapped = True
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(_MMAP_THRESHOLD, _BIG_BLOCK)
    except (OSError, AttributeError):  # not glibc: its allocator decides
        pass


def write_password_file(path: str | Path, password: str) -> None:
    if (reason := weakness(password)) is not None:
        raise UserError(f"the host password is too weak: {reason}")
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(hash_password(password) + "\n")
        os.replace(tmp, target)
    except OSError as exc:
        raise UserError(f"{target}: cannot write the host password: {exc.strerror}") from None


def read_password_file(path: str | Path) -> str:
    try:
        stored = Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not a password hash"
        raise UserError(f"{path}: cannot read the host password hash: {reason} "
                        "(set one with: bunco-pi head --set-host-password FILE)") from None
    if not stored.startswith(SCHEME + "$") or stored.count("$") != 5:
        raise UserError(f"{path}: not a host password hash (set one with "
                        "bunco-pi head --set-host-password FILE)")
    return stored


@dataclass
class _Session:
    csrf: str
    opened: float
    used: float


@dataclass
class Sessions:
    """Logged-in hosts. Lives on the web server's event loop thread only."""

    lifetime: float = SESSION_SECONDS
    idle: float = IDLE_SECONDS
    clock: Callable[[], float] = time.monotonic
    _live: dict[str, _Session] = field(default_factory=dict)

    def open(self) -> tuple[str, str]:
        """A new session (id, CSRF token); every older session ends: one host at a time."""
        self._live.clear()
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = self.clock()
        self._live[sid] = _Session(csrf, now, now)
        return sid, csrf

    def _get(self, sid: str | None) -> _Session | None:
        session = self._live.get(sid or "")
        if session is None:
            return None
        now = self.clock()
        if now - session.used > self.idle or now - session.opened > self.lifetime:
            del self._live[sid or ""]
            return None
        return session

    def valid(self, sid: str | None) -> bool:
        """Is ``sid`` a live session? (Says nothing of its CSRF token, and does not count as
        a use: a page asking whether it is logged in keeps no session alive.)"""
        return self._get(sid) is not None

    def check(self, sid: str | None, csrf: str | None) -> bool:
        """A use of the session: ``sid`` is live and ``csrf`` is its token."""
        session = self._get(sid)
        if session is None or not csrf:
            return False
        if not hmac.compare_digest(session.csrf.encode(), csrf.encode("utf-8", "replace")):
            return False
        session.used = self.clock()
        return True

    def use(self, sid: str | None) -> bool:
        """A use that needs no token (a download, a GET): ``sid`` is live, and now used."""
        session = self._get(sid)
        if session is None:
            return False
        session.used = self.clock()
        return True

    def close(self, sid: str | None) -> None:
        self._live.pop(sid or "", None)

    def __len__(self) -> int:
        return len(self._live)


@dataclass
class Guesses:
    """When an address may try a password, and what wrong tries cost it; see the module
    docstring. Lives on the web server's event loop thread only."""

    free: int = 3  # wrong tries an address has before it waits
    first_wait: float = 1.0  # then 1 s, 2 s, 4 s, ... after each further wrong try
    longest_wait: float = 300.0
    everyone: int = 30  # wrong tries from all addresses in `window` before the suspects wait
    window: float = 60.0
    forget_after: float = 3600.0
    max_addresses: int = 4096
    clock: Callable[[], float] = time.monotonic
    _wrong: OrderedDict[str, tuple[int, float]] = field(default_factory=OrderedDict)
    _recent: deque[float] = field(default_factory=deque)

    def wait(self, address: str) -> float:
        """Seconds ``address`` must wait before a password is checked for it (0: go on)."""
        now = self.clock()
        count, last = self._wrong.get(address, (0, 0.0))
        if count == 0:
            return 0.0
        mine = 0.0
        if count >= self.free:
            mine = last + min(self.longest_wait,
                              self.first_wait * 2 ** (count - self.free)) - now
        everyone = 0.0
        while self._recent and now - self._recent[0] > self.window:
            self._recent.popleft()
        if len(self._recent) >= self.everyone:
            everyone = self._recent[0] + self.window - now
        return max(0.0, mine, everyone)

    def failed(self, address: str) -> None:
        now = self.clock()
        count, _ = self._wrong.pop(address, (0, 0.0))
        self._wrong[address] = (count + 1, now)
        self._recent.append(now)
        while len(self._recent) > self.everyone:
            self._recent.popleft()
        self._prune(now)

    def succeeded(self, address: str) -> None:
        self._wrong.pop(address, None)

    def _prune(self, now: float) -> None:
        while self._wrong:
            address, (_, last) = next(iter(self._wrong.items()))
            if now - last <= self.forget_after and len(self._wrong) <= self.max_addresses:
                break
            del self._wrong[address]
