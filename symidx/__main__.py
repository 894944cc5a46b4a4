"""``python -m symidx``: the command line."""

from symidx.cli import main_entry

main_entry()
