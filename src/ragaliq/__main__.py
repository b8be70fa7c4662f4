"""The ``ragaliq`` command's entry point (also ``python -m ragaliq``).

Ctrl-C at any moment, start-up included, ends the command with exit code 130 and one line: the
command line is imported inside the guard, so an interrupt while modules load is caught too.
SIGTERM and SIGHUP stop it the same way, with 143 and 129 (:mod:`ragaliq.exits`).
"""

from __future__ import annotations

import sys

from ragaliq.exits import stop_on_termination, stopped_exit


def main() -> None:
    """Run the command line; exit 130 with one line on Ctrl-C, 143 on SIGTERM, 129 on SIGHUP."""
    try:
        stop_on_termination()
        from ragaliq.cli import main as run

        run()
    except KeyboardInterrupt as stop:
        code, line = stopped_exit(stop)
        sys.stderr.write(f"\n{line}\n")
        sys.exit(code)


if __name__ == "__main__":
    main()
