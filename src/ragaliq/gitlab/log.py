"""A GitLab job's own channels: its log, and files for its outputs and its summary.

GitLab has no workflow commands: a notice, warning or error is a line of the job's log, marked;
outputs go to a dotenv file (``artifacts: reports: dotenv``) and the summary to a Markdown file
the job keeps among its artifacts. Every line passes through redaction.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ragaliq._files import write_atomic
from ragaliq.redaction import redact
from ragaliq.text.plain import one_line, safe_lines

__all__ = ["GitLabLog"]


class GitLabLog:
    """Talks to the job: marked lines in its log, outputs and the summary in files."""

    def __init__(self, *, folder: Path | None, stream: TextIO | None = None) -> None:
        self.folder = folder
        self.stream = stream or sys.stdout
        self._outputs: dict[str, str] = {}
        self._summary = ""

    def _line(self, kind: str, message: str, title: str) -> None:
        head = f"[ragaliq {kind}]" + (f" {one_line(redact(title))}:" if title else "")
        self.stream.write(f"{head} {safe_lines(redact(message))}\n")
        self.stream.flush()

    def notice(self, message: str, *, title: str = "") -> None:
        self._line("notice", message, title)

    def warning(self, message: str, *, title: str = "") -> None:
        self._line("warning", message, title)

    def error(self, message: str, *, title: str = "") -> None:
        self._line("error", message, title)

    def mask(self, secret: str) -> None:
        """GitLab masks the variables its settings mark; the gate redacts every line anyway."""

    def log(self, message: str) -> None:
        self.stream.write(safe_lines(redact(message)) + "\n")
        self.stream.flush()

    def set_output(self, name: str, value: str) -> None:
        self._outputs[name.upper().replace("-", "_")] = one_line(redact(value))
        if self.folder is not None:
            lines = "".join(f"RAGALIQ_{k}={v}\n" for k, v in sorted(self._outputs.items()))
            write_atomic(self.folder / "outputs.env", lines)

    def write_summary(self, markdown: str) -> None:
        self._summary += redact(markdown if markdown.endswith("\n") else markdown + "\n")
        if self.folder is not None:
            write_atomic(self.folder / "summary.md", self._summary)
