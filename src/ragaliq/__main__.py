"""``python -m ragaliq`` runs the CLI."""

from __future__ import annotations

from ragaliq.cli import main

main()
