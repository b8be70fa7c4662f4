"""The cascade against the fake Anthropic API: only the claims the offline judge is unsure of
reach the API, in the call that reads the context."""

from __future__ import annotations

from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.gate_sequence import claims_to_confirm
from ragaliq.judges import JudgeChoice
from ragaliq.judges.cascade import SETTLED_OFFLINE, CascadeJudge
from ragaliq.models import Verdict
from ragaliq.offline import OfflineJudge
from ragaliq.runner import RunSettings, run_suite
from tests.baselines import record_baseline
from tests.conftest import make_case
from tests.fakes.claude_sim import blocks, tasks_of

CONTEXT = (
    "Annual plans can be refunded within 14 days of purchase. Monthly plans are not refundable.",
    "The Business plan costs $12 per user per month and includes 2 TB of storage.",
)
VERBATIM = "Annual plans can be refunded within 14 days of purchase."
ALSO_VERBATIM = "The Business plan costs $12 per user per month and includes 2 TB of storage."
INVENTED = "The Business plan includes 24/7 phone support from a dedicated account manager."
WRONG_NUMBER = "Annual plans can be refunded within 30 days of purchase."


def verify_requests(fake):
    return [r.body for r in fake.requests if "verify" in tasks_of(r.body)]


async def test_confidently_supported_claims_never_reach_the_api(make_judge, fake_anthropic):
    judge = CascadeJudge(OfflineJudge(), make_judge())
    cases = [
        make_case(id="mixed", context=CONTEXT, response=f"{VERBATIM} {INVENTED} {WRONG_NUMBER}"),
        make_case(id="faithful", context=CONTEXT, response=f"{VERBATIM} {ALSO_VERBATIM}"),
    ]
    suite = [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]
    report = await run_suite(cases, judge=judge, evaluators=suite)
    await judge.aclose()

    verifies = verify_requests(fake_anthropic)
    assert len(verifies) == 1  # one call for the mixed case, none for the faithful one
    sent = blocks(verifies[0])["claims"]
    assert INVENTED in sent and WRONG_NUMBER in sent
    assert VERBATIM not in sent and ALSO_VERBATIM not in sent
    tasks = [tasks_of(r.body) for r in fake_anthropic.requests]
    assert tasks.count(("extract", "relevance")) == 2  # in one call a case

    mixed, faithful = report.cases
    assert [c.text for c in mixed.claims] == [VERBATIM, INVENTED, WRONG_NUMBER]
    assert SETTLED_OFFLINE in mixed.claims[0].flags
    assert all(SETTLED_OFFLINE not in c.flags for c in mixed.claims[1:])
    assert mixed.claims[2].verdict is Verdict.CONTRADICTED
    assert mixed.results["hallucination"].score < 1.0
    assert all(SETTLED_OFFLINE in c.flags for c in faithful.claims)
    assert faithful.results["hallucination"].score == 1.0

    assert report.judge.provider == "cascade"
    assert report.judge.model == judge.claude.info.model
    assert report.usage.calls == 3  # 2 of the claims and relevance, 1 verification
    assert judge.stats.claims == 5
    assert judge.stats.settled_offline == 3
    assert judge.stats.sent_to_claude == 2
    assert judge.stats.verify_calls_saved == 1
    assert judge.stats.notice() == (
        "The cascade settled 3 of 5 claims offline (SUPPORTED verdicts the offline judge grounded "
        "in the context) and sent 2 to Claude (everything else, the offline judge's accusations "
        "included), and 1 case needed no verification call."
    )
    assert JudgeChoice(judge=judge).all_notices() == (judge.stats.notice(),)


async def test_the_cascade_confirms_only_what_claude_decided(make_judge, fake_anthropic):
    judge = CascadeJudge(OfflineJudge(), make_judge())
    suite = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    base = make_case(id="mixed", context=CONTEXT, response=VERBATIM)
    baseline = record_baseline(await run_suite([base], judge=judge, evaluators=suite))
    asked = len(verify_requests(fake_anthropic))
    changed = base.model_copy(update={"response": f"{VERBATIM} {WRONG_NUMBER}"})
    settings = RunSettings(confirm=claims_to_confirm(baseline))
    report = await run_suite([changed], judge=judge, evaluators=suite, settings=settings)
    await judge.aclose()

    first, again = verify_requests(fake_anthropic)[asked:]
    assert VERBATIM not in blocks(first)["claims"]  # settled offline, never sent
    assert blocks(again)["claims"] == f"0. {WRONG_NUMBER}"  # the confirmation: Claude's alone
    settled, wrong = report.cases[0].claims
    assert SETTLED_OFFLINE in settled.flags and settled.asked == ()
    assert wrong.asked == (Verdict.CONTRADICTED, Verdict.CONTRADICTED)
