"""GitHub Actions workflow commands, outputs and the job summary."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import TextIO

from ragaliq.errors import OutputError
from ragaliq.redaction import redact
from ragaliq.text.plain import one_line, safe_lines

__all__ = ["Workflow", "escape_data", "escape_property"]


def escape_data(value: str) -> str:
    """Escape a workflow command's message."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow command's property value (``title=...``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


class Workflow:
    """Talks to the runner: commands on stdout, outputs and the summary in their files."""

    def __init__(
        self,
        *,
        output_file: Path | None,
        summary_file: Path | None,
        stream: TextIO | None = None,
    ) -> None:
        self.output_file = output_file
        self.summary_file = summary_file
        self.stream = stream or sys.stdout

    def command(self, name: str, message: str, **properties: str) -> None:
        """Emit ``::name props::message``."""
        if name != "add-mask":
            message = safe_lines(redact(message))
            properties = {k: one_line(redact(v)) for k, v in properties.items()}
        props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items() if v)
        head = f"::{name} {props}::" if props else f"::{name}::"
        self.stream.write(head + escape_data(message) + "\n")
        self.stream.flush()

    def mask(self, secret: str) -> None:
        """Ask the runner to mask a secret in every later log line."""
        for line in secret.splitlines():
            if line.strip():
                self.command("add-mask", line.strip())

    def notice(self, message: str, *, title: str = "") -> None:
        """A notice annotation."""
        self.command("notice", message, title=title)

    def warning(self, message: str, *, title: str = "") -> None:
        """A warning annotation."""
        self.command("warning", message, title=title)

    def error(self, message: str, *, title: str = "") -> None:
        """An error annotation."""
        self.command("error", message, title=title)

    def log(self, message: str) -> None:
        """A plain log line (never a workflow command, whatever text it carries)."""
        self.stream.write(safe_lines(redact(message)) + "\n")
        self.stream.flush()

    def set_output(self, name: str, value: str) -> None:
        """Append one step output to ``GITHUB_OUTPUT`` (multi-line safe)."""
        if self.output_file is None:
            self.log(f"output {name}={value}")
            return
        value = redact(value)
        delimiter = f"ragaliq_{secrets.token_hex(8)}"
        _append(self.output_file, f"{name}<<{delimiter}\n{value}\n{delimiter}\n", "GITHUB_OUTPUT")

    def write_summary(self, markdown: str) -> None:
        """Append Markdown to the job summary."""
        if self.summary_file is None:
            return
        text = redact(markdown if markdown.endswith("\n") else markdown + "\n")
        _append(self.summary_file, text, "GITHUB_STEP_SUMMARY")


def _append(path: Path, text: str, variable: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise OutputError(
            f"{path} (${variable}): cannot be written ({exc.strerror or type(exc).__name__}); "
            "the runner sets this file, so check the step's environment"
        ) from exc
