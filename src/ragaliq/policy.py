"""The gate's policy: when it fails, and the one ratchet that keeps a pull request from lowering it.

:class:`GatePolicy` is the ``gate:`` section of ``ragaliq.yaml``. Each setting says, on its own
field, which way is stricter (a :class:`Ratchet`); settings without one (``accept_from``) can only
change once merged. :class:`GateRules` is what a gate enforces and what a baseline records: the
policy plus each evaluator's tolerated drop.

One walk over those markers (:func:`ratchet`) serves both places where the bar must not go down:
a pull request's own config may tighten the base commit's at once but loosens nothing until
merged (:mod:`ragaliq.trust`), and a run is never held to less than the policy recorded with its
baseline (:meth:`GateRules.at_least`). A new policy setting is one field here, with its marker,
and the code that reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from ragaliq._fields import Count, Flag, Fraction, Number, Section

__all__ = ["HIGHER", "SMALLER", "Budget", "GatePolicy", "GateRules", "Ratchet", "ratchet", "show"]


@dataclass(frozen=True)
class Ratchet:
    """Which way a setting is stricter: along ``order`` (loosest first), or by size.

    The one rule for "stricter" in the project: a pull request's config tightens the base
    commit's by it, and a run is held to what its baseline recorded by it. For a number, ``None``
    (no limit) is the loosest value.
    """

    order: tuple[object, ...] = ()
    higher: bool = False
    """For a number without ``order``: a higher value is stricter (a threshold), else lower."""

    def stricter(self, a: Any, b: Any) -> Any:
        """The stricter of two values."""
        if self.order:
            return max(a, b, key=self.order.index)
        if a is None or b is None:
            return b if a is None else a
        return max(a, b) if self.higher else min(a, b)

    def tightens(self, a: Any, b: Any) -> bool:
        """Whether ``b`` is stricter than ``a``."""
        return bool(a != b and self.stricter(a, b) == b)


SMALLER = Ratchet()
"""A number for which a smaller value is a stricter gate (a drop tolerated)."""
HIGHER = Ratchet(higher=True)
"""A number for which a higher value is a stricter gate (a threshold, a confidence)."""


def _confidence(value: float) -> float:
    if not 0.5 <= value <= 0.999:
        raise ValueError(f"must be between 0.5 and 0.999 (got {value:g})")
    return value


Confidence = Annotated[Number, AfterValidator(_confidence)]


class Budget(Section):
    """What one gate run may spend on a pull request: Claude's tokens and USD.

    The offline judge spends none. A run that would pass the budget stops before it spends, with
    exit 2.
    """

    run_usd: Annotated[Number, SMALLER] = Field(default=25.0, gt=0)
    """The most a gate run may spend, in USD (the judge cache's hits cost nothing)."""
    run_tokens: Annotated[Count, SMALLER] = Field(default=10_000_000, ge=1)
    """The most tokens, in and out, a gate run may use."""
    case_usd: Annotated[Number, SMALLER] = Field(default=1.0, gt=0)
    """The most one case may cost, in USD."""
    case_tokens: Annotated[Count, SMALLER] = Field(default=250_000, ge=1)
    """The most tokens, in and out, one case may use."""


class GatePolicy(Section):
    """When the gate fails."""

    max_drop: Annotated[Fraction, SMALLER] = 0.05
    """Largest drop of an evaluator's score from the baseline before the gate fails."""
    confidence: Annotated[Confidence, SMALLER] = 0.95
    """How sure the gate must be that a drop is real before it fails on it: the level of the
    interval for the mean change over the cases both runs share."""
    on_inconclusive: Annotated[Literal["pass", "fail"], Ratchet(("pass", "fail"))] = "pass"
    """What a drop past ``max_drop`` that the suite cannot tell from noise does."""
    fail_on_new_hallucinations: Annotated[Flag, Ratchet((False, True))] = False
    """Fail the gate when any claim is newly hallucinated, whatever the scores."""
    fail_on_unchecked_claims: Annotated[Flag, Ratchet((False, True))] = False
    """Fail the gate when a case new or changed since the baseline makes a claim the offline
    judge could not check (not verifiable offline): such claims are left out of the scores, so
    an invented detail would otherwise pass on the scores alone."""
    fail_on_lost_chunks: Annotated[Flag, Ratchet((False, True))] = False
    """Fail the gate when the retrieval of a case the baseline has no longer finds, within the
    retrieval metrics' ``k``, a chunk (or document) the labels grade relevant and the baseline
    found there: the lost relevant chunks, listed in the failure."""
    fail_on_miscited_claims: Annotated[Flag, Ratchet((False, True))] = False
    """Fail the gate when a claim is newly miscited (``citation_accuracy``): credited to chunks
    that do not back it, or to a chunk that was not retrieved, and not miscited in the
    baseline's same case. The claims are listed in the failure."""
    on_error: Annotated[Literal["fail", "ignore"], Ratchet(("ignore", "fail"))] = "fail"
    """Whether cases the judge could not judge fail the gate."""
    count_unstable: Annotated[Flag, Ratchet((False, True))] = False
    """Count unstable claims as newly hallucinated: claims whose verdicts disagreed when asked
    again (a confirmation, or ``judge.repeat``)."""
    confirm_new_hallucinations: Annotated[Flag, Ratchet((True, False))] = True
    """Ask a language-model judge once more about each claim that would fail the gate (newly
    hallucinated) before deciding: one call per such case. A claim held against the response by
    one ask only is unstable, listed apart. Off is stricter: a single verdict can fail the gate."""
    on_missing_key: Annotated[
        Literal["fail", "skip", "offline"], Ratchet(("offline", "skip", "fail"))
    ] = "fail"
    """In the action, what a pull request's gate without the judge's API key does: ``fail`` and
    ``skip`` report it not judged (``passed=false``, exit 2, the status ``error``; never green),
    ``offline`` judges with the offline judge (whose scores do not compare with a Claude
    baseline). The workflows ``ragaliq init`` writes give every gate the key, forks included."""
    accept_from: Literal["write", "nobody"] | list[str] = "write"
    """Who may accept findings with a review of the pull request's head commit whose body holds
    ``/ragaliq accept <claim ids>`` or ``/ragaliq accept all``: anyone with write access to the
    repository (``write``), ``nobody``, or a list of logins and ``org/team`` slugs."""
    author_may_accept: Annotated[Flag, Ratchet((True, False))] = False
    """Whether the pull request's author may accept the findings of their own pull request."""
    on_missing_cases: Annotated[Literal["fail", "notice"], Ratchet(("notice", "fail"))] = "fail"
    """Whether baseline cases missing from the run fail the gate (deleting the cases a PR does
    badly on must not pass it) or only get a notice."""
    budget: Budget = Field(default_factory=Budget)
    """The most a gate run may spend; a pull request may lower it, never raise it."""


class GateRules(GatePolicy):
    """What a gate enforces, and what a baseline records: the policy and each evaluator's drop."""

    drops: dict[str, Fraction] = Field(default_factory=dict)
    """The tolerated drop per evaluator; an evaluator not listed tolerates ``max_drop``."""

    @model_validator(mode="before")
    @classmethod
    def _recorded_before(cls, data: Any) -> Any:
        """Baselines recorded before the policy was one model kept the drops in ``max_drop``."""
        if isinstance(data, dict) and isinstance(data.get("max_drop"), dict):
            data = {**data, "drops": data["max_drop"]}
            del data["max_drop"]
        return data

    @classmethod
    def of(cls, policy: GatePolicy, drops: dict[str, float]) -> GateRules:
        """A policy with each evaluator's drop."""
        return cls(**{name: getattr(policy, name) for name in GatePolicy.model_fields}, drops=drops)

    def drop_for(self, evaluator: str) -> float:
        """The largest drop from the baseline tolerated for one evaluator."""
        return self.drops.get(evaluator, self.max_drop)

    def recorded(self, evaluators: Iterable[str]) -> GateRules:
        """These rules as a baseline records them: every setting, every evaluator's drop."""
        return GateRules.of(self, {name: self.drop_for(name) for name in evaluators})

    def at_least(self, recorded: GateRules) -> tuple[GateRules, list[str]]:
        """These rules, made no looser than the baseline's; and what had been loosened.

        Only what the baseline recorded counts (an older baseline recorded fewer settings), and
        the drops count per evaluator.
        """
        recorded_settings = recorded.model_fields_set - {"max_drop", "drops"}
        update, _, _, _ = ratchet(self, recorded, only=recorded_settings)
        _, _, loosened, _ = ratchet(recorded, self, only=recorded_settings)
        drops = dict(self.drops)
        for name, floor in sorted(recorded.drops.items()):
            if SMALLER.tightens(self.drop_for(name), floor):
                loosened.append(f"{name} max_drop {floor:g} → {self.drop_for(name):g}")
                drops[name] = floor
        return self.model_copy(update={**update, "drops": drops}), loosened


def ratchet(
    mine: BaseModel,
    theirs: BaseModel,
    prefix: str = "",
    *,
    only: Iterable[str] | None = None,
) -> tuple[dict[str, Any], list[str], list[str], list[str]]:
    """Walk two versions of a section by their :class:`Ratchet` markers.

    Returned: the update that makes ``mine`` as strict as ``theirs`` wherever ``theirs`` is
    stricter; those settings (``name a → b``); the settings where ``theirs`` is looser; and the
    changed settings that have no marker (they can only change once merged). ``only`` limits the
    walk to some settings (what an older baseline recorded).
    """
    update: dict[str, Any] = {}
    stricter: list[str] = []
    looser: list[str] = []
    unmarked: list[str] = []
    names = set(type(mine).model_fields) & set(type(theirs).model_fields)
    if only is not None:
        names &= set(only)
    for name, info in type(mine).model_fields.items():
        if name not in names:
            continue
        a, b = getattr(mine, name), getattr(theirs, name)
        if a == b:
            continue
        label = f"{prefix}{name}"
        if isinstance(a, BaseModel) and isinstance(b, BaseModel):
            inner, up, down, other = ratchet(a, b, f"{label}.")
            if inner:
                update[name] = a.model_copy(update=inner)
            stricter, looser, unmarked = stricter + up, looser + down, unmarked + other
            continue
        marker = next((m for m in info.metadata if isinstance(m, Ratchet)), None)
        change = f"{label} {show(a)} → {show(b)}"
        if marker is None:
            unmarked.append(change)
        elif marker.tightens(a, b):
            update[name] = b
            stricter.append(change)
        else:
            looser.append(change)
    return update, stricter, looser, unmarked


def show(value: Any) -> str:
    """A setting's value in a message."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{k}: {v:g}" if isinstance(v, float) else f"{k}: {v}"
                for k, v in sorted(value.items())
            )
            + "}"
        )
    return f"{value:g}" if isinstance(value, float) else str(value)
