"""The game of Bunco as a pure rules engine: no I/O, no clock, no threads, no randomness of its
own. Dice come in as data; a night is the fold of its events."""
