"""The action's image, built from the Dockerfile, named by digest as a release's action.yml names
it (scripts/release_build pin), and run the way the GitHub runner runs it.

As the runner does for a `runs.using: docker` step: the checkout, owned by the runner's user, is
mounted at /github/workspace (the working directory); the event file, the home folder and the
GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files come from the runner's temp folder; every input declared
in action.yml is passed as INPUT_<NAME> with hyphens kept (its default unless given); values
travel in the environment (`docker run -e NAME`); the container runs as root. The fake GitHub and
Anthropic APIs listen on the host's 127.0.0.1, so the container uses the host's network.

Every file the container creates or changes in the workspace must belong to the runner's user
(uid 1001 when the test runs as root; the test's own user otherwise), and the runner must be able
to commit the baseline, check out another commit and delete everything, as the job's later steps
and the next job's checkout do.

Skipped, with the reason, where no Docker daemon answers (CI's fresh machine) or the base image is
neither present nor pullable. CONTRIBUTING.md ("The Docker stand-in") says how to get a daemon and
a stand-in base image where the image registry cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.e2e.workspace import (
    ARTIFACT,
    CONFIG,
    KEY,
    REGRESSED,
    REPO,
    RUN_ID,
    TOKEN,
    cases,
    parse_outputs,
    pr_event,
    regress,
    write_dataset,
    zip_files,
)
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.github_server import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
TAG = "ragaliq-gate:e2e-test"
RUNNER_UID = 1001
"""The GitHub runner's user, which owns the checkout (when this test runs as root)."""


STANDIN = "../shared/tools/docker-standin/standin.sh up"
"""The Docker stand-in, in the shared tools folder beside this project (CONTRIBUTING.md)."""
HOW_TO_GET_DOCKER = (
    "start a Docker daemon (`sudo dockerd &`, or Docker Desktop); where no image registry "
    f"answers, the Docker stand-in installs one and builds the base image: `sudo {STANDIN}` "
    "(CONTRIBUTING.md, The Docker stand-in)"
)

BUILD_IT = (
    f"the Docker stand-in builds it without a registry: `sudo {STANDIN}` (CONTRIBUTING.md, The "
    "Docker stand-in)"
)


def _docker_unavailable() -> str | None:
    if shutil.which("docker") is None:
        return f"no docker CLI: {HOW_TO_GET_DOCKER}"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
    except subprocess.TimeoutExpired:
        return f"the Docker daemon does not answer within 30 s: {HOW_TO_GET_DOCKER}"
    if info.returncode != 0:
        return f"no Docker daemon answers: {HOW_TO_GET_DOCKER}"
    return None


_NO_DOCKER = _docker_unavailable()
pytestmark = pytest.mark.skipif(_NO_DOCKER is not None, reason=_NO_DOCKER or "")


def base_images() -> list[str]:
    """The images the Dockerfile's stages start from (not its own stages)."""
    stages: set[str] = set()
    images: list[str] = []
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        match = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", line.strip(), re.IGNORECASE)
        if match is None:
            continue
        if match[1] not in stages and match[1] not in images:
            images.append(match[1])
        if match[2]:
            stages.add(match[2])
    return images


def _missing_base_image() -> str | None:
    for image in base_images():
        present = subprocess.run(
            ["docker", "image", "inspect", image], capture_output=True, check=False
        )
        if present.returncode == 0:
            continue
        try:
            pulled = subprocess.run(
                ["docker", "pull", image], capture_output=True, check=False, timeout=300
            )
        except subprocess.TimeoutExpired:
            return f"the base image {image} is not present and pulling it timed out; {BUILD_IT}"
        if pulled.returncode != 0:
            return f"the base image {image} is neither present nor pullable; {BUILD_IT}"
    return None


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The action's image, built from this checkout's Dockerfile, as its release names it."""
    missing = _missing_base_image()
    if missing is not None:
        pytest.skip(missing)
    env = dict(os.environ)
    buildx = subprocess.run(["docker", "buildx", "version"], capture_output=True, check=False)
    if buildx.returncode != 0:
        env["DOCKER_BUILDKIT"] = "0"  # no BuildKit plugin: the legacy builder
    started = time.monotonic()
    build = subprocess.run(
        [
            "docker",
            "build",
            "--network",
            "host",
            "-t",
            TAG,
            "-f",
            str(ROOT / "Dockerfile"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    size = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Size}}", TAG],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"image {TAG}: built in {time.monotonic() - started:.1f} s, {int(size) / 1e6:.1f} MB")
    return released_image(TAG, tmp_path_factory.mktemp("release"))


def released_image(tag: str, folder: Path) -> str:
    """The image a release's action.yml names, as the release workflow writes it for ``tag``.

    The release pins the pushed image by its registry digest; nothing is pushed here, so the
    image's content digest (its ID) stands in, and the daemon runs the image by it as the runner
    runs ``docker://<name>@sha256:<digest>`` after pulling it.
    """
    image_id = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    action = folder / "action.yml"
    shutil.copyfile(ROOT / "action.yml", action)
    subprocess.run(
        [
            str(ROOT / "scripts/release_build"),
            "pin",
            f"{tag.split(':')[0]}@{image_id}",
            str(action),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    runs = yaml.safe_load(action.read_text(encoding="utf-8"))["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == f"docker://{tag.split(':')[0]}@{image_id}"
    return runs["image"].removeprefix("docker://").split("@", 1)[1]


@dataclass(frozen=True)
class Runner:
    """Who the runner is: the owner of the checkout, and how to act as it."""

    uid: int
    gid: int
    home: Path

    @property
    def as_another_user(self) -> bool:
        return os.geteuid() != self.uid

    def run(self, *args: str, cwd: Path) -> str:
        """Run a command as the runner's user (as a later step of the job would)."""
        proc = subprocess.run(
            list(args),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            env={
                "PATH": os.environ["PATH"],
                "HOME": str(self.home),
                "GIT_CONFIG_NOSYSTEM": "1",
            },
            user=self.uid if self.as_another_user else None,
            group=self.gid if self.as_another_user else None,
            extra_groups=[] if self.as_another_user else None,
        )
        assert proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"
        return proc.stdout.strip()

    def git(self, workspace: Path, *args: str) -> str:
        return self.run(
            "git", "-c", "user.email=ci@example.com", "-c", "user.name=CI", *args, cwd=workspace
        )


@dataclass(frozen=True)
class Run:
    code: int
    log: str
    outputs: dict[str, str]
    summary: str
    seconds: float
    written: dict[str, os.stat_result]
    """Every workspace path the container created or changed, relative to the workspace."""


def snapshot(root: Path) -> dict[str, os.stat_result]:
    seen = {".": root.lstat()}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            seen[path.relative_to(root).as_posix()] = path.lstat()
    return seen


def _changed(before: os.stat_result, after: os.stat_result) -> bool:
    keys = ("st_ino", "st_uid", "st_gid", "st_mode")
    if not stat.S_ISDIR(after.st_mode):
        keys += ("st_size", "st_mtime_ns")
    return any(getattr(before, k) != getattr(after, k) for k in keys)


def declared_inputs() -> dict[str, str]:
    """Every input of action.yml with its default, as the runner passes them all."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}


class GitHubLikeRunner:
    """`docker run` of the action's image with the runner's mounts and environment."""

    def __init__(self, image: str, base: Path, runner: Runner, github: FakeGitHub) -> None:
        self.image = image
        self.base = base
        self.runner = runner
        self.github = github
        self.workspace = base / "workspace"
        self.runs = 0

    def give(self, path: Path) -> None:
        os.chown(path, self.runner.uid, self.runner.gid)

    def run(self, *, event: dict, event_name: str, env: dict[str, str], **inputs: str) -> Run:
        self.runs += 1
        temp = self.base / f"_temp{self.runs}"
        home, workflow, commands = temp / "_github_home", temp / "_github_workflow", temp / "fc"
        for folder in (temp, home, workflow, commands):
            folder.mkdir()
            self.give(folder)
        (workflow / "event.json").write_text(json.dumps(event), encoding="utf-8")
        key = uuid.uuid4().hex[:8]
        for name in ("set_output", "step_summary", "set_env", "add_path", "save_state"):
            (commands / f"{name}_{key}").touch()
            self.give(commands / f"{name}_{key}")
        sha = self.runner.git(self.workspace, "rev-parse", "HEAD")
        given = {**declared_inputs(), "github-token": TOKEN, **inputs}
        variables = {
            "HOME": "/github/home",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": "/github/workspace",
            "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_SHA": sha,
            "GITHUB_RUN_ID": str(RUN_ID),
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_API_URL": self.github.base_url,
            "GITHUB_OUTPUT": f"/github/file_commands/set_output_{key}",
            "GITHUB_STEP_SUMMARY": f"/github/file_commands/step_summary_{key}",
            "GITHUB_ENV": f"/github/file_commands/set_env_{key}",
            "GITHUB_PATH": f"/github/file_commands/add_path_{key}",
            "GITHUB_STATE": f"/github/file_commands/save_state_{key}",
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP": "/home/runner/work/_temp",
            **{f"INPUT_{name.replace(' ', '_').upper()}": v for name, v in given.items()},
            **env,
        }
        cmd = ["docker", "run", "--rm", "--workdir", "/github/workspace", "--network", "host"]
        for name in variables:
            cmd += ["-e", name]
        cmd += [
            "-v",
            f"{home}:/github/home",
            "-v",
            f"{workflow}:/github/workflow",
            "-v",
            f"{commands}:/github/file_commands",
            "-v",
            f"{self.workspace}:/github/workspace",
            self.image,
        ]
        before = snapshot(self.workspace)
        started = time.monotonic()
        proc = subprocess.run(
            cmd,
            env={**os.environ, **variables},
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        seconds = time.monotonic() - started
        after = snapshot(self.workspace)
        written = {
            rel: st for rel, st in after.items() if rel not in before or _changed(before[rel], st)
        }
        return Run(
            code=proc.returncode,
            log=proc.stdout + proc.stderr,
            outputs=parse_outputs((commands / f"set_output_{key}").read_text(encoding="utf-8")),
            summary=(commands / f"step_summary_{key}").read_text(encoding="utf-8"),
            seconds=seconds,
            written=written,
        )


def not_the_runners(run: Run, runner: Runner) -> dict[str, str]:
    return {
        rel: f"{st.st_uid}:{st.st_gid}"
        for rel, st in run.written.items()
        if (st.st_uid, st.st_gid) != (runner.uid, runner.gid)
    }


def show(run: Run, what: str) -> None:
    owners = sorted({f"{st.st_uid}:{st.st_gid}" for st in run.written.values()})
    print(f"{what}: exit {run.code} in {run.seconds:.2f} s from docker run to exit")
    for rel, st in sorted(run.written.items()):
        print(f"  {st.st_uid}:{st.st_gid} {stat.filemode(st.st_mode)} {rel}")
    print(f"  owners of what the container wrote: {', '.join(owners) or 'nothing written'}")


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder the runner's user can reach (pytest's own are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="ragaliq-docker-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def runner(base: Path) -> Runner:
    if shutil.which("git") is None:
        pytest.skip("git is needed to play the workspace")
    if os.geteuid() == 0:
        uid, gid = RUNNER_UID, RUNNER_UID
    else:
        uid, gid = os.getuid(), os.getgid()
    home = base / "runner-home"
    home.mkdir()
    os.chown(home, uid, gid)
    return Runner(uid=uid, gid=gid, home=home)


def test_the_image_gates_a_pull_request_and_leaves_the_runner_its_files(image, base, runner):
    with FakeAnthropic(claude_like()) as anthropic, FakeGitHub(token=TOKEN) as github:
        gh = GitHubLikeRunner(image, base, runner, github)
        workspace = gh.workspace
        workspace.mkdir()
        gh.give(workspace)
        (workspace / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
        write_dataset(workspace, cases())
        for path in (workspace / "ragaliq.yaml", workspace / "rag_outputs.jsonl"):
            gh.give(path)
        runner.git(workspace, "init", "-q", "-b", "main")
        runner.git(workspace, "add", "ragaliq.yaml", "rag_outputs.jsonl")
        runner.git(workspace, "commit", "-q", "-m", "main: the RAG outputs")
        judge = {"anthropic-base-url": anthropic.base_url}  # a gate ignores ANTHROPIC_BASE_URL

        # On main: record the baseline. The action creates .ragaliq/ and its judge answers.
        main = gh.run(
            event={"ref": "refs/heads/main", "repository": {"full_name": REPO}},
            event_name="push",
            env={},
            **judge,
            **{"mode": "update-baseline", "anthropic-api-key": KEY, "html-report": "main.html"},
        )
        show(main, "update-baseline on main")
        assert main.code == 0, main.log
        assert main.outputs["baseline-path"] == ".ragaliq/baseline.json"
        assert main.outputs["report-path"] == ".ragaliq/report.json"
        assert main.outputs["passed"] == "true"
        assert {
            ".ragaliq",
            ".ragaliq/baseline.json",
            ".ragaliq/report.json",
            ".ragaliq/decision.json",
            ".ragaliq/answers.jsonl",
            "main.html",
        } <= set(main.written)
        assert not_the_runners(main, runner) == {}
        assert anthropic.count() > 0  # the Claude judge, from inside the container

        # A later step of the job commits the baseline the action wrote.
        runner.git(workspace, "add", ".ragaliq/baseline.json")
        runner.git(workspace, "commit", "-q", "-m", "main: record the baseline")
        base_sha = runner.git(workspace, "rev-parse", "HEAD")

        # A pull request that makes things up. Its produce job hands the dataset over as an
        # artifact; the gate job checks out the base commit on a fresh runner.
        write_dataset(workspace, regress(cases()))
        runner.git(workspace, "commit", "-q", "-am", "feature: a prompt that makes things up")
        head_sha = runner.git(workspace, "rev-parse", "HEAD")
        github.add_pull(REPO, 7, base_sha=base_sha, head_sha=head_sha)
        github.add_artifact(
            REPO,
            RUN_ID,
            ARTIFACT,
            zip_files({"rag_outputs.jsonl": (workspace / "rag_outputs.jsonl").read_bytes()}),
            head_sha=head_sha,
        )
        runner.git(workspace, "checkout", "-q", base_sha)
        # The gate job's runner is a fresh one: nothing the baseline job left (its HTML report)
        # is in its checkout of the base commit.
        (workspace / "main.html").unlink()
        pull = gh.run(
            event=pr_event(7, base_sha, head_sha),
            event_name="pull_request",
            env={},
            **judge,
            **{
                "anthropic-api-key": KEY,
                "html-report": "out/report.html",
                "artifact": ARTIFACT,
            },
        )
        show(pull, "gate on pull request 7")
        assert pull.code == 1, pull.log
        assert pull.outputs["passed"] == "false"
        assert int(pull.outputs["new-hallucinations"]) == REGRESSED
        assert set(json.loads(pull.outputs["scores"])) == {
            "faithfulness",
            "hallucination",
            "relevance",
        }
        assert pull.outputs["html-report-path"] == "out/report.html"
        comments = github.comments(REPO, 7)
        assert len(comments) == 1
        assert comments[0].body.splitlines()[0] == "<!-- ragaliq:comment id=default -->"
        assert "999 TB" in comments[0].body
        assert pull.outputs["comment-url"].endswith(f"#issuecomment-{comments[0].id}")
        assert "999 TB" in pull.summary
        assert KEY not in comments[0].body + pull.summary
        assert {"out", "out/report.html", ".ragaliq/report.json", ".ragaliq/decision.json"} <= set(
            pull.written
        )
        assert not_the_runners(pull, runner) == {}

        # The runner's next steps: back to main (git replaces files next to what the action
        # wrote), then the next job's checkout empties the workspace.
        runner.git(workspace, "checkout", "-q", base_sha)
        runner.run("find", ".", "-mindepth", "1", "-delete", cwd=workspace)
        assert list(workspace.iterdir()) == []
