"""docs/security.md names, for each guarantee, the test that shows it: every one must exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
NAMED = re.compile(r"(?:(tests/[\w/]+\.py)(?:::)?)?(test_\w+)?")


def test_every_test_the_security_page_names_exists():
    text = DOC.read_text(encoding="utf-8")
    defined = {
        path.relative_to(ROOT).as_posix(): set(
            re.findall(r"^(?:async )?def (test_\w+)", path.read_text(encoding="utf-8"), re.M)
        )
        for path in (ROOT / "tests").rglob("test_*.py")
    }
    everywhere = set().union(*defined.values())
    missing = []
    for code in re.findall(r"`([^`]+)`", text):
        for part in code.split(", "):
            match = NAMED.fullmatch(part.strip())
            if match is None or not any(match.groups()):
                continue
            path, name = match.groups()
            if path is not None and path not in defined:
                missing.append(path)
            elif name is not None and name not in (defined[path] if path else everywhere):
                missing.append(part)
    assert missing == []
    assert len(re.findall(r"test_\w+", text)) > 40  # the page does name its tests
