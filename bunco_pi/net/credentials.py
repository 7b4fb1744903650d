"""The credentials file: each broker user's password, written at install time.

Kept apart from the broker's set-up (``broker.py``) so a table box reads its password without
loading what runs mosquitto.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bunco_pi.errors import UserError


@dataclass(frozen=True)
class Credentials:
    """User name -> password, as stored in the credentials file."""

    passwords: Mapping[str, str]

    def password(self, user: str) -> str:
        try:
            return self.passwords[user]
        except KeyError:
            raise UserError(f"no broker password for user {user!r} in the credentials") from None


def load_credentials(path: Path) -> Credentials:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: credentials file not found (run the install step)") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable credentials file ({exc})") from None
    users = doc.get("users") if isinstance(doc, dict) else None
    if not isinstance(users, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in users.items()
    ):
        raise UserError(f"{path}: credentials file must hold {{\"users\": {{name: password}}}}")
    return Credentials(dict(users))
