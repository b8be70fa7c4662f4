"""A pull request's config held to the base commit's: it may tighten the bar, never loosen it.

:func:`tighten` takes the trusted config and the proposed one and keeps, setting by setting, the
stricter of the two (:class:`ragaliq.policy.Ratchet` says which is), with a notice for each
change the proposal could not make.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragaliq.config import (
    GateConfig,
    GatePolicy,
)
from ragaliq.evaluators import evaluator_class
from ragaliq.policy import HIGHER, SMALLER, Ratchet, ratchet, show


def tighten(trusted: GateConfig, proposed: GateConfig | None) -> tuple[GateConfig, list[str]]:
    """The trusted config, tightened where the proposed one is stricter; and notices saying so.

    A proposal may turn an evaluator on, raise a threshold or ``min_confidence``, lower a
    ``max_drop``, and make a policy stricter; those apply now. Any other difference (the judge,
    its endpoint, cache, templates, scoring options, paths, a looser setting) is listed as
    applying once merged.
    """
    if proposed is None:
        return trusted, []
    tightened: list[str] = []
    pending: list[str] = []
    sections: dict[str, Any] = {}
    for name, _ in trusted.evaluators.sections():
        section = _tighten_evaluator(name, trusted, proposed, tightened, pending)
        if section is not None:
            sections[name] = section
    gate = _tighten_policy(trusted.gate, proposed.gate, tightened, pending)
    for key in sorted(set(GateConfig.model_fields) - {"evaluators", "gate"}):
        pending += _differences(key, getattr(trusted, key), getattr(proposed, key))
    config = trusted.model_copy(
        update={"evaluators": trusted.evaluators.model_copy(update=sections), "gate": gate}
    )
    notices = []
    if tightened:
        notices.append(
            "This change tightens the gate (" + "; ".join(tightened) + "); the tighter "
            "setting applies now."
        )
    if pending:
        notices.append(
            "This change proposes settings that apply once it is merged, since the bar comes "
            "from the base commit: " + "; ".join(pending) + "."
        )
    return config, notices


def _tighten_evaluator(
    name: str,
    trusted: GateConfig,
    proposed: GateConfig,
    tightened: list[str],
    pending: list[str],
) -> Any:
    """One evaluator's section, tightened; None when the proposal tightens nothing of it."""
    mine = trusted.evaluators.section(name)
    theirs = proposed.evaluators.section(name)
    update: dict[str, Any] = {}
    if theirs.enabled != mine.enabled:
        if theirs.enabled:
            update["enabled"] = True
            tightened.append(f"turns on {name}")
        else:
            pending.append(f"turns off {name}")
    evaluator = evaluator_class(name)
    options = [o for o in type(mine).model_fields if o not in ("enabled", "threshold", "max_drop")]
    ratcheted: list[tuple[str, Ratchet | None, Any, Any]] = [
        ("threshold", HIGHER, evaluator.threshold_of(mine), evaluator.threshold_of(theirs)),
        ("max_drop", SMALLER, trusted.rules().drop_for(name), proposed.rules().drop_for(name)),
        *(
            (
                o,
                HIGHER if o in mine.stricter_when_higher else None,
                getattr(mine, o),
                getattr(theirs, o),
            )
            for o in options
        ),
    ]
    for option, rule, a, b in ratcheted:
        if rule is not None and rule.tightens(a, b):
            update[option] = b
            tightened.append(f"{name} {option} {show(a)} → {show(b)}")
        elif a != b:
            where = (
                f"{name} {option}" if option in ("threshold", "max_drop") else f"{name}.{option}"
            )
            pending.append(f"{where} {show(a)} → {show(b)}")
    return mine.model_copy(update=update) if update else None


def _tighten_policy(
    mine: GatePolicy, theirs: GatePolicy, tightened: list[str], pending: list[str]
) -> GatePolicy:
    """The trusted policy, tightened by each setting the proposal makes stricter."""
    update, stricter, looser, unmarked = ratchet(mine, theirs)
    tightened += stricter
    pending += [f"gate.{change}" for change in (*looser, *unmarked)]
    return mine.model_copy(update=update)


def _differences(key: str, mine: Any, theirs: Any) -> list[str]:
    """``key a → b`` for each field that differs; secrets by name only."""
    if isinstance(mine, BaseModel) and isinstance(theirs, BaseModel):
        out: list[str] = []
        for field in type(mine).model_fields:
            out += _differences(f"{key}.{field}", getattr(mine, field), getattr(theirs, field))
        return out
    if mine == theirs:
        return []
    if key.endswith("api_key") or isinstance(mine, dict) or isinstance(theirs, dict):
        return [f"{key} (changed)"]
    return [f"{key} {show(mine)} → {show(theirs)}"]
