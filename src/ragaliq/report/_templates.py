"""Where our Jinja templates live: inside the wheel, or in the source checkout."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import jinja2

__all__ = ["TemplateLoader", "templates_root"]


def templates_root() -> Traversable:
    """``ragaliq/templates`` in the installed wheel, else the checkout's top-level ``templates/``.

    Editable installs do not get the wheel's force-included files, hence the fallback.
    """
    packaged = resources.files("ragaliq") / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "templates"


class TemplateLoader(jinja2.BaseLoader):
    """Our templates by name (``comment.md.j2``, ``report.html.j2`` ...)."""

    def __init__(self, root: Traversable | None = None) -> None:
        self.root = root if root is not None else templates_root()

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        if template not in self.list_templates():
            raise jinja2.TemplateNotFound(template)
        node = self.root / template
        return node.read_text(encoding="utf-8"), str(node), lambda: True

    def list_templates(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(n.name for n in self.root.iterdir() if n.name.endswith(".j2"))
