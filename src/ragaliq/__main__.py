"""The ``ragaliq`` command's entry point (also ``python -m ragaliq``).

Ctrl-C at any moment, start-up included, ends the command with exit code 130 and one line: the
command line, and even the signal handling, is imported inside the guard, so an interrupt while
modules load is caught too; and while click parses the arguments or loads a command, the group
catches it before click would say ``Aborted!`` (:mod:`ragaliq.cli`).
SIGTERM and SIGHUP stop it the same way, with 143 and 129 (:mod:`ragaliq.exits`).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run the command line; exit 130 with one line on Ctrl-C, 143 on SIGTERM, 129 on SIGHUP.

    ``ragaliq action`` (the Docker action's entry point) first makes its environment safe
    (:mod:`ragaliq.environment`), before anything that could read it is even imported;
    ``ragaliq gitlab <mode>`` is a GitLab CI job's (:mod:`ragaliq.action.gitlab`).
    """
    try:
        from ragaliq.signals import stop_on_termination

        stop_on_termination()
        if sys.argv[1:2] == ["action"]:
            from ragaliq.environment import harden_action_environment

            hardening = harden_action_environment(os.environ)
            from ragaliq.action import main as action_main

            sys.exit(action_main(hardening))
        if sys.argv[1:2] == ["gitlab"]:
            from ragaliq.action.gitlab import main as gitlab_main

            sys.exit(gitlab_main(sys.argv[2:]))
        from ragaliq.cli import main as run

        run()
    except KeyboardInterrupt as stop:
        from ragaliq.exits import stopped_exit

        code, line = stopped_exit(stop)
        sys.stderr.write(f"\n{line}\n")
        sys.exit(code)


if __name__ == "__main__":
    main()
