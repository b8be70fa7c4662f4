"""Train the offline judge's claim model and write src/ragaliq/offline/model.json.

Usage::

    python scripts/train_offline.py [--data DIR] [--out PATH] [--check]

Reads the tune half of RAGTruth (ragtruth-dev without the held-out sources, whose
``sha256(source_id) mod 2 == 0``; see benchmarks/ragtruth.py) and nothing else. Each response is
split into claims exactly as the offline judge splits it; a claim is labelled hallucinated when
it overlaps a span the annotators marked. The model is an L2-regularised logistic regression over
the judge's hand-made features (src/ragaliq/judges/_features.py), fitted by Newton's method in
pure Python, so the same data gives the same file, byte for byte, with no seed to fix.

The model decides only on the claims the judge's rules leave to it: claims with no finding whose
every content word their evidence states (``ragaliq.offline.grounding``). It is fitted on
those claims alone. A claim with a finding, or with a word its evidence does not state, is never
SUPPORTED whatever the model says.

There are two models, one for prose contexts and one for JSON records, and three decision
thresholds, one per kind of case the judge can tell apart: an answer to a question over prose
(RAGTruth's qa), prose with no question (its summaries) and a record (its data2txt). The answer and
summary kinds share the prose weights (more data) but not the threshold: a summary restates a whole
article, an answer a few passages, and the same evidence weighs differently.

The thresholds are chosen on out-of-fold probabilities (5 folds by source, inside the tune part):
the thresholds on the claim probability that maximise the mean balanced accuracy over the three
tasks plus the overall F1, at the response level (flagged for review when any claim is over its
threshold or left to no model at all), found by coordinate ascent over a grid. A grounded claim
under its threshold is SUPPORTED, and the cascade keeps every SUPPORTED verdict without asking
Claude.

``--check`` recomputes the model and fails if the shipped file differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ragtruth import DEFAULT_DATA, TASKS, Scores, claim_labels, load_ragtruth  # noqa: E402

from ragaliq.offline.context import ContextIndex  # noqa: E402
from ragaliq.offline.features import FEATURES, analyse_claims  # noqa: E402
from ragaliq.offline.findings import find  # noqa: E402
from ragaliq.offline.judge import polarity_of  # noqa: E402
from ragaliq.offline.model import MODEL_PATH, case_kind, model_of_kind  # noqa: E402
from ragaliq.offline.sentence_claims import extract_sentence_claims  # noqa: E402

L2 = 100.0
"""Ridge penalty on the standardised weights (the bias is not penalised). Chosen by nested
cross-validation inside the tune part (thresholds picked on inner folds): 100 against 1 gave
steadier thresholds and a better outer-fold score on every task but summary (within 0.01)."""
NEWTON_STEPS = 30
FOLDS = 5
DIGITS = 6


REGIMES = ("prose", "record")
"""The two models: one for prose contexts, one for JSON records."""
KINDS = ("answer", "summary", "record")
"""The kinds of case, each with its own thresholds (see ``ragaliq.offline.case_kind``)."""
GRID = tuple(round(0.05 + 0.01 * i, 2) for i in range(86))
ASCENT_ROUNDS = 3


@dataclass
class Row:
    task: str
    kind: str
    """The case's kind: which thresholds apply."""
    response: int
    """Index of the response the claim belongs to."""
    fold: int
    x: list[float]
    y: int
    ruled: bool
    """Whether the claim is not SUPPORTED whatever the model says: a finding settles it, or its
    evidence does not state one of its words (then it is not verifiable)."""

    @property
    def regime(self) -> str:
        """``record`` when the context is a JSON record, else ``prose``: each has its own model."""
        return model_of_kind(self.kind)


def fold_of(source_id: str) -> int:
    """The cross-validation fold of a source (all its responses go together)."""
    return int(hashlib.sha256(f"fold:{source_id}".encode()).hexdigest(), 16) % FOLDS


def build_rows(data: Path) -> tuple[list[Row], list[tuple[str, bool]], list[int]]:
    """Claim rows of the tune part, (task, hallucinated) per response, and each response's fold."""
    rows: list[Row] = []
    responses: list[tuple[str, bool]] = []
    folds: list[int] = []
    for item in load_ragtruth(data, "tune"):
        claims = extract_sentence_claims(item.case.response)
        response = len(responses)
        responses.append((item.task, item.hallucinated))
        fold = fold_of(item.source_id)
        folds.append(fold)
        if not claims:
            continue
        index = ContextIndex.build(item.case.context, query=item.case.query)
        kind = case_kind(index)
        for analysis, label in zip(
            analyse_claims(claims, index), claim_labels(item, claims), strict=True
        ):
            ruled = (
                bool(find(analysis))
                or bool(analysis.ungrounded)
                or bool(polarity_of(analysis))
                or analysis.too_long
                or not analysis.words
            )
            rows.append(
                Row(
                    item.task,
                    kind,
                    response,
                    fold,
                    analysis.features,
                    int(label),
                    ruled,
                )
            )
    return rows, responses, folds


def standardise(rows: Sequence[Row]) -> tuple[list[float], list[float]]:
    d = len(FEATURES)
    n = len(rows)
    means = [sum(r.x[j] for r in rows) / n for j in range(d)]
    stds = []
    for j in range(d):
        var = sum((r.x[j] - means[j]) ** 2 for r in rows) / n
        stds.append(math.sqrt(var) if var > 1e-12 else 1.0)
    return means, stds


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a is symmetric positive definite)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            if factor:
                for c in range(col, n + 1):
                    m[r][c] -= factor * m[col][c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][c] * out[c] for c in range(r + 1, n))) / m[r][r]
    return out


def fit(rows: Sequence[Row], means: list[float], stds: list[float]) -> list[float]:
    """Weights [bias, w1..wd] on standardised features, by Newton's method."""
    d = len(FEATURES) + 1
    xs = [[1.0] + [(r.x[j] - means[j]) / stds[j] for j in range(d - 1)] for r in rows]
    ys = [r.y for r in rows]
    w = [0.0] * d
    for _ in range(NEWTON_STEPS):
        grad = [L2 * w[j] if j else 0.0 for j in range(d)]
        hess = [[0.0] * d for _ in range(d)]
        for j in range(1, d):
            hess[j][j] = L2
        for x, y in zip(xs, ys, strict=True):
            p = _sigmoid(sum(wj * xj for wj, xj in zip(w, x, strict=True)))
            g = p - y
            h = p * (1 - p)
            for j in range(d):
                grad[j] += g * x[j]
                hx = h * x[j]
                row = hess[j]
                for k in range(j, d):
                    row[k] += hx * x[k]
        for j in range(d):
            for k in range(j):
                hess[j][k] = hess[k][j]
        step = _solve(hess, grad)
        w = [wj - sj for wj, sj in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-10:
            break
    return w


def predict(w: list[float], means: list[float], stds: list[float], x: list[float]) -> float:
    z = w[0] + sum(w[j + 1] * (x[j] - means[j]) / stds[j] for j in range(len(x)))
    return _sigmoid(z)


def task_scores(
    responses: Sequence[tuple[str, bool]], flagged: Sequence[bool]
) -> dict[str, Scores]:
    """Scores per task and overall, from each response's gold label and whether it was flagged."""
    out = {}
    for task in (*TASKS, "overall"):
        pairs = [
            (gold, flagged[i])
            for i, (name, gold) in enumerate(responses)
            if task == "overall" or name == task
        ]
        out[task] = Scores.of(pairs)
    return out


def response_scores(
    maxima: dict[str, list[float]],
    responses: Sequence[tuple[str, bool]],
    thresholds: dict[str, float],
) -> dict[str, Scores]:
    """Response-level scores: a response is flagged when one of its claims reaches the
    threshold of its kind. ``maxima[kind][i]`` is response i's highest claim probability."""
    flagged = [
        any(maxima[kind][i] >= thresholds[kind] for kind in KINDS) for i in range(len(responses))
    ]
    return task_scores(responses, flagged)


def objective(scores: dict[str, Scores]) -> float:
    return sum(scores[t].bacc for t in TASKS) / len(TASKS) + scores["overall"].f1


def response_maxima(
    rows: Sequence[Row], probs: Sequence[float], count: int
) -> dict[str, list[float]]:
    maxima = {kind: [-1.0] * count for kind in KINDS}
    for row, p in zip(rows, probs, strict=True):
        p = 2.0 if row.ruled else p  # a ruled claim is flagged at any threshold
        maxima[row.kind][row.response] = max(maxima[row.kind][row.response], p)
    return maxima


def choose_thresholds(
    maxima: dict[str, list[float]], responses: Sequence[tuple[str, bool]]
) -> tuple[float, dict[str, float]]:
    """The objective's best thresholds per kind, by coordinate ascent over GRID from 0.3 (a move
    must improve the objective, so ties keep the earlier value), and the objective there."""
    thresholds = dict.fromkeys(KINDS, 0.3)
    best = objective(response_scores(maxima, responses, thresholds))
    for _ in range(ASCENT_ROUNDS):
        for kind in KINDS:
            for value in GRID:
                trial = {**thresholds, kind: value}
                score = objective(response_scores(maxima, responses, trial))
                if score > best + 1e-12:
                    best, thresholds = score, trial
    return best, thresholds


def fit_regime(rows: Sequence[Row]) -> dict[str, object]:
    means, stds = standardise(rows)
    w = fit(rows, means, stds)
    return {"means": means, "stds": stds, "bias": w[0], "weights": w[1:]}


def probability(model: dict[str, object], x: list[float]) -> float:
    w = [model["bias"], *model["weights"]]  # type: ignore[misc]
    return predict(w, model["means"], model["stds"], x)  # type: ignore[arg-type]


def nested_scores(
    maxima: dict[str, list[float]], responses: Sequence[tuple[str, bool]], folds: Sequence[int]
) -> dict[str, Scores]:
    """Scores with each fold's thresholds chosen on the other folds' out-of-fold probabilities:
    no response is judged with a threshold that its own label helped to choose."""
    flagged = [False] * len(responses)
    for fold in range(FOLDS):
        inner = [i for i, f in enumerate(folds) if f != fold]
        _, thresholds = choose_thresholds(
            {kind: [maxima[kind][i] for i in inner] for kind in KINDS},
            [responses[i] for i in inner],
        )
        for i, f in enumerate(folds):
            if f == fold:
                flagged[i] = any(maxima[kind][i] >= thresholds[kind] for kind in KINDS)
    return task_scores(responses, flagged)


def train(data: Path, verbose: bool = True) -> dict[str, object]:
    rows, responses, folds = build_rows(data)
    if verbose:
        for regime in REGIMES:
            part = [r for r in rows if r.regime == regime]
            print(
                f"tune {regime}: {len(part)} claims, {sum(r.y for r in part)} hallucinated "
                f"({len(responses)} responses in all)"
            )
    oof = [0.0] * len(rows)
    for fold in range(FOLDS):
        for regime in REGIMES:
            train_rows = [r for r in rows if r.fold != fold and r.regime == regime and not r.ruled]
            model = fit_regime(train_rows)
            for i, r in enumerate(rows):
                if r.fold == fold and r.regime == regime:
                    oof[i] = probability(model, r.x)
    maxima = response_maxima(rows, oof, len(responses))
    best, thresholds = choose_thresholds(maxima, responses)
    if verbose:
        s = response_scores(maxima, responses, thresholds)
        print(
            f"chosen thresholds {thresholds} (out-of-fold, tune part): obj={best:.3f} "
            + " ".join(f"{k}_bacc={v.bacc:.3f}" for k, v in s.items())
            + f" f1={s['overall'].f1:.3f}"
        )
        for task in (*TASKS, "overall"):
            print("  " + s[task].row(task))
        nested = nested_scores(maxima, responses, folds)
        print(
            "nested (thresholds chosen on the other folds): "
            + " ".join(f"{k}_bacc={v.bacc:.3f}" for k, v in nested.items())
            + f" f1={nested['overall'].f1:.3f}"
        )
    out: dict[str, object] = {
        "about": (
            "Logistic regressions over the offline judge's claim features (standardised), one "
            "for prose contexts and one for JSON records, trained by scripts/train_offline.py on "
            "the tune half of RAGTruth ragtruth-dev (sources with sha256(source_id) mod 2 != 0), "
            "on the claims with no finding whose every content word their evidence states. "
            "Output: the probability that a claim is hallucinated. Each kind of case (an answer "
            "to a question, prose with no question, a record) names its model and thresholds: at "
            "or above `threshold` a grounded claim is not SUPPORTED."
        ),
        "features": list(FEATURES),
        "models": {},
        "kinds": {},
    }
    for regime in REGIMES:
        model = fit_regime([r for r in rows if r.regime == regime and not r.ruled])
        if verbose:
            print(f"{regime} weights:")
            pairs = zip(FEATURES, model["weights"], strict=True)  # type: ignore[call-overload]
            for name, weight in sorted(pairs, key=lambda kv: -abs(kv[1])):
                print(f"    {name:<22} {weight:+.3f}")
        out["models"][regime] = {  # type: ignore[index]
            "means": [round(v, DIGITS) for v in model["means"]],  # type: ignore[attr-defined]
            "stds": [round(v, DIGITS) for v in model["stds"]],  # type: ignore[attr-defined]
            "bias": round(model["bias"], DIGITS),  # type: ignore[call-overload]
            "weights": [round(v, DIGITS) for v in model["weights"]],  # type: ignore[attr-defined]
            "training": {
                "claims": sum(r.regime == regime and not r.ruled for r in rows),
                "hallucinated_claims": sum(r.y for r in rows if r.regime == regime and not r.ruled),
            },
        }
    for kind in KINDS:
        if verbose:
            own = [r for r in rows if r.kind == kind]
            grounded = [r for r in own if not r.ruled]
            print(
                f"{kind}: threshold {thresholds[kind]}; {len(grounded)} of {len(own)} claims "
                f"grounded ({len(grounded) / max(len(own), 1):.3f}), "
                f"{sum(r.y for r in grounded)} of them hallucinated (of {sum(r.y for r in own)})"
            )
        out["kinds"][kind] = {  # type: ignore[index]
            "model": model_of_kind(kind),
            "threshold": thresholds[kind],
        }
    out["training"] = {
        "responses": len(responses),
        "l2": L2,
        "folds": FOLDS,
    }
    return out


def render(model: dict[str, object]) -> str:
    return json.dumps(model, indent=1) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--check", action="store_true", help="fail if the shipped file differs")
    args = parser.parse_args(argv)
    text = render(train(args.data, verbose=not args.check))
    if args.check:
        shipped = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if shipped != text:
            sys.exit(f"{args.out} differs from what scripts/train_offline.py produces")
        print(f"{args.out} is reproduced exactly")
        return
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
