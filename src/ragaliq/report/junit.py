"""The gate decision as JUnit XML, the test report Jenkins, GitLab, CircleCI and Buildkite read.

The file holds three suites (``docs/any-ci.md`` states each failure's shape):

- ``cases``: a test case per case of the run (``classname`` ``ragaliq.cases``, ``name`` the case
  id). A case fails (``<failure>``) with what the gate fails on: its newly hallucinated claims
  (type ``new_hallucination``, each claim listed with its id; an unstable claim the gate counts
  with both of the judge's verdicts), its newly miscited claims (``miscited_claim``, each with
  its id) and its lost relevant chunks (``lost_chunk``, each chunk's id) when the gate's settings
  fail on them, a drop past ``max_drop`` of an evaluator that fails on it (``regressed``), a
  score below the threshold of an evaluator that fails on it (``below_threshold``), and claims
  the offline judge could not check when the gate fails on them (``unchecked_claims``). One
  ``<failure>`` a case, typed by its first reason in that order (:data:`CASE_FAILURES`), its
  message listing them all; what the gate lists without failing on it (an unstable claim it
  does not count, with both verdicts) is in the case's ``<system-out>``. A case the judge could
  not judge is an ``<error>``, a case the budget left unjudged is ``<skipped>``, neither also
  failing on a score it does not have.
- ``evaluators``: a test case per evaluator; one that fails the gate is a ``<failure>`` typed by
  its status (``below_threshold``, ``regressed``, ``inconclusive``, ``no_score``, ``turned_off``).
- ``gate``: one test case, the decision itself, failing with every line of the gate's failures
  (type ``gate``): missing baseline cases, case errors under ``gate.on_error: fail`` and an early
  stop are failures here alone.

Everything a dataset, a judge or a run supplies goes through the comment's redaction
(:func:`~ragaliq.redaction.redact`), loses its bidi marks and the control characters XML cannot
hold (a message also its line breaks, as in the comment), and is escaped by the XML serializer.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ragaliq._files import write_atomic
from ragaliq.evaluators._claims import ClaimChange
from ragaliq.evaluators.citations import MiscitedClaim
from ragaliq.evaluators.hallucination import UNSTABLE_APART
from ragaliq.evaluators.retrieval import LostChunk
from ragaliq.gate import GateDecision
from ragaliq.models import CaseResult
from ragaliq.redaction import redact
from ragaliq.text.plain import BIDI_MARKS

__all__ = [
    "CASE_FAILURES",
    "LOST_CHUNKS_RULE",
    "MISCITED_CLAIMS_RULE",
    "NEW_HALLUCINATIONS_RULE",
    "UNCHECKED_CLAIMS_RULE",
    "render_junit",
    "write_junit",
]

NEW_HALLUCINATIONS_RULE = "(gate.fail_on_new_hallucinations: true)"
"""How the gate's failure line says that newly hallucinated claims fail it."""
UNCHECKED_CLAIMS_RULE = "(gate.fail_on_unchecked_claims: true)"
"""How the gate's failure line says that claims the offline judge could not check fail it."""
LOST_CHUNKS_RULE = "(gate.fail_on_lost_chunks: true)"
"""How the gate's failure line says that lost relevant chunks fail it."""
MISCITED_CLAIMS_RULE = "(gate.fail_on_miscited_claims: true)"
"""How the gate's failure line says that newly miscited claims fail it."""
CASE_FAILURES = (
    "new_hallucination",
    "miscited_claim",
    "lost_chunk",
    "regressed",
    "below_threshold",
    "unchecked_claims",
)
"""The types of a case's failure, first the one that names it when a case has several."""
_RULED = re.compile(r"[\d,]+ [a-z ]+ (\(gate\.\w+: true\))(: |$)")
"""A failure line of a setting: its count and noun, the setting, then what it names."""

_NOT_XML = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What XML 1.0 cannot hold or discourages: C0 and C1 controls, surrogates, U+FFFE, U+FFFF."""
_LINE_BREAKS = re.compile("[\t\n\r\x85\u2028\u2029]+")


def _text(value: object) -> str:
    """Untrusted text as XML can hold it: redacted, without bidi marks or forbidden controls."""
    return _NOT_XML.sub(" ", BIDI_MARKS.sub("", redact(str(value))))


def _line(value: object) -> str:
    """:func:`_text` on one line, for an attribute."""
    return " ".join(_LINE_BREAKS.sub(" ", _text(value)).split())


@dataclass
class _Case:
    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Lines of each failure type, in :data:`CASE_FAILURES` order when rendered."""
    notes: list[str] = field(default_factory=list)

    def add(self, kind: str, line: str) -> None:
        self.reasons.setdefault(kind, []).append(line)


def _claim(claim: ClaimChange) -> str:
    reason = f" ({claim.reason})" if claim.reason else ""
    return f"[{claim.id}] {claim.verdict}: {claim.claim}{reason}"


def _asks(claim: ClaimChange) -> str:
    """What the judge said each time it was asked about an unstable claim."""
    if claim.verdicts:
        return "the judge's verdicts: " + ", then ".join(claim.verdicts)
    agreement = "" if claim.agreement is None else f" {claim.agreement:.0%} of the time"
    return f"the judge's verdicts agreed{agreement}"


def _rules(decision: GateDecision) -> set[str]:
    """The settings (``(gate.<name>: true)``) whose failure lines the decision has."""
    return {m.group(1) for line in decision.failures if (m := _RULED.match(line))}


def _case_findings(decision: GateDecision) -> dict[str, _Case]:
    """What fails each case, and what is said about it without failing it, by case id."""
    found: dict[str, _Case] = {}
    rules = _rules(decision)
    _claim_findings(decision, rules, found)
    _retrieval_findings(decision, rules, found)
    for unchecked in decision.unverifiable_claims:
        case = found.setdefault(unchecked.case_id, _Case())
        line = f"[{unchecked.id}] not verifiable offline: {unchecked.claim}"
        if UNCHECKED_CLAIMS_RULE in rules:
            case.add("unchecked_claims", line)
        else:
            case.notes.append(line)
    for regressed in decision.regressed_cases:
        evaluator = decision.evaluators.get(regressed.evaluator)
        head = "no score" if regressed.head is None else f"{regressed.head:.3f}"
        line = f"{regressed.evaluator}: {head}, from {regressed.baseline:.3f} in the baseline"
        case = found.setdefault(regressed.case_id, _Case())
        if evaluator is None or evaluator.passed:
            case.notes.append(f"dropped, not failing the gate: {line}")
        elif evaluator.status != "below_threshold":
            case.add("regressed", line)
    return found


def _claim_findings(decision: GateDecision, rules: set[str], found: dict[str, _Case]) -> None:
    """Newly hallucinated claims, unstable claims among them or listed apart."""
    unstable = {(claim.case_id, claim.id) for claim in decision.unstable_claims}
    new = {(claim.case_id, claim.id) for claim in decision.new_hallucinations}
    # The unstable claims the gate counts are among the new ones, unless that list was cut short.
    counts_unstable = not any(notice.endswith(UNSTABLE_APART) for notice in decision.notices)
    past = [c for c in decision.unstable_claims if (c.case_id, c.id) not in new]
    for claim in (*decision.new_hallucinations, *(past if counts_unstable else ())):
        case = found.setdefault(claim.case_id, _Case())
        line = _claim(claim)
        if (claim.case_id, claim.id) in unstable:
            line += f"; unstable, {_asks(claim)}"
        if claim.accepted_by is not None:
            case.notes.append(f"accepted by {claim.accepted_by}: {line}")
        elif NEW_HALLUCINATIONS_RULE in rules:
            case.add("new_hallucination", line)
        else:
            case.notes.append(f"newly hallucinated, not failing the gate: {line}")
    for claim in () if counts_unstable else decision.unstable_claims:
        found.setdefault(claim.case_id, _Case()).notes.append(
            f"unstable, not counted as new: {_claim(claim)}; {_asks(claim)}"
        )


def _retrieval_findings(decision: GateDecision, rules: set[str], found: dict[str, _Case]) -> None:
    """Newly miscited claims and lost relevant chunks, failing their case by the gate's settings."""
    for miscited in decision.listed("miscited_claims"):
        if isinstance(miscited, MiscitedClaim) and miscited.new:
            case = found.setdefault(miscited.case_id, _Case())
            line = f"[{miscited.id}] {miscited.text}"
            if MISCITED_CLAIMS_RULE in rules:
                case.add("miscited_claim", line)
            else:
                case.notes.append(f"newly miscited, not failing the gate: {line}")
    for lost in decision.listed("lost_chunks"):
        assert isinstance(lost, LostChunk)
        case = found.setdefault(lost.case_id, _Case())
        if LOST_CHUNKS_RULE in rules:
            case.add("lost_chunk", lost.text)
        else:
            case.notes.append(f"lost, not failing the gate: relevant {lost.text}")


def _failure(kind: str, message: str, body: str) -> ET.Element:
    element = ET.Element(kind if kind in ("error", "skipped") else "failure")
    element.set("message", _line(message))
    return element if not body else _with_text(element, body)


def _with_text(element: ET.Element, text: str) -> ET.Element:
    element.text = _text(text)
    return element


def _typed(element: ET.Element, kind: str) -> ET.Element:
    element.set("type", kind)
    return element


def _case_element(result: CaseResult, decision: GateDecision, case: _Case) -> ET.Element:
    element = ET.Element("testcase", classname="ragaliq.cases", name=_line(result.id))
    below = {
        name
        for name, e in decision.evaluators.items()
        if not e.passed and e.status == "below_threshold"
    }
    for name, evaluation in result.results.items():
        if name in below and evaluation.passed is False and evaluation.score is not None:
            threshold = decision.evaluators[name].threshold
            case.add(
                "below_threshold",
                f"{name}: {evaluation.score:.3f} is below the threshold {threshold:.2f}",
            )
    if result.status == "error":
        error = _failure("error", result.error or "the case could not be judged", "")
        element.append(_typed(error, "judge_error"))
    elif result.status == "skipped":
        element.append(_failure("skipped", result.error or "the case was not judged", ""))
    if result.status != "ok":  # no score to fail on: the error or the skip says why
        case.notes += [f"no score now: {line}" for line in case.reasons.pop("regressed", [])]
    kinds = [kind for kind in CASE_FAILURES if kind in case.reasons]
    if kinds:
        lines = [line for kind in kinds for line in case.reasons[kind]]
        message = "; ".join(f"{_what(kind, len(case.reasons[kind]))}" for kind in kinds)
        message += ": " + "; ".join(lines)
        element.append(_typed(_failure("failure", message, "\n".join(lines)), kinds[0]))
    out = [f"query: {result.query}"] if result.query else []
    out += case.notes
    if out:
        ET.SubElement(element, "system-out").text = _text("\n".join(out))
    return element


def _what(kind: str, count: int) -> str:
    s = "" if count == 1 else "s"
    return {
        "new_hallucination": f"{count} newly hallucinated claim{s}",
        "miscited_claim": f"{count} newly miscited claim{s}",
        "lost_chunk": f"{count} lost relevant chunk{s}",
        "regressed": f"{count} score{s} dropped past max_drop",
        "below_threshold": f"{count} score{s} below the threshold",
        "unchecked_claims": f"{count} claim{s} not verifiable offline",
    }[kind]


def _evaluator_elements(decision: GateDecision) -> list[ET.Element]:
    elements = []
    for name, e in decision.evaluators.items():
        element = ET.Element("testcase", classname="ragaliq.evaluators", name=_line(name))
        if not e.passed:
            kind = "turned_off" if e.turned_off else e.status
            line = next(
                (line for line in decision.failures if line.startswith(f"{name}: ")),
                f"{name}: {kind.replace('_', ' ')}",
            )
            element.append(_typed(_failure("failure", line, line), kind))
        scores = [
            f"{label}: {value:.6g}"
            for label, value in (("head", e.head), ("baseline", e.baseline), ("delta", e.delta))
            if value is not None
        ]
        scores.append(f"threshold: {e.threshold:g}; max_drop: {e.max_drop:g}; status: {e.status}")
        ET.SubElement(element, "system-out").text = _text("\n".join(scores))
        elements.append(element)
    return elements


def _gate_element(decision: GateDecision) -> ET.Element:
    element = ET.Element("testcase", classname="ragaliq", name="gate")
    if decision.failures:
        body = "\n".join(decision.failures)
        message = "; ".join(decision.failures)
        element.append(_typed(_failure("failure", message, body), "gate"))
    if decision.notices:
        ET.SubElement(element, "system-out").text = _text("\n".join(decision.notices))
    return element


def _suite(name: str, cases: list[ET.Element]) -> ET.Element:
    suite = ET.Element("testsuite", name=name)
    counts = {"failures": "failure", "errors": "error", "skipped": "skipped"}
    suite.set("tests", str(len(cases)))
    for attribute, tag in counts.items():
        suite.set(attribute, str(sum(case.find(tag) is not None for case in cases)))
    suite.extend(cases)
    return suite


def render_junit(decision: GateDecision, cases: Iterable[CaseResult]) -> str:
    """The JUnit XML of a decision and the run's cases (the run report's, in its order)."""
    found = _case_findings(decision)
    case_elements = [
        _case_element(result, decision, found.get(result.id, _Case())) for result in cases
    ]
    suites = [
        _suite("cases", case_elements),
        _suite("evaluators", _evaluator_elements(decision)),
        _suite("gate", [_gate_element(decision)]),
    ]
    root = ET.Element("testsuites", name="ragaliq gate")
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(suite.get(attribute, "0")) for suite in suites)))
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, decision: GateDecision, cases: Iterable[CaseResult]) -> None:
    """Write :func:`render_junit` to ``path`` atomically, redacted once more as a whole.

    Raises:
        OutputError: the file cannot be written.
    """
    write_atomic(path, render_junit(decision, cases))
