from __future__ import annotations

from ragaliq.models import ClaimVerdict, Verdict


def settles_offline(verdict: ClaimVerdict) -> bool:
    return verdict.verdict is Verdict.SUPPORTED and verdict.confidence >= 0.9
