"""The head's web console: the night on every phone in the room, and the host's desk."""
