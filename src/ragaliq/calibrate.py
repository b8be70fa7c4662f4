"""Calibrating a judge: how often its verdicts agree with claims a person has labelled.

``ragaliq calibrate --labels golden.jsonl`` verifies each labelled claim (:mod:`ragaliq.labels`)
against its context with the configured judge, one request per claim, run by the same bounded pool
as a suite (:mod:`ragaliq.pool`), and compares the verdicts with the labels. It reports accuracy,
balanced accuracy and Cohen's kappa twice: over the four verdicts, and over the
supported-versus-hallucinated view the gate acts on (a claim is hallucinated unless SUPPORTED, as
in the hallucination evaluator). A claim the judge could not verify is counted as an error and left
out of the numbers; it is never turned into a verdict. The numbers are measured in
:mod:`ragaliq.metrics`, which the report reads without loading a judge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.questions import VERIFY
from ragaliq.judges.base import Judge
from ragaliq.labels import LabelledClaim
from ragaliq.metrics import Calibration, ClaimPrediction, JudgeFailure, measure
from ragaliq.models import ClaimVerdict, Usage
from ragaliq.pool import PoolRun, run_bounded
from ragaliq.text.counts import plural

__all__ = ["calibrate"]


async def calibrate(
    labels: Sequence[LabelledClaim],
    *,
    judge: Judge,
    concurrency: int = 8,
    min_confidence: float | None = None,
    budget_usd: float | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Verify every labelled claim with ``judge`` and measure the agreement with the labels.

    Each claim is one ``verify_claims`` question with the claim as the only claim and its context
    as the case's context; at most ``concurrency`` calls are in flight. A claim whose call raises
    :class:`~ragaliq.errors.JudgeError` (or anything unexpected) is recorded in ``errors`` and
    left out of the metrics.

    Args:
        labels: The labelled claims.
        judge: The judge to calibrate.
        concurrency: Calls in flight at once.
        min_confidence: As ``evaluators.hallucination.min_confidence``: a SUPPORTED verdict below
            it counts as hallucinated in the binary view.
        budget_usd: Start no new claim once the next could take the spend past this (as a
            suite run does); the claims left are neither predictions nor errors, and
            ``stopped_early`` says so.
        on_progress: Called with (claims done, claims in all) after each claim, judged or not.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all (a bad key, the API down).
        ValueError: ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    slots = asyncio.Semaphore(concurrency)
    verdicts: list[ClaimVerdict | JudgeFailure | None] = [None] * len(labels)

    async def work(index: int, item: LabelledClaim) -> Usage:
        async with slots:
            verdicts[index], usage = await _verify_one(judge, item)
        return usage

    def done(index: int, pool: PoolRun) -> None:
        if on_progress is not None:
            on_progress(pool.done, len(labels))

    pool = await run_bounded(
        labels,
        work,
        workers=concurrency * 2,
        budget_usd=budget_usd,
        on_done=done,
        noun="claim",
    )
    predictions, errors = _sorted(labels, verdicts)
    stopped = None
    if pool.stopped_early is not None:
        left = len(labels) - pool.done
        were = "was" if len(labels) == 1 else "were"
        stopped = (
            f"{pool.stopped_early}; {left} of {plural(len(labels), 'claim')} {were} not judged"
        )
    return measure(
        predictions,
        errors=errors,
        judge=judge.info,
        usage=pool.usage,
        min_confidence=min_confidence,
        stopped_early=stopped,
    )


def _sorted(
    labels: Sequence[LabelledClaim], verdicts: Sequence[ClaimVerdict | JudgeFailure | None]
) -> tuple[list[ClaimPrediction], list[JudgeFailure]]:
    """The judged claims as predictions against their labels, and the failures apart."""
    predictions: list[ClaimPrediction] = []
    errors: list[JudgeFailure] = []
    for item, answer in zip(labels, verdicts, strict=True):
        if isinstance(answer, JudgeFailure):
            errors.append(answer)
        elif answer is not None:
            predictions.append(
                ClaimPrediction(
                    id=item.id,
                    gold=item.label,
                    predicted=answer.verdict,
                    confidence=answer.confidence,
                    reason=answer.reason,
                )
            )
    return predictions, errors


async def _verify_one(
    judge: Judge, item: LabelledClaim
) -> tuple[ClaimVerdict | JudgeFailure, Usage]:
    """The judge's verdict on one labelled claim, or why there is none, and what it cost."""
    try:
        answers = await judge.ask([VERIFY], item.to_case(), claims=[item.claim])
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        return JudgeFailure(
            id=item.id, message=str(exc) or type(exc).__name__
        ), exc.usage or Usage()
    except Exception as exc:  # a bug on one claim must not lose the others
        return JudgeFailure(id=item.id, message=f"unexpected {type(exc).__name__}: {exc}"), Usage()
    result = answers.get(VERIFY)
    if result is None:
        message = answers.error(VERIFY) or "the judge gave no verdict"
        return JudgeFailure(id=item.id, message=message), answers.usage
    if len(result.verdicts) != 1:
        message = f"the judge returned {len(result.verdicts)} verdicts for 1 claim"
        return JudgeFailure(id=item.id, message=message), answers.usage
    return result.verdicts[0], answers.usage
