"""Ctrl-C at start-up, and click's usage errors, end a command as any other stop or error does.

A command's own edge says ``interrupted: nothing more was written`` and exits 130 on Ctrl-C;
before that edge is reached (modules loading, click parsing the arguments or loading the
command) the entry point and the command group say and do the same, never click's ``Aborted!``
and exit 1. Each run here is a real ``ragaliq gate`` process that sends itself SIGINT the first
time a given module is about to load, so the interrupt lands at one known moment of start-up.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli

HANG_GUARD_S = 60.0
"""Only so that a hang fails the test instead of stalling the suite; never a measure of speed."""

INTERRUPT_AT = """
import os, signal, sys

class InterruptOnce:
    module, fired = sys.argv[1], False

    def find_spec(self, name, path=None, target=None):
        if name == self.module and not self.fired:
            self.fired = True
            sys.stderr.write("[signalled]\\n")
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptOnce())
sys.argv = ["ragaliq", *sys.argv[2:]]
from ragaliq.__main__ import main
main()
"""
"""``python -c INTERRUPT_AT MODULE ARGS...``: ``ragaliq ARGS...``, sent SIGINT as ``MODULE``
is about to be imported for the first time."""


@pytest.mark.parametrize(
    "module",
    [
        "ragaliq.signals",  # the entry point's first step, before the signal handling is set
        "ragaliq.cli",  # the command line itself
        "ragaliq.cli.judging",  # click loading the gate command
        "ragaliq.cli._common",  # ... and what it shares with every command
        "ragaliq.config",  # ... and the config it reads
    ],
)
def test_ctrl_c_while_the_gate_starts_exits_130_with_one_line(tmp_path, module):
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPT_AT, module, "gate", "--base", "none"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert done.stderr.startswith("[signalled]\n"), done.stderr
    assert done.returncode == 130, done.stderr
    assert done.stderr.endswith("\ninterrupted: nothing more was written\n"), done.stderr
    assert "Aborted" not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_sigint_from_outside_while_the_gate_starts_exits_130():
    """The same, sent by another process (a terminal's Ctrl-C) as soon as the gate started."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ragaliq.__main__ import main; main()", "gate"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=HANG_GUARD_S)
    # Sent this early, it may land while the interpreter itself starts (Python's own exit on
    # SIGINT) or once the gate's entry point runs: never click's "Aborted!" and exit 1.
    assert "Aborted" not in stderr
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, stderr)


@pytest.mark.parametrize(
    "argv",
    [["--no-such-option"], ["gate", "--no-such-option"], ["baseline", "record", "--nope"]],
    ids=["group", "command", "subcommand"],
)
def test_a_usage_error_says_error_as_every_other_error_does(argv):
    result = CliRunner().invoke(cli, argv, prog_name="ragaliq")
    assert result.exit_code == 2
    assert "\nerror: No such option '--n" in result.stderr, result.stderr
    assert "Error:" not in result.stderr
    assert result.stderr.startswith("Usage: ragaliq")
