"""The one error type a user can cause: printed as a single line, never a traceback."""

from bunco_pi.rules.errors import UserError

__all__ = ["UserError"]
