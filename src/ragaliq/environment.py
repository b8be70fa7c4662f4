"""What the action honours of the job's environment, and what it takes only from its inputs.

Any step that ran before the action in the same job can add variables through ``$GITHUB_ENV``,
and the action's container gets them all. In ``gate`` mode the action therefore removes, from its
own process before any library reads them, every variable that could

- send a credential somewhere else: endpoints (``ANTHROPIC_BASE_URL``, ``AWS_ENDPOINT_URL*``)
  and proxies (``HTTPS_PROXY``, ``ALL_PROXY``, ...);
- make TLS trust another server: CA bundles (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ...),
  OpenSSL's config and engines, TLS key logs;
- run a program or read a planted file: AWS config and credential files and profiles
  (``credential_process``), Google's executable-sourced credentials, git's ``GIT_*``, ``NETRC``;
- sign a planted judge cache: ``RAGALIQ_CACHE_SECRET``.

What a gate needs of these comes from the action's inputs instead, which only the workflow file
sets: ``anthropic-base-url``, ``https-proxy``, ``ca-bundle``, ``cache-secret``. AWS credentials are
honoured as plain values only (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_BEARER_TOKEN_BEDROCK``, and the region), as
``aws-actions/configure-aws-credentials`` exports them; ``GOOGLE_APPLICATION_CREDENTIALS`` only
when its file names no program to run. ``HOME`` becomes an empty private folder, so no
``~/.aws``, ``~/.config/gcloud``, ``~/.netrc`` or ``~/.gitconfig`` an earlier step wrote is read.

This is defence in depth: code that ran before the gate on the same runner can also replace
binaries or preload libraries, which no check inside the gate can undo. The gate's real
protection is that it runs on a fresh runner that never ran the pull request's code
(``docs/security.md``).

In ``update-baseline`` mode (main's own code, on a push) the environment is honoured as it is,
except for the few variables nothing legitimate sets (OpenSSL's config, TLS key logs).

This module imports nothing but the standard library: it runs before anything that opens a
connection or loads OpenSSL.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = [
    "AWS_HONOURED",
    "Hardening",
    "harden_action_environment",
    "is_dropped_in_gate",
]

ENDPOINTS = (
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
)
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
"""Compared without case: libraries read ``https_proxy`` as well."""
TLS = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
)
ALWAYS_DROPPED = ("OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "SSLKEYLOGFILE")
"""Dropped in every mode: they load code into OpenSSL or write the TLS keys out."""
OTHERS = (
    "RAGALIQ_CACHE_SECRET",
    "NETRC",
    "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
    "GCE_METADATA_HOST",
    "GCE_METADATA_IP",
    "GCE_METADATA_ROOT",
    "CLOUDSDK_CONFIG",
)
AWS_HONOURED = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    }
)
"""The AWS variables a gate honours: plain values, which can neither run a program nor point
at a file or an endpoint."""
GOOGLE_CREDENTIALS = "GOOGLE_APPLICATION_CREDENTIALS"
MAX_CA_BUNDLE_BYTES = 4 * 1024 * 1024


RUNNER_SETTINGS = frozenset(
    {"GIT_STRATEGY", "GIT_DEPTH", "GIT_CHECKOUT", "GIT_CLEAN_FLAGS", "GIT_SUBMODULE_STRATEGY"}
)
"""How a GitLab job asks its runner to check out (or not): dropped like every ``GIT_*``, but
the job's own definition, so not worth a notice."""


@dataclass(frozen=True, kw_only=True)
class Hardening:
    """What :func:`harden_action_environment` did to the environment."""

    gate: bool
    """Whether the gate's rules applied (``mode: gate``)."""
    dropped: tuple[str, ...] = ()
    """The names of the variables removed, sorted."""
    taken_from_inputs: tuple[str, ...] = ()
    """Inputs that set a variable in place of the job's (``https-proxy``, ...)."""
    problem: str | None = None
    """An input that could not be honoured (a CA bundle that cannot be read): the gate stops."""

    @property
    def notices(self) -> tuple[str, ...]:
        """One line on what was dropped, for the log, the summary and the comment."""
        shown = [n for n in self.dropped if n not in RUNNER_SETTINGS]
        if not shown:
            return ()
        return (
            "The gate ignored these variables of the job's environment: "
            + ", ".join(shown)
            + ". An earlier step can set them (on GitHub, through $GITHUB_ENV), so in gate mode "
            "endpoints, proxies, CA bundles, credential files and the cache secret come only "
            "from the gate's own inputs (the action's anthropic-base-url, https-proxy, "
            "ca-bundle, cache-secret).",
        )


def is_dropped_in_gate(name: str, value: str = "") -> bool:
    """Whether a gate removes the variable ``name`` (with ``value``) from its environment."""
    upper = name.upper()
    if upper in PROXIES or name in (*ENDPOINTS, *TLS, *ALWAYS_DROPPED, *OTHERS):
        return True
    if name.startswith("GIT_"):
        return True
    if name.startswith("AWS_"):
        return name not in AWS_HONOURED
    if name == GOOGLE_CREDENTIALS:
        return not _harmless_google_credentials(value)
    return False


def harden_action_environment(
    environ: MutableMapping[str, str], mode: str | None = None
) -> Hardening:
    """Make ``environ`` (``os.environ`` in the action) safe for the mode its inputs name.

    ``mode`` is the mode when it is not an input (a GitLab job's own options). Never raises: a
    problem with an input is returned, for the action to report.
    """
    gate = (mode or _input(environ, "mode", "gate")) != "update-baseline"
    names = [n for n in environ if n in ALWAYS_DROPPED]
    if gate:
        names += [n for n in environ if is_dropped_in_gate(n, environ[n])]
    dropped = tuple(sorted({n for n in names if environ.get(n, "").strip()}))
    for name in set(names):
        environ.pop(name, None)
    if not gate:
        return Hardening(gate=False, dropped=dropped)
    environ["HOME"] = tempfile.mkdtemp(prefix="ragaliq-home-")
    taken: list[str] = []
    proxy = _input(environ, "https-proxy")
    if proxy:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            environ[name] = proxy
        taken.append("https-proxy")
    secret = _input(environ, "cache-secret")
    if secret:
        environ["RAGALIQ_CACHE_SECRET"] = secret
        taken.append("cache-secret")
    problem = None
    bundle = _input(environ, "ca-bundle")
    if bundle:
        found, problem = _ca_bundle(environ, bundle)
        if found is not None:
            for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"):
                environ[name] = found
            taken.append("ca-bundle")
    return Hardening(gate=True, dropped=dropped, taken_from_inputs=tuple(taken), problem=problem)


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(f"INPUT_{name.upper()}", "").strip() or default


def _ca_bundle(env: Mapping[str, str], raw: str) -> tuple[str | None, str | None]:
    """The ``ca-bundle`` input as a private copy of the workspace's file; or why it is refused.

    The file must be a regular file inside the workspace (the base commit's checkout), reached
    through no symbolic link; it is copied before anything else can change it.
    """
    path = PurePosixPath(raw)
    if path.is_absolute() or ".." in path.parts or raw.startswith("~"):
        return None, f"input ca-bundle: {raw!r} must be a path inside the repository"
    current = Path(env.get("GITHUB_WORKSPACE") or ".")
    for part in path.parts:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except OSError:
            return None, f"input ca-bundle: {raw} is not in the workspace"
        if stat.S_ISLNK(mode):
            return None, f"input ca-bundle: {raw} passes through a symbolic link"
    if not stat.S_ISREG(mode):
        return None, f"input ca-bundle: {raw} is not a regular file"
    data = current.read_bytes()[: MAX_CA_BUNDLE_BYTES + 1]
    if len(data) > MAX_CA_BUNDLE_BYTES or b"-----BEGIN CERTIFICATE-----" not in data:
        return None, f"input ca-bundle: {raw} is not a PEM bundle of certificates"
    fd, copy = tempfile.mkstemp(prefix="ragaliq-ca-", suffix=".pem")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return copy, None


def _harmless_google_credentials(path: str) -> bool:
    """Whether a Google credentials file names no program to run (an executable source)."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and not _names_a_program(data)


def _names_a_program(value: object) -> bool:
    if isinstance(value, dict):
        return "executable" in value or any(_names_a_program(v) for v in value.values())
    if isinstance(value, list):
        return any(_names_a_program(v) for v in value)
    return False
