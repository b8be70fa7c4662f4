"""The ``ragaliq`` command's entry point (also ``python -m ragaliq``).

Ctrl-C at any moment, start-up included, ends the command with exit code 130 and one line: the
command line is imported inside the guard, so an interrupt while modules load is caught too.
"""

from __future__ import annotations

import sys

from ragaliq.exits import ExitCode


def main() -> None:
    """Run the command line; exit 130 with one line on Ctrl-C."""
    try:
        from ragaliq.cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: nothing more was written\n")
        sys.exit(ExitCode.INTERRUPTED)


if __name__ == "__main__":
    main()
