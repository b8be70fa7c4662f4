"""Judges: the ``Judge`` protocol, its implementations, and opening the configured one.

The names below are loaded on first use, so importing one judge module (the protocol in
:mod:`~ragaliq.judges.base`, say) does not load the factory, the cache, the cascade and the
offline judge with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaliq import _lazy

if TYPE_CHECKING:
    from ragaliq.judges.base import EstimatingJudge, Judge
    from ragaliq.judges.factory import JudgeChoice, JudgeOpener, build_judge, open_judge
    from ragaliq.offline import OfflineJudge

__all__ = [
    "EstimatingJudge",
    "Judge",
    "JudgeChoice",
    "JudgeOpener",
    "OfflineJudge",
    "build_judge",
    "open_judge",
]

_HOMES = {
    "EstimatingJudge": "ragaliq.judges.base",
    "Judge": "ragaliq.judges.base",
    "JudgeChoice": "ragaliq.judges.factory",
    "JudgeOpener": "ragaliq.judges.factory",
    "OfflineJudge": "ragaliq.offline",
    "build_judge": "ragaliq.judges.factory",
    "open_judge": "ragaliq.judges.factory",
}
"""Where each exported name lives."""


__getattr__, __dir__ = _lazy.lazy_exports(__name__, _HOMES, globals())
