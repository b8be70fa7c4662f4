# RagaliQ Gate: the action's image.
#
# A release (.github/workflows/release.yml) builds this image, pushes it to
# ghcr.io/<owner>/ragaliq-gate and names it by digest in the released action.yml
# (runs.image: docker://ghcr.io/<owner>/ragaliq-gate@sha256:...), so a user's job only pulls it:
# nothing is built or resolved at run time. Between releases action.yml says `image: Dockerfile`,
# which the runner builds (this repository's self-test, `uses: <owner>/ragaliq-gate@main`).
#
# Every package comes from a lock file with hashes: requirements/build.txt (what builds the wheel)
# and requirements/action.txt (what the action runs on), both made by pip-compile (see their
# headers) and kept current by Dependabot; pip installs them with --require-hashes --no-deps, and
# the project itself with --no-deps, so no dependency is resolved while building either.
#
# The base image is pinned by exact version tag, and Dependabot (package-ecosystem: docker) bumps
# it. Pin it by digest as well once it can be resolved
# (`docker buildx imagetools inspect python:3.11.11-slim-bookworm`), as
# `python:3.11.11-slim-bookworm@sha256:<digest>`.

# ---- Stage 1: the project's wheel ----
FROM python:3.11.11-slim-bookworm AS build

WORKDIR /src
COPY requirements/build.txt /tmp/build.txt
RUN pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --require-hashes --no-deps --only-binary=:all: -r /tmp/build.txt
# README.md is the wheel's long description (pyproject: readme); templates/ is force-included
# into the wheel as ragaliq/templates.
COPY pyproject.toml README.md ./
COPY src ./src
COPY templates ./templates
RUN python -m build --no-isolation --wheel --outdir /wheels .

# ---- Stage 2: the runtime image ----
FROM python:3.11.11-slim-bookworm

LABEL org.opencontainers.image.title="RagaliQ Gate" \
      org.opencontainers.image.description="A pre-merge quality gate for RAG systems" \
      org.opencontainers.image.licenses="MIT"

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# git reads the base commit's objects (ragaliq.git): in a scratch repository of the gate's own
# that borrows the checkout's object store, so git is never told to trust the checkout itself
# (no safe.directory) and nothing in its .git is obeyed.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

# The dependencies first, in their own layer: a change of the code alone rebuilds only the last.
COPY requirements/action.txt /tmp/action.txt
RUN pip install --no-cache-dir --require-hashes --no-deps --only-binary=:all: -r /tmp/action.txt \
    && rm /tmp/action.txt

# `pip check` fails the build when the lock no longer satisfies pyproject.toml's dependencies.
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-deps --no-index /wheels/ragaliq_gate-*.whl \
    && rm -rf /wheels \
    && pip check \
    && ragaliq --version

# No USER: GitHub requires Docker actions to run as the default user, root; any other user could
# not write to the mounted workspace (/github/workspace) or the GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY files. Files the action writes in the workspace are given to the
# workspace's owner (ragaliq._files.own_files_like). No WORKDIR either: GitHub mounts the
# workspace at /github/workspace and makes it the working directory itself.
# Python in isolated mode (-I): PYTHONPATH, PYTHONHOME, a user site and the working directory
# (the workspace) play no part in what it imports, whatever an earlier step put in the
# environment.
ENTRYPOINT ["python", "-I", "-m", "ragaliq", "action"]
