"""A template of yours: read from where the bar is read, with the files it includes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragaliq.errors import RagaliqError, TemplateError
from ragaliq.repository import MAX_TEXT_BYTES, FileSource, WorkTree, repo_path

__all__ = ["UserTemplate"]


@dataclass(frozen=True, kw_only=True)
class UserTemplate:
    """A template of yours, read from where the bar is read, with the files it includes.

    ``include`` reads a template that ``{% include %}``, ``{% import %}`` or ``{% extends %}``
    names, relative to this template's folder; the built-in templates (``comment.md.j2`` ...)
    are found by name first.
    """

    path: str
    """Where it was read from, for messages."""
    text: str
    include: Callable[[str], str | None]

    @classmethod
    def read(cls, source: FileSource, path: str, *, what: str) -> UserTemplate:
        """The template at repository path ``path`` of ``source``.

        Raises:
            TemplateError: it is absent, not UTF-8, or over the size limit; or, through
                ``include``, an included file is.
        """
        folder = str(PurePosixPath(path).parent)
        folder = "" if folder == "." else folder

        def load(name: str) -> str | None:
            included = repo_path(name, folder=folder, what=f"{what} (included from {path})")
            return _read_template(source, included, what=what)

        text = _read_template(source, path, what=what)
        if text is None:
            raise TemplateError(
                f"{what}: {path} not found in {source.description}; commit the template there "
                "or remove the setting"
            )
        return cls(path=path, text=text, include=load)

    @classmethod
    def from_file(cls, path: Path) -> UserTemplate:
        """A template file named on the command line (its includes beside it)."""
        folder = path.resolve().parent
        return cls.read(WorkTree(folder), path.name, what="--template")


def _read_template(source: FileSource, path: str, *, what: str) -> str | None:
    try:
        data = source.read(path, limit=MAX_TEXT_BYTES, what=what)
    except RagaliqError as exc:
        raise TemplateError(str(exc)) from exc
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TemplateError(f"{what}: {path} is not UTF-8 text; re-save it as UTF-8") from exc
