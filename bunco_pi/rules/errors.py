"""The one error type a user can cause: printed as a single line, never a traceback.

It lives with the rules because a rules file is the first thing a user gets wrong, and the
rules import nothing outside themselves; ``bunco_pi.errors`` is its name for everyone else.
"""


class UserError(Exception):
    """A mistake in input the user controls (a file, a flag, a pin, a port).

    The message is one line that names the problem and the place.
    """
