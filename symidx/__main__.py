"""``python -m symidx``: the command line."""

from symidx.cli import main_entry

if __name__ == "__main__":  # not when a worker process imports the main module
    main_entry()
