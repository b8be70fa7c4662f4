"""The HTML report read back in tests: its pages, their DOM and their data, and the runs."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from ragaliq.config import EvaluatorsConfig
from ragaliq.dataset import load_dataset
from ragaliq.evaluators import build_evaluators
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.judges import OfflineJudge
from ragaliq.models import (
    ClaimVerdict,
    RunReport,
    TestCase,
)
from ragaliq.report._html_data import CASES_ELEMENT
from ragaliq.report.html import write_html_report
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.conftest import REPO_ROOT

QUICKSTART = REPO_ROOT / "examples" / "quickstart" / "rag_outputs.jsonl"
SCRIPT = "<script>alert(1)</script>"
ESCAPE = "</script><script>document.title = 'pwned'</script><!-- \u2028 \u2029 &amp;"
"""Text that would end a script element, open a comment or end a JavaScript line if unescaped."""
SEEDS = {
    "storage-limits-by-plan": ("includes 5 TB per workspace", "includes 8 TB per workspace"),
    "restore-deleted-folder": ("for 180 days on Team", "for 365 days on Team"),
}
HOSTILE_CASE = TestCase(
    id="xss-<b>case</b>",
    query=f"Is {SCRIPT} escaped?",
    context=("Refunds are available within 14 days of purchase.",),
    response=(
        f"Refunds are available within 14 days of purchase. {SCRIPT} is shown as text. "
        f'An <img src=x onerror="alert(2)"> stays inert. {ESCAPE} too.'
    ),
)
VERDICT_CLASSES = {
    "SUPPORTED": "verdict-supported",
    "PARTIALLY_SUPPORTED": "verdict-partially-supported",
    "NOT_ENOUGH_INFO": "verdict-not-enough-info",
    "CONTRADICTED": "verdict-contradicted",
    "NOT_VERIFIABLE_OFFLINE": "verdict-not-verifiable-offline",
}
"""Each kind of claim the page shows, filters and counts apart: the four verdicts, and the claims
the offline judge could neither ground nor fault (NOT_ENOUGH_INFO, flagged)."""


def kind_of(claim: ClaimVerdict) -> str:
    """The kind the page gives a claim: its verdict, or NOT_VERIFIABLE_OFFLINE."""
    return claim.verdict.value if claim.verifiable else "NOT_VERIFIABLE_OFFLINE"


def render_html_report(
    report: RunReport,
    *,
    decision: GateDecision | None = None,
    cases: Sequence[TestCase] | None = None,
    title: str = "RagaliQ Gate report",
) -> str:
    """The page of a report held whole, with the dataset's ``cases`` matched by id."""
    by_id = None if cases is None else {case.id: case for case in cases}
    out = io.StringIO()
    write_html_report(
        out,
        head=report.head,
        cases=report.cases,
        decision=decision,
        dataset=None if by_id is None else by_id.get,
        title=title,
    )
    return out.getvalue()


# --- a small DOM over html.parser --------------------------------------------------------------

VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "area", "base", "col"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            node
            for node in self.iter()
            if (tag is None or node.tag == tag)
            and (cls is None or cls in node.classes)
            and all(node.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root
        self.start_tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), parent=self.current)
        self.start_tags.append((tag, dict(attrs)))
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start_tags.append((tag, dict(attrs)))
        self.current.children.append(Node(tag, dict(attrs), parent=self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder


# --- the page's data, read back ----------------------------------------------------------------

DATA = re.compile(
    r'<script type="application/(?:json|octet-stream)" id="rq-(\w+)">(.*?)</script>', re.DOTALL
)
BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def data_texts(html: str) -> dict[str, str]:
    """The JSON of each data block, the case records unpacked (base64, then zlib)."""
    blocks = dict(DATA.findall(html))
    assert BASE64.fullmatch(blocks["cases"])
    blocks["cases"] = zlib.decompress(base64.b64decode(blocks["cases"])).decode("utf-8")
    return blocks


def page_text(html: str) -> str:
    """The page with its case records unpacked: everything it holds, as text to search."""
    packed = dict(DATA.findall(html)).get("cases")
    if packed is None:
        return html
    return html + "\n" + zlib.decompress(base64.b64decode(packed)).decode("utf-8")


@dataclass(frozen=True)
class Data:
    """The JSON the page holds: its config, one record per case, and the totals."""

    config: dict[str, Any]
    cases: list[dict[str, Any]]
    totals: dict[str, Any]

    def text(self, value: str | int | None) -> str | None:
        return self.totals["strings"][value] if isinstance(value, int) else value

    def record(self, case_id: str) -> dict[str, Any]:
        return next(r for r in self.cases if r["i"] == case_id)

    def verdicts(self, record: dict[str, Any], key: str = "c") -> list[dict[str, Any]]:
        out = []
        for item in record.get(key, []):
            padded = item + [None] * (10 - len(item))
            text, verdict, confidence, evidence, reason, span, flags, agreement, new, accepted = (
                padded
            )
            if text is None:
                text = record["p"][span[0] : span[1]]
            out.append(
                {
                    "text": self.text(text),
                    "verdict": self.config["verdicts"][verdict]["value"],
                    "confidence": confidence,
                    "evidence": self.text(evidence),
                    "reason": self.text(reason) or "",
                    "span": tuple(span) if span else None,
                    "flags": tuple(self.text(f) for f in flags or ()),
                    "agreement": agreement,
                    "new": new == 1,
                    "accepted_by": accepted,
                }
            )
        return out

    def results(self, record: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {}
        for evaluator, result in zip(self.config["evaluators"], record.get("e", []), strict=False):
            if result is None:
                continue
            score, passed, status, reasoning, baseline = result + [None] * (5 - len(result))
            out[evaluator["name"]] = {
                "score": score,
                "passed": None if passed is None else passed == 1,
                "status": ("ok", "error", "skipped")[status],
                "reasoning": self.text(reasoning) or "",
                "baseline": baseline,
            }
        return out


def read_data(html: str) -> Data:
    blocks = {name: json.loads(text) for name, text in data_texts(html).items()}
    assert set(blocks) == {"config", "cases", "totals"}
    return Data(blocks["config"], blocks["cases"], blocks["totals"])


# --- the runs ----------------------------------------------------------------------------------


def judge(cases: list[TestCase], evaluators: EvaluatorsConfig | None = None) -> RunReport:
    built = build_evaluators(evaluators or EvaluatorsConfig())
    report = asyncio.run(run_suite(cases, judge=OfflineJudge(), evaluators=built))
    errors = [f"{c.id}: {c.error}" for c in report.cases if c.error]
    assert not errors, f"the offline judge failed on {len(errors)} cases, e.g. {errors[0]}"
    return report


def seeded(cases: list[TestCase]) -> list[TestCase]:
    out = []
    for case in cases:
        if case.id in SEEDS:
            old, new = SEEDS[case.id]
            assert old in case.response
            case = case.model_copy(update={"response": case.response.replace(old, new)})
        out.append(case)
    return out


@dataclass(frozen=True)
class Scenario:
    base_cases: list[TestCase]
    head_cases: list[TestCase]
    base: RunReport
    head: RunReport
    decision: GateDecision
    html: str
    dom: TreeBuilder
    data: Data


def build_scenario() -> Scenario:
    """The quickstart judged at the base and at a head with two seeded regressions and a
    hostile case, compared, and rendered with the dataset."""
    base_cases = load_dataset(QUICKSTART)
    head_cases = [*seeded(base_cases), HOSTILE_CASE]
    base, head = judge(base_cases), judge(head_cases)
    decision = compare(head, record_baseline(base), rules=GateRules())
    html = render_html_report(head, decision=decision, cases=head_cases)
    return Scenario(
        base_cases, head_cases, base, head, decision, html, parse(html), read_data(html)
    )


def csp(dom: TreeBuilder) -> str:
    content = dom.root.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert content is not None
    return content


def sha256(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


# --- sinks -------------------------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


class Null:
    def write(self, text: str) -> int:
        return len(text)


def unpacked_so_far(page: str) -> str:
    """The case records a page being written holds so far, as far as they can be unpacked."""
    start = page.find(CASES_ELEMENT)
    if start < 0:
        return ""
    packed = page[start + len(CASES_ELEMENT) :].split("<", 1)[0]
    return zlib.decompressobj().decompress(base64.b64decode(packed)).decode("utf-8", "ignore")
