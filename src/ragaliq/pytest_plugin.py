"""The RagaliQ pytest plugin: RAG quality assertions in a team's own test suite.

Registered through the ``pytest11`` entry point and off unless used: nothing is judged, loaded or
printed until a test asks for one of its fixtures or marks.

- ``ragaliq_judge``: the session's :class:`~ragaliq.testing.JudgeSession` (the config's judge;
  the offline judge without an API key), shared by every test;
- ``ragaliq_cases``: loads the cases of a dataset file, ``ragaliq_cases("rag_outputs.jsonl")``;
- ``assert_rag_quality``: ``assert_rag_quality(case, faithfulness=0.8, hallucination=0.9)``
  (without minimums, the config's thresholds), failing with a short message that names each
  failing evaluator, its score and threshold and the claims behind it, and no traceback;
- ``@pytest.mark.ragaliq_dataset("rag_outputs.jsonl")``: runs the test once per case of the file,
  given as its ``rag_case`` argument;

A relative dataset path, in the mark or in ``ragaliq_cases``, is read from the folder of the test
file that names it, whatever directory pytest runs from. A dataset that cannot be read is one
collection error naming the file, the line and the fix.
- options: ``--ragaliq-config``, ``--ragaliq-provider``, ``--ragaliq-model``,
  ``--ragaliq-budget`` (judge no more case once this many USD are spent: the rest skip) and
  ``--ragaliq-cache`` (a path, or ``off``);
- at the end of the session, one line: cases judged, judge calls, tokens, cost and cache hits.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragaliq.redaction import redact, register_env_secrets

if TYPE_CHECKING:
    from ragaliq.models import CaseResult, TestCase
    from ragaliq.testing import JudgeSession

MARK = "ragaliq_dataset"
_SESSION = pytest.StashKey["JudgeSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragaliq", "RAG quality assertions (RagaliQ Gate)")
    group.addoption("--ragaliq-config", default=None, help="ragaliq.yaml to judge with.")
    group.addoption(
        "--ragaliq-provider",
        default=None,
        choices=("auto", "claude", "offline", "cascade"),
        help="The judge (default: the config's; auto uses Claude when a key is set).",
    )
    group.addoption("--ragaliq-model", default=None, help="The Claude model.")
    group.addoption(
        "--ragaliq-budget",
        type=float,
        default=None,
        help="Judge no more case once this many USD are spent; the rest are skipped.",
    )
    group.addoption(
        "--ragaliq-cache", default=None, help="The judge cache file, or 'off' (default: config's)."
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARK}(path): run the test once per case of a dataset file (as rag_case)"
    )
    register_env_secrets(os.environ, names=("ANTHROPIC_API_KEY",))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Take every known secret out of a test's report: its failure, its captured output.

    pytest prints these and writes them into JUnit XML; an API error that echoes the key (into a
    test's assertion, a log line, its output) must not leave through either.
    """
    outcome = yield
    report = outcome.get_result()
    if report.longrepr is not None:
        text = str(report.longrepr)
        if redact(text) != text:
            report.longrepr = redact(text)
    report.sections = [(title, redact(content)) for title, content in report.sections]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker(MARK)
    if mark is None or "rag_case" not in metafunc.fixturenames:
        return
    from ragaliq.errors import RagaliqError

    if len(mark.args) != 1 or not isinstance(mark.args[0], str | Path):
        raise pytest.Collector.CollectError(
            f"@pytest.mark.{MARK} takes the dataset's path, as in "
            f'@pytest.mark.{MARK}("rag_outputs.jsonl")'
        )
    try:
        # The session first: a config that cannot be read is the config's error, not the mark's.
        _session(metafunc.config)
    except RagaliqError as exc:
        # A collection error pytest shows as this one message, without the frames behind it.
        raise pytest.Collector.CollectError(f"ragaliq: {exc}") from None
    try:
        cases = _load(
            mark.args[0],
            folder=Path(str(metafunc.definition.path)).parent,
            config=metafunc.config,
        )
    except RagaliqError as exc:
        raise pytest.Collector.CollectError(f"@pytest.mark.{MARK}: {exc}") from None
    metafunc.parametrize("rag_case", cases, ids=[case.id for case in cases])


def _load(named: str | Path, *, folder: Path, config: pytest.Config) -> list[TestCase]:
    """The cases of a dataset named by a test, relative to the test file's ``folder``.

    Raises:
        RagaliqError: the file is missing (saying where it was looked for) or invalid.
    """
    from ragaliq.dataset import load_dataset
    from ragaliq.evaluators import response_judged_by

    raw = Path(named)
    path = raw if raw.is_absolute() else folder / raw
    missing = f"a relative path is read from the test file's folder, {folder}"
    root = Path(str(config.rootpath))
    if not raw.is_absolute() and not path.exists() and (root / raw).is_file():
        relative = os.path.relpath(root / raw, folder)
        missing += f"; for {root / raw}, write {relative!r}"
    gate = _session(config).config
    return load_dataset(
        path,
        dataset_format=gate.dataset_format,
        missing=missing,
        response_judged_by=response_judged_by(gate.evaluators),
    )


def _session(config: pytest.Config) -> JudgeSession:
    if _SESSION not in config.stash:
        config.stash[_SESSION] = _build(config)
    return config.stash[_SESSION]


def _build(config: pytest.Config) -> JudgeSession:
    from ragaliq.testing import project_session

    named = config.getoption("--ragaliq-config")
    judge: dict[str, Any] = {}
    if config.getoption("--ragaliq-provider"):
        judge["provider"] = config.getoption("--ragaliq-provider")
    if config.getoption("--ragaliq-model"):
        judge["model"] = config.getoption("--ragaliq-model")
    cache = config.getoption("--ragaliq-cache")
    if cache == "off":
        judge["cache"] = False
    return project_session(
        root=Path(str(config.rootpath)),
        config_path=Path(named) if named else None,
        named_by="--ragaliq-config",
        judge=judge,
        cache_path=Path(cache) if cache and cache != "off" else None,
        budget_usd=config.getoption("--ragaliq-budget"),
    )


@pytest.fixture(scope="session")
def ragaliq_judge(pytestconfig: pytest.Config) -> JudgeSession:
    """The session's judge: every test shares it, its cache and its budget."""
    __tracebackhide__ = True
    from ragaliq.errors import RagaliqError

    try:
        return _session(pytestconfig)
    except RagaliqError as exc:
        message = f"ragaliq: {exc}"
    pytest.fail(message, pytrace=False)


@pytest.fixture
def ragaliq_cases(request: pytest.FixtureRequest) -> Callable[[str | Path], list[TestCase]]:
    """Loads the cases of a dataset file (JSONL, JSON, YAML, CSV, RAGAS or DeepEval).

    A relative path is read from the test file's folder.
    """
    folder = Path(str(request.path)).parent

    def load(path: str | Path) -> list[TestCase]:
        __tracebackhide__ = True
        from ragaliq.errors import RagaliqError

        try:
            return _load(path, folder=folder, config=request.config)
        except RagaliqError as exc:
            message = f"ragaliq_cases: {exc}"
        pytest.fail(message, pytrace=False)

    return load


@pytest.fixture
def assert_rag_quality(ragaliq_judge: JudgeSession) -> Callable[..., CaseResult]:
    """``assert_rag_quality(case, faithfulness=0.8, ...)``; skips once the budget is spent.

    A failure is the test's failure with the message alone: the evaluators, scores, thresholds
    and claims behind it, never the frames of the library.
    """
    from ragaliq.errors import RagaliqError
    from ragaliq.testing import BudgetSpentError, QualityFailure

    def check(case: TestCase, **minimums: float | None) -> CaseResult:
        __tracebackhide__ = True
        try:
            return ragaliq_judge.assert_quality(case, **minimums)
        except BudgetSpentError as exc:
            message, spent = str(exc), True
        except QualityFailure as exc:
            message, spent = str(exc), False
        except RagaliqError as exc:
            message, spent = f"ragaliq: case {case.id!r} could not be judged: {exc}", False
        # Outside the except blocks, so that pytest shows no exception chain either.
        message = redact(message)
        if spent:
            pytest.skip(message)
        pytest.fail(message, pytrace=False)

    return check


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is None or not session.judged:
        return
    from ragaliq.report.console import format_usage
    from ragaliq.text.counts import plural

    judge = session.config.judge
    terminalreporter.write_sep("-", "ragaliq")
    for notice in session.notices:
        terminalreporter.write_line(f"notice: {notice}")
    terminalreporter.write_line(
        f"ragaliq: {plural(session.judged, 'case')} judged ({judge.provider}) · "
        f"{format_usage(session.usage)}"
    )
