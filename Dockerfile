# RagaliQ Gate: the image GitHub builds for `uses: <owner>/ragaliq-gate@<ref>` (action.yml: runs.image).
#
# The base image is pinned by exact version tag. Pin it by digest as well once it can be resolved
# (`docker buildx imagetools inspect python:3.11.11-slim-bookworm`), as
# `python:3.11.11-slim-bookworm@sha256:<digest>`, and let Dependabot (package-ecosystem: docker) bump
# both together.

# ---- Stage 1: build wheels of the project and of its dependencies ----
FROM python:3.11.11-slim-bookworm AS build

WORKDIR /src
# README.md is the wheel's long description (pyproject: readme); templates/ is force-included
# into the wheel as ragaliq/templates.
COPY pyproject.toml README.md ./
COPY src ./src
COPY templates ./templates
RUN pip wheel --no-cache-dir --disable-pip-version-check --wheel-dir /wheels .

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

# git reads the baseline from the pull request's base commit. The checkout mounted at
# /github/workspace is owned by the runner's user, not by the container's root, so git must be
# told to trust it (safe.directory) or it refuses with "detected dubious ownership".
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

# Install offline from the wheels built above: the image gets exactly what stage 1 resolved.
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels /wheels/ragaliq_gate-*.whl \
    && rm -rf /wheels \
    && ragaliq --version

# No USER: GitHub requires Docker actions to run as the default user, root; any other user could
# not write to the mounted workspace (/github/workspace) or the GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY files. No WORKDIR either: GitHub mounts the workspace at /github/workspace
# and makes it the working directory itself.
ENTRYPOINT ["ragaliq", "action"]
