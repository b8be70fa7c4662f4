"""The release this copy of RagaliQ Gate was built as, blank when it is no release.

``scripts/release_build dist --release`` fills these in the tree it builds the sdist and the wheel
from; the file in the repository stays blank. ``ragaliq init`` reads them to pin what it writes:
the action by the release commit's full SHA (its ``action.yml`` runs the released image by
digest, so a job pulls it and builds nothing), the tag beside it in a comment, the package by its
version, and GitLab's jobs by the image's digest.
"""

from __future__ import annotations

TAG = ""
"""The release's tag, e.g. ``v1.2.3``."""
COMMIT = ""
"""The full SHA of the release commit, the one the tag names."""
IMAGE = ""
"""The release's image by digest, e.g. ``ghcr.io/ragaliq/ragaliq-gate@sha256:…``."""
