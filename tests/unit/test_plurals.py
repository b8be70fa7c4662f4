"""No message says "1 cases": a counted noun goes through ``plural`` (``ragaliq.text.counts``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOUNS = "cases|claims|errors|calls|chunks|facts|verdicts|hits|labelled claims"
COUNTED = re.compile(rf"\{{[^{{}}]+\}}\}}? (?:{NOUNS})\b")
"""A value put straight before a plural noun, in an f-string (``{n} cases``) or a template."""
ALLOWED = {
    # Reached only when the count is not 1.
    'f"the judge returned {len(result.verdicts)} verdicts for 1 claim"',
    # A verdict's label before "claims" in a heading ("supported claims"), not a count.
    "{{ v.label }} claims",
}


def test_no_count_is_put_before_a_plural_noun_by_hand():
    found = []
    sources = [*(ROOT / "src" / "ragaliq").rglob("*.py"), *(ROOT / "templates").glob("*.j2")]
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if COUNTED.search(line) and not any(ok in line for ok in ALLOWED):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "use plural(count, 'case'):\n" + "\n".join(found)
