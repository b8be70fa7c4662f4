"""A newcomer's first hour, played from the README's own adoption steps in a fresh repository.

The steps are read from the README (between its ``adoption`` markers) and run one by one in a
new git repository whose code answers questions about returning bikes: the install line, mapped
from the repository's address to this checkout, installs the package into an empty virtual
environment (its dependencies come from the one running the tests); `python produce.py` is the
team's own pipeline, written here; the change on the branch invents a fact, as a pull request
might. Every other line runs as the README writes it: main's baseline is recorded for main's own
commit, and the gate on the branch compares with it. `ragaliq gate` must then fail and list the
invented claim with the id a reviewer would accept it by.

The same steps are played again with answers that cite chunks by id and label the relevant ones,
with citation accuracy, recall at k, ``gate.fail_on_lost_chunks`` and
``gate.fail_on_miscited_claims`` switched on in what ``init`` wrote: a branch whose retriever drops
a labelled chunk fails naming the chunk, and one whose answer cites the wrong chunk fails naming
the claim, in the terminal and in the comment.

And once more with ``gate.fail_on_unchecked_claims`` switched on, keyless: a claim the offline
judge cannot check on main stays "still unchecked", never new, when the branch's retriever grows
its case's context, and the gate passes; a claim it cannot check, new in another case, fails it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from ragaliq.gate.acceptance import claim_id

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
REPOSITORY_URL = "git+https://github.com/ragaliq/ragaliq-gate"
"""The address the README installs from before the first release."""

CONTEXT = "Unused bikes may be returned within 30 days of delivery for a full refund."
ANSWERS = [
    {
        "id": "return-window",
        "query": "How long do I have to return a bike?",
        "context": [CONTEXT, "Bikes that were ridden outdoors cannot be returned."],
        "response": "You can return an unused bike within 30 days of delivery for a full refund.",
    },
    {
        "id": "service-interval",
        "query": "How often should my bike be serviced?",
        "context": ["We recommend a full service every 12 months or 3,000 km."],
        "response": "We recommend a full service every 12 months or 3,000 km.",
    },
    {
        "id": "frame-warranty",
        "query": "How long is the frame warranty?",
        "context": ["Every frame we sell carries a 5-year warranty against defects."],
        "response": "Every frame carries a 5-year warranty against defects.",
    },
]
INVENTED = "You can return an unused bike within 60 days of delivery for a full refund."

PIPELINE = """\
import json

from ragaliq import DatasetWriter

with DatasetWriter("rag_outputs.jsonl") as writer:
    for answer in json.load(open("answers.json", encoding="utf-8")):
        writer.add(**answer)
"""


def adoption_steps() -> list[str]:
    """The commands of the README's adoption steps, in order, without their comments."""
    section = README.split("<!-- adoption:start -->", 1)[1].split("<!-- adoption:end -->", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    lines = [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_readme_adoption_steps_are_the_path_this_test_plays():
    steps = adoption_steps()
    assert steps[0] == f'pip install "{REPOSITORY_URL}"'
    commands = [" ".join(step.split()[:3]) for step in steps]
    assert commands.index("ragaliq init") < commands.index("ragaliq baseline record")
    assert "python produce.py" in steps
    assert steps[-1].startswith("ragaliq gate")
    branch = next(i for i, step in enumerate(steps) if step.startswith("git switch -c"))
    assert branch < len(steps) - 1 and "python produce.py" in steps[branch:]
    # Main's baseline is recorded for main's commit: after the set-up is committed, before the
    # branch is cut.
    commit = next(i for i, step in enumerate(steps) if "git commit" in step)
    assert commit < commands.index("ragaliq baseline record") < branch


@pytest.fixture
def newcomer(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to play a repository")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # The package itself is installed from this checkout by the README's line; what it depends
    # on comes from the environment running the tests, through a path file.
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (purelib / "dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    repo = tmp_path / "bike-shop"
    repo.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "RAGALIQ_", "GIT_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path),
        GIT_AUTHOR_NAME="Newcomer",
        GIT_AUTHOR_EMAIL="newcomer@example.com",
        GIT_COMMITTER_NAME="Newcomer",
        GIT_COMMITTER_EMAIL="newcomer@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )

    def shell(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, shell=True, cwd=repo, env=env, capture_output=True, text=True, check=False
        )

    for command in ("git init -q -b main", "git add -A", "git commit -q -m 'The bike shop bot'"):
        if command == "git add -A":
            (repo / "produce.py").write_text(PIPELINE, encoding="utf-8")
            (repo / "answers.json").write_text(json.dumps(ANSWERS, indent=1), encoding="utf-8")
        assert shell(command).returncode == 0
    return repo, venv, shell


def test_a_newcomer_gates_a_change_that_invents_a_fact_from_the_readme_alone(newcomer):
    repo, venv, shell = newcomer
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    changed = False
    main = ""
    for step in adoption_steps():
        command = step
        if step.startswith("pip install"):
            command = (
                f"{sys.executable} -m pip --python {venv / 'bin' / 'python'} install --quiet "
                f"--no-deps --no-build-isolation --no-index {ROOT}"
            )
        elif step == "python produce.py" and changed:
            answers = json.loads((repo / "answers.json").read_text(encoding="utf-8"))
            answers[0]["response"] = INVENTED
            (repo / "answers.json").write_text(json.dumps(answers, indent=1), encoding="utf-8")
        done = shell(command)
        outputs.append((step, done))
        last = step.startswith("ragaliq gate")
        assert done.returncode == (1 if last else 0), f"{step}\n{done.stdout}\n{done.stderr}"
        if step.startswith("pip install"):
            installed = shutil.which("ragaliq", path=str(venv / "bin"))
            assert installed is not None, "the install gives the ragaliq command"
        if step.startswith("git switch -c"):
            changed = True
        if step.startswith("ragaliq baseline record"):
            main = shell("git rev-parse HEAD").stdout.strip()
            assert f"as the baseline of {main[:12]}" in done.stdout, done.stdout
    gate = outputs[-1][1]
    new_id = claim_id("return-window", INVENTED)
    assert f"  new in return-window: {INVENTED} [contradicted] id {new_id}" in gate.stdout
    assert "failed: 1 newly hallucinated claim" in gate.stdout
    assert f"the baseline of the base commit {main[:12]}, read from the folder" in gate.stdout
    comment = (repo / ".ragaliq" / "comment.md").read_text(encoding="utf-8")
    assert "RagaliQ Gate failed" in comment and new_id in comment
    assert f"Baseline: commit {main[:12]}" in comment
    init = next(done for step, done in outputs if step.startswith("ragaliq init"))
    assert "wrote ragaliq.yaml" in init.stdout


# --- cited answers with chunk ids and labels ----------------------------------------------------

RETURNS = "Unused bikes may be returned within 30 days of delivery for a full refund."
RIDDEN = "Bikes that were ridden outdoors cannot be returned."
SERVICE = "We recommend a full service every 12 months or 3,000 km."
CITED = [
    {
        "id": "return-window",
        "query": "How long do I have to return a bike?",
        "context": [{"id": "returns#1", "text": RETURNS}, {"id": "returns#2", "text": RIDDEN}],
        "response": "Unused bikes may be returned within 30 days of delivery [returns#1].",
        "relevant_chunks": {"returns#1": 2, "returns#2": 1},
    },
    {
        "id": "service-interval",
        "query": "How often should my bike be serviced?",
        "context": [{"id": "service#1", "text": SERVICE}, {"id": "returns#2", "text": RIDDEN}],
        "response": "We recommend a full service every 12 months or 3,000 km [service#1].",
        "relevant_chunks": {"service#1": 2},
    },
]


def switched_on(config: str) -> str:
    """``ragaliq.yaml`` as ``init`` wrote it, with citation accuracy, recall at k and the two
    settings by which retrieval and citations fail the gate uncommented."""
    for section in ("citation_accuracy", "recall_at_k"):
        config, found = re.subn(
            rf"(?m)^  # ({section}:.*)\n  #   (enabled: true)\n  #   (threshold: .*)$",
            r"  \1\n    \2\n    \3",
            config,
        )
        assert found == 1, section
    for option in ("fail_on_lost_chunks", "fail_on_miscited_claims"):
        assert f"  # {option}: true\n" in config
        config = config.replace(f"  # {option}: true\n", f"  {option}: true\n")
    return config


def lose_a_chunk(answers: list[dict]) -> None:
    answers[0]["context"] = answers[0]["context"][:1]  # the retriever drops returns#2


def cite_the_wrong_chunk(answers: list[dict]) -> None:
    answers[1]["response"] = answers[1]["response"].replace("[service#1]", "[returns#2]")


@pytest.mark.parametrize(
    ("change", "failure"),
    [
        (
            lose_a_chunk,
            "failed: 1 lost relevant chunk (gate.fail_on_lost_chunks: true): return-window: "
            "chunk returns#2 (relevance 1): rank 2 → not retrieved",
        ),
        (
            cite_the_wrong_chunk,
            "1 newly miscited claim (gate.fail_on_miscited_claims: true): service-interval: We "
            "recommend a full service every 12 months or 3,000 km [returns#2]. (cites chunk "
            "returns#2; chunk service#1 backs it)",
        ),
    ],
    ids=["lost-chunk", "miscited-claim"],
)
def test_a_newcomer_with_cited_labelled_answers_fails_on_a_lost_chunk_or_a_miscited_claim(
    newcomer, change, failure
):
    repo, venv, shell = newcomer
    (repo / "answers.json").write_text(json.dumps(CITED, indent=1), encoding="utf-8")
    changed = False
    gate: subprocess.CompletedProcess[str] | None = None
    for step in adoption_steps():
        command = step
        if step.startswith("pip install"):
            command = (
                f"{sys.executable} -m pip --python {venv / 'bin' / 'python'} install --quiet "
                f"--no-deps --no-build-isolation --no-index {ROOT}"
            )
        elif step == "python produce.py" and changed:
            answers = json.loads((repo / "answers.json").read_text(encoding="utf-8"))
            change(answers)
            (repo / "answers.json").write_text(json.dumps(answers, indent=1), encoding="utf-8")
        done = shell(command)
        last = step.startswith("ragaliq gate")
        assert done.returncode == (1 if last else 0), f"{step}\n{done.stdout}\n{done.stderr}"
        if step == "ragaliq init":
            config = repo / "ragaliq.yaml"
            config.write_text(switched_on(config.read_text(encoding="utf-8")), encoding="utf-8")
        if step.startswith("git switch -c"):
            changed = True
        if last:
            gate = done
    assert gate is not None
    assert failure in gate.stdout, gate.stdout
    comment = (repo / ".ragaliq" / "comment.md").read_text(encoding="utf-8")
    # as the comment reads once rendered, without the space that keeps "#2" from linking an issue
    shown = html.unescape(comment).replace("\\", "").replace("\u200b", "")
    assert f"- {failure.removeprefix('failed: ')}" in shown, comment


# --- a claim the offline judge cannot check, on main and on the branch --------------------------

UNCHECKED = "Each frame is painted by hand in our workshop."
"""An invented detail with no figure or name: the offline judge can neither ground nor fault it."""
WELDED = "Frames are welded from aluminium tubing."
NEWLY_UNCHECKED = "Every service includes a friendly chat with the mechanic."


def test_a_newcomer_with_unchecked_claims_on_fails_only_on_a_newly_unchecked_claim(newcomer):
    repo, venv, shell = newcomer
    answers = json.loads(json.dumps(ANSWERS))
    answers[2]["response"] += f" {UNCHECKED}"
    (repo / "answers.json").write_text(json.dumps(answers, indent=1), encoding="utf-8")
    changed = False
    gate: subprocess.CompletedProcess[str] | None = None
    for step in adoption_steps():
        command = step
        if step.startswith("pip install"):
            command = (
                f"{sys.executable} -m pip --python {venv / 'bin' / 'python'} install --quiet "
                f"--no-deps --no-build-isolation --no-index {ROOT}"
            )
        elif step == "python produce.py" and changed:
            # the retriever now also finds a sentence about the frames; the answer is unchanged
            answers[2]["context"].append(WELDED)
            (repo / "answers.json").write_text(json.dumps(answers, indent=1), encoding="utf-8")
        done = shell(command)
        assert done.returncode == 0, f"{step}\n{done.stdout}\n{done.stderr}"
        if step == "ragaliq init":
            config = repo / "ragaliq.yaml"
            text = config.read_text(encoding="utf-8")
            assert "  # fail_on_unchecked_claims: true\n" in text
            text = text.replace(
                "  # fail_on_unchecked_claims: true\n", "  fail_on_unchecked_claims: true\n"
            )
            config.write_text(text, encoding="utf-8")
        if step.startswith("git switch -c"):
            changed = True
        if step.startswith("ragaliq gate"):
            gate = done
    assert gate is not None
    assert "still unchecked (unchecked on the baseline too, not new): 1 claim still unchecked" in (
        gate.stdout
    ), gate.stdout
    assert f"  frame-warranty: still unchecked {UNCHECKED}" in gate.stdout
    assert "could not be checked offline" not in gate.stdout
    assert "failed:" not in gate.stdout

    # A claim the offline judge cannot check, new in another case, fails the same gate.
    answers[1]["response"] += f" {NEWLY_UNCHECKED}"
    (repo / "answers.json").write_text(json.dumps(answers, indent=1), encoding="utf-8")
    assert shell("python produce.py").returncode == 0
    gate = shell("ragaliq gate")
    assert gate.returncode == 1, f"{gate.stdout}\n{gate.stderr}"
    assert f"  unchecked in service-interval: {NEWLY_UNCHECKED}" in gate.stdout, gate.stdout
    assert f"  frame-warranty: still unchecked {UNCHECKED}" in gate.stdout
    assert (
        "failed: 1 new claim could not be checked offline (gate.fail_on_unchecked_claims: true)"
        in gate.stdout
    )
