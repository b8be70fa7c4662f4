"""``ragaliq.yaml``: the one place where a gate is configured.

The file is parsed with a safe YAML loader that refuses repeated keys, and validated into
:class:`GateConfig`. Unknown keys are rejected with the nearest valid key suggested, and every
problem is reported as
``ragaliq.yaml: evaluators.faithfulness.threshold: must be between 0 and 1 (got 1.7)``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, Field, SecretStr, Strict, ValidationError

from ragaliq._fields import Count, FileName, Flag, Number, Section
from ragaliq._reading import decode_utf8, describe_size, read_regular
from ragaliq._validation import field_problems, unparsable
from ragaliq._yaml import load_yaml
from ragaliq.baseline import DEFAULT_BASELINE_PATH
from ragaliq.dataset import DatasetFormat
from ragaliq.errors import ConfigError
from ragaliq.evaluators.registry import EvaluatorSections, evaluator_sections
from ragaliq.policy import GatePolicy, GateRules
from ragaliq.redaction import register_secret

__all__ = [
    "DEFAULT_BASELINE_BRANCH",
    "DEFAULT_BASELINE_WORKFLOW",
    "DEFAULT_CLAUDE_MODEL",
    "DEFAULT_CONFIG_FILE",
    "DOCS_URL",
    "MAX_CONFIG_BYTES",
    "PLATFORM_DEFAULT_MODELS",
    "BaselinesConfig",
    "EvaluatorsConfig",
    "GateConfig",
    "GatePolicy",
    "JudgeConfig",
    "ModelPrice",
    "TemplatesConfig",
    "config_json_schema",
    "config_or_defaults",
    "defaults_notice",
    "load_config",
    "missing_config_fix",
    "parse_config",
]

DEFAULT_CONFIG_FILE = "ragaliq.yaml"
DOCS_URL = "https://github.com/ragaliq/ragaliq-gate/blob/main/docs"
"""Where messages send a user to read a documentation page: online, since an installed package
has no docs/ folder."""
DEFAULT_CLAUDE_MODEL = "claude-sonnet-5-5"
PLATFORM_DEFAULT_MODELS = {
    "bedrock": "global.anthropic.claude-sonnet-4-6",
    "vertex": "claude-sonnet-4-6",
}
"""The default model on each cloud platform, in its own naming (``judge.model`` overrides)."""
MAX_CONFIG_BYTES = 1024 * 1024
"""The size limit of a config file."""


class ModelPrice(Section):
    """USD per million tokens for one model."""

    input: Number = Field(ge=0)
    output: Number = Field(ge=0)
    cache_read: Number | None = Field(default=None, ge=0)
    """Defaults to a tenth of ``input``."""
    cache_write: Number | None = Field(default=None, ge=0)
    """Defaults to 1.25 times ``input``."""


class JudgeConfig(Section):
    """Which judge decides the verdicts, and how it may spend."""

    provider: Literal["auto", "claude", "bedrock", "vertex", "offline", "cascade"] = "auto"
    """``auto`` uses Claude when an API key is set and the offline judge otherwise. ``bedrock``
    and ``vertex`` reach Claude through Amazon Bedrock or Google Vertex AI with the platform's
    own credentials (no Anthropic key). ``cascade`` (needs a key) lets the offline judge settle
    the claims it is sure are supported and sends only the rest to Claude, in one call per case;
    claims and relevance come from Claude."""
    model: str = DEFAULT_CLAUDE_MODEL
    """The Claude model, as the platform names it; left out, ``claude-sonnet-5-5`` on Anthropic's
    API, ``global.anthropic.claude-sonnet-4-6`` on Bedrock and ``claude-sonnet-4-6`` on Vertex.
    Ignored by the offline judge."""
    api_key: SecretStr | None = None
    """Prefer the ``ANTHROPIC_API_KEY`` environment variable to a key in a committed file."""
    base_url: str | None = None
    """An Anthropic-compatible endpoint (vLLM, llama.cpp, Ollama, a gateway), or a proxy in front
    of Bedrock or Vertex. ``ANTHROPIC_BASE_URL`` is honoured too, except in the action's gate
    mode, where the endpoint comes only from this setting at the base commit or the action's
    ``anthropic-base-url`` input."""
    region: str | None = None
    """Bedrock: the AWS region (default ``AWS_REGION``, ``AWS_DEFAULT_REGION`` or the profile's).
    Vertex: the Google Cloud region, e.g. ``us-east5`` or ``global`` (default
    ``CLOUD_ML_REGION``)."""
    project: str | None = None
    """Vertex: the Google Cloud project (default ``ANTHROPIC_VERTEX_PROJECT_ID``,
    ``GOOGLE_CLOUD_PROJECT``, else the credentials' project)."""
    aws_profile: str | None = None
    """Bedrock: a named AWS profile; by default the standard AWS credential chain (environment,
    the OIDC role of ``aws-actions/configure-aws-credentials``, an instance role)."""
    structured_output: Literal["auto", "schema", "tool", "prompt"] = "auto"
    """How replies are kept to their JSON shape: ``schema`` (``output_config``), ``tool`` (one
    forced tool), ``prompt`` (JSON asked for in the prompt). ``auto`` uses the schema with
    Anthropic, Bedrock and Vertex; on a ``base_url`` it falls back to the tool, then to the
    prompt, when the endpoint ignores the schema. Every reply is validated either way."""
    timeout_s: Number = Field(default=120.0, gt=0)
    """Seconds before one request to the judge is abandoned (and retried)."""
    max_retries: Count = Field(default=4, ge=0, le=10)
    """Retries of a failed request (429, 5xx, timeouts) with exponential backoff."""
    concurrency: Count = Field(default=8, ge=1, le=64)
    """Judge requests in flight at once."""
    max_tokens: Count = Field(default=4096, ge=256, le=64000)
    """Output token limit of one judge reply."""
    claims_per_call: Count = Field(default=25, ge=1, le=200)
    """Claims verified in one request; longer responses are verified in batches."""
    one_question_per_call: Flag = False
    """Ask each question (claims, their verdicts, relevance, chunk ratings, needed facts) in a
    call of its own, as before, instead of one call for what reads the query and the response
    and one for what reads the context. A judge of its own: another prompt version."""
    repeat: Count = Field(default=1, ge=1, le=9)
    """Verify each case's claims this many times and keep the majority verdict per claim."""
    cache: Flag = True
    """Keep validated judge results in a local SQLite file, so unchanged cases cost nothing."""
    cache_path: FileName = ".ragaliq/cache.sqlite"
    """Relative to the config file."""
    budget_usd: Number | None = Field(default=None, gt=0)
    """Stop scheduling new cases before the spend would pass this."""
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    """Overrides of the built-in price table, by model name."""
    batch: Flag = False
    """Judge through Anthropic's Message Batches API, at half the price of every token: used by
    ``ragaliq run`` and the action's ``update-baseline`` mode (``ragaliq run --batch`` asks for it
    once); a gate on a pull request always asks interactively. Results can take minutes to hours."""
    batch_size: Count = Field(default=5000, ge=1, le=100_000)
    """In a batched run: the most requests in one batch, and judge requests waiting at once."""
    batch_poll_s: Number = Field(default=60.0, gt=0)
    """In a batched run: the longest wait between two looks at a batch still in progress."""

    @property
    def model_id(self) -> str:
        """The model to ask for: ``model``, or the platform's default when it was left out."""
        if "model" in self.model_fields_set:
            return self.model
        return PLATFORM_DEFAULT_MODELS.get(self.provider, self.model)

    @property
    def requests_in_flight(self) -> int:
        """Judge requests a run keeps waiting at once: many more when they go out as batches."""
        return self.batch_size if self.batch else self.concurrency


if TYPE_CHECKING:
    EvaluatorsConfig = EvaluatorSections
else:
    EvaluatorsConfig = evaluator_sections()
"""The evaluators of the suite, one section per evaluator in the registry; a written section is
on unless ``enabled: false``, one left out at its default."""


DEFAULT_BASELINE_BRANCH = "ragaliq-baselines"
DEFAULT_BASELINE_WORKFLOW = "ragaliq-baseline.yml"
_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")


def _branch_name(value: str) -> str:
    if (
        not _BRANCH.fullmatch(value)
        or ".." in value
        or "//" in value
        or value.endswith(("/", ".", ".lock"))
    ):
        raise ValueError(
            f"{value!r} is not a branch name this store takes; use letters, digits, '.', '_', "
            "'-' and '/', e.g. ragaliq-baselines"
        )
    return value


BranchName = Annotated[str, Strict(), AfterValidator(_branch_name)]


class BaselinesConfig(Section):
    """Where the baselines the gate compares pull requests with are kept, and who may write one."""

    store: Literal["file", "branch", "artifacts"] = "file"
    """``branch``: a data branch of the repository (``branch``), one baseline per commit of the
    base branch, written by the baseline workflow's ``store-baseline`` step and never pushed to
    the base branch, so that branch can be protected; each is trusted only once the gate has
    shown, through the API, that a ``push`` run of ``workflow`` on the base branch at that commit
    recorded it. ``artifacts``: kept among the record job's artifacts, which never expire (on
    GitLab), read from the run the records name. ``file``: the ``baseline`` file, committed on
    the base branch."""
    branch: BranchName = DEFAULT_BASELINE_BRANCH
    """The data branch of ``store: branch``; never a branch pull requests merge into."""
    workflow: FileName = DEFAULT_BASELINE_WORKFLOW
    """The file name (in ``.github/workflows``) of the workflow that records baselines: a
    baseline in the store counts only when a ``push`` run of this workflow recorded it."""
    keep: Count = Field(default=500, ge=1, le=2000)
    """Baselines the data branch keeps, newest first; older ones are deleted as new ones come."""
    ancestors: Count = Field(default=20, ge=0, le=100)
    """When the base commit has no baseline yet (its baseline run has not finished), how many of
    its first-parent ancestors are searched for the nearest one; the gate says which it used."""


class TemplatesConfig(Section):
    """Your own Jinja templates; each may ``{% extends "comment.md.j2" %}`` and override blocks."""

    comment: FileName | None = None
    """The PR comment template, relative to the config file."""
    summary: FileName | None = None
    """The job summary template, relative to the config file."""


class GateConfig(Section):
    """The whole ``ragaliq.yaml``."""

    dataset: FileName | None = None
    """The RAG outputs to judge (JSONL, JSON, YAML or CSV), relative to the config file."""
    dataset_format: DatasetFormat = "auto"
    """The dataset's field names (RagaliQ's, RAGAS's or DeepEval's) or CSV; detected by default."""
    baseline: FileName = DEFAULT_BASELINE_PATH
    """The baseline file, relative to the config file; the action reads it at the PR's base."""
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    evaluators: EvaluatorsConfig = Field(default_factory=EvaluatorsConfig)
    gate: GatePolicy = Field(default_factory=GatePolicy)
    templates: TemplatesConfig = Field(default_factory=TemplatesConfig)
    baselines: BaselinesConfig = Field(default_factory=BaselinesConfig)

    def rules(self) -> GateRules:
        """What a gate under this config enforces: its policy, and each evaluator's max_drop."""
        drops = {
            name: options.max_drop
            for name, options in self.evaluators.sections()
            if options.max_drop is not None
        }
        return GateRules.of(self.gate, drops)


def load_config(path: Path, *, named_by: str = "--config") -> GateConfig:
    """Read and validate a config file the user runs with, and register its API key as a secret.

    (:func:`parse_config` registers nothing: a gate also parses a pull request's own config,
    whose "key" must not be able to blank out text it equals.)

    Args:
        path: The config file.
        named_by: How the user names the config where they run (``--config`` on the command
            line, ``--ragaliq-config`` in pytest, ``the config= argument`` in Python), for the
            fix a missing or oversized file's message suggests.

    Raises:
        ConfigError: the file is missing, is not YAML, or does not validate; the message lists
            every problem as ``file: field.path: problem``.
    """
    name = str(path)
    raw = read_regular(
        path,
        limit=MAX_CONFIG_BYTES,
        error=ConfigError,
        missing=missing_config_fix(f"pass {named_by} with the right path"),
        too_big=f"a config is a few settings; check that {named_by} names the right file",
    )
    config = parse_config(decode_utf8(raw, name=name, error=ConfigError), name=name)
    if config.judge.api_key is not None:
        register_secret(config.judge.api_key.get_secret_value())
    return config


def missing_config_fix(other: str) -> str:
    """How to fix a config that is not there; ``other`` says how to name the right one."""
    return (
        f"write one with `ragaliq init` (or by hand: every key is in {DOCS_URL}/configuration.md)"
        f", or {other}"
    )


def defaults_notice(name: str, named_by: str = "--config") -> str:
    """What a run says when no config is named and there is none: the defaults apply."""
    return (
        f"{name} is not there, so this run uses the built-in defaults; write one with "
        f"`ragaliq init`, or pass {named_by} with the right path."
    )


def config_or_defaults(
    path: Path, *, named: bool, named_by: str = "--config"
) -> tuple[GateConfig, str | None]:
    """The one rule for finding the config, wherever a run starts (a command, Python, pytest).

    A config the user named must exist; when none is named and ``path`` (the default
    ``ragaliq.yaml``) is not there, the built-in defaults apply, with the notice that says so.

    Args:
        path: The config named, or the default one.
        named: Whether the user named ``path``.
        named_by: How the user names a config where they run, for the messages.

    Returns:
        The config, and the notice to show when the built-in defaults apply (else None).

    Raises:
        ConfigError: the config is named and missing, or is invalid (:func:`load_config`).
    """
    if not named and not path.exists():
        return GateConfig(), defaults_notice(str(path), named_by)
    return load_config(path, named_by=named_by), None


def parse_config(text: str, *, name: str = DEFAULT_CONFIG_FILE) -> GateConfig:
    """Validate config text; ``name`` is used in messages."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{name}: {describe_size(len(text))} is over the limit of "
            f"{describe_size(MAX_CONFIG_BYTES)} for a config; check that it is the right file"
        )
    try:
        data: Any = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: invalid YAML: {problem}") from exc
    except (RecursionError, ValueError) as exc:
        raise ConfigError(f"{name}: invalid YAML: {unparsable(exc)}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: must be a mapping of settings (got {type(data).__name__})")
    try:
        config = GateConfig.model_validate(data)
    except ValidationError as exc:
        lines = [f"{name}: {p.path}: {p.message}" for p in field_problems(exc, GateConfig)]
        raise ConfigError("\n".join(lines)) from exc
    return config


def config_json_schema() -> str:
    """The JSON Schema of ``ragaliq.yaml``, for editor completion."""
    schema = GateConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = DEFAULT_CONFIG_FILE
    return json.dumps(schema, indent=2)
