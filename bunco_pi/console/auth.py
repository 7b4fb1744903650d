"""The host's password (stored hashed), sessions and CSRF tokens.

The password is set at install (``bunco-pi head --set-host-password``) and only its scrypt hash
is kept, in a file of the head's config folder readable by the service alone. A login gives a
random session id in an HttpOnly, SameSite=Strict cookie; every state-changing request must
also carry that session's CSRF token in the ``X-CSRF-Token`` header.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from bunco_pi.errors import UserError

SCHEME = "scrypt"
N, R, P = 2**14, 8, 1
MIN_LENGTH = 8
SESSION_SECONDS = 12 * 3600


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


def write_password_file(path: str | Path, password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise UserError(f"the host password must have at least {MIN_LENGTH} characters")
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
class Sessions:
    """Logged-in hosts. Lives on the web server's event loop thread only."""

    lifetime: float = SESSION_SECONDS
    clock: object = time.monotonic
    _live: dict[str, tuple[str, float]] = field(default_factory=dict)  # id -> (csrf, expires)

    def open(self) -> tuple[str, str]:
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self._live[sid] = (csrf, self.clock() + self.lifetime)  # type: ignore[operator]
        return sid, csrf

    def csrf(self, sid: str | None) -> str | None:
        """The session's CSRF token, or None if there is no such live session."""
        if not sid or sid not in self._live:
            return None
        csrf, expires = self._live[sid]
        if self.clock() > expires:  # type: ignore[operator]
            del self._live[sid]
            return None
        return csrf

    def close(self, sid: str | None) -> None:
        self._live.pop(sid or "", None)
