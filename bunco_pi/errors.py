"""The one error type a user can cause: printed as a single line, never a traceback."""


class UserError(Exception):
    """A mistake in input the user controls (a file, a flag, a pin, a port).

    The message is one line that names the problem and the place.
    """
