"""dataforge's command line (installed as ``dataforge.cli``): click commands with no logic.

Each command parses its options into a config dataclass and calls one library function; the
library raises :class:`dataforge.errors.DataforgeError`, which ``main`` prints as one line.
"""
