from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragaliq.errors import TemplateError
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.markdown import (
    UserTemplate,
    escape_markdown,
    render_comment,
    render_summary,
)
from ragaliq.report.marker import comment_marker
from tests.conftest import REPO_ROOT
from tests.unit.report.decisions import hostile_decision, realistic_decision, realistic_report
from tests.unit.report.markdown_checks import assert_well_formed, write

# --- user templates ------------------------------------------------------------------------


def test_user_template_extends_ours_and_overrides_a_block(tmp_path):
    template = write(
        tmp_path,
        "custom.md.j2",
        '{% extends "comment.md.j2" %}{% block footer %}custom footer{% endblock %}',
    )
    text = render_comment(realistic_decision(), template=template)
    assert text.split("\n", 1)[0] == comment_marker()
    assert "### ❌ RagaliQ Gate failed" in text
    assert "Newly hallucinated claims (3)" in text
    assert text.rstrip().endswith("custom footer")
    assert "claude-sonnet-4-5, prompt" not in text
    assert_well_formed(text, marker=comment_marker())


def test_user_template_named_like_ours_can_still_extend_ours(tmp_path):
    template = write(
        tmp_path,
        "comment.md.j2",
        '{% extends "comment.md.j2" %}{% block usage %}## Our RAG gate\n\n{% endblock %}',
    )
    text = render_comment(realistic_decision(), template=template)
    assert "## Our RAG gate" in text
    assert "RagaliQ Gate failed" in text


@pytest.mark.parametrize("block", ["headline", "notices", "marker"])
def test_a_template_cannot_override_the_verdict_the_notices_or_the_marker(tmp_path, block):
    template = write(
        tmp_path,
        "liar.md.j2",
        f'{{% extends "comment.md.j2" %}}{{% block {block} %}}### ✅ passed{{% endblock %}}',
    )
    with pytest.raises(TemplateError, match=f"overrides the block {block}.*the gate's"):
        render_comment(realistic_decision(), template=template)


def test_a_template_that_says_passed_elsewhere_keeps_the_real_headline_first(tmp_path):
    template = write(
        tmp_path,
        "liar.md.j2",
        '{% extends "comment.md.j2" %}{% block scores %}### ✅ RagaliQ Gate passed\n\n'
        "{% endblock %}",
    )
    text = render_comment(realistic_decision(), template=template)
    assert text.index("### ❌ RagaliQ Gate failed") < text.index("### ✅ RagaliQ Gate passed")
    notices = realistic_decision().notices
    assert all(escape_markdown(n)[:40] in text for n in notices)


def test_a_template_cannot_hide_the_notices_in_an_html_comment(tmp_path):
    template = write(
        tmp_path,
        "hide.md.j2",
        '{% extends "comment.md.j2" %}{% block cases %}<!--{% endblock %}'
        "{% block update_baseline %}-->{% endblock %}",
    )
    with pytest.raises(TemplateError, match="HTML comment"):
        render_comment(realistic_decision(), template=template)


def test_a_standalone_template_is_refused_since_it_would_drop_the_verdict(tmp_path):
    template = write(tmp_path, "plain.md.j2", "### ✅ all good\n")
    with pytest.raises(TemplateError, match="must \\{% extends"):
        render_comment(realistic_decision(), template=template)


def test_filters_escape_untrusted_text_in_a_user_block(tmp_path):
    template = write(
        tmp_path,
        "plain.md.j2",
        '{% extends "comment.md.j2" %}{% block new_hallucinations %}'
        "{% for c in decision.new_hallucinations %}* {{ c.claim | shorten(20) | md }}\n"
        "{% endfor %}{% endblock %}",
    )
    text = render_comment(hostile_decision(), template=template)
    assert "* &lt;script&gt;alert(1)&lt;/s…" in text.splitlines()


def test_user_summary_template_extends_ours(tmp_path):
    template = write(
        tmp_path, "s.md.j2", '{% extends "summary.md.j2" %}{% block cases %}no cases{% endblock %}'
    )
    text = render_summary(realistic_decision(), report=realistic_report(), template=template)
    assert "no cases" in text
    assert "Scores per case" not in text


def test_a_missing_user_template_is_a_template_error(tmp_path):
    with pytest.raises(TemplateError, match="not found"):
        UserTemplate.from_file(tmp_path / "nope.md.j2")


def test_bad_arguments():
    with pytest.raises(ValueError, match="comment-id"):
        render_comment(realistic_decision(), comment_id="no spaces please")
    with pytest.raises(ValueError, match="details_url"):
        render_comment(realistic_decision(), details_url="javascript:alert(1)")
    with pytest.raises(ValueError, match="details_url"):
        render_comment(realistic_decision(), details_url="https://x.test/a) [b](c")


def test_our_templates_are_found_by_name():
    root = templates_root()
    assert (root / "comment.md.j2").is_file()
    assert (root / "summary.md.j2").is_file()
    loader = TemplateLoader(root)
    assert {"comment.md.j2", "summary.md.j2"} <= set(loader.list_templates())


def test_an_installed_package_uses_its_own_templates(tmp_path):
    shutil.copytree(REPO_ROOT / "src" / "ragaliq", tmp_path / "ragaliq")
    shutil.copytree(REPO_ROOT / "templates", tmp_path / "ragaliq" / "templates")
    (tmp_path / "ragaliq" / "templates" / "comment.md.j2").write_text("packaged\n")
    script = (
        "from ragaliq.report import _templates, markdown; from tests.unit.report.decisions "
        "import first_run_decision; print(_templates.templates_root()); "
        "print(markdown.render_comment(first_run_decision()), end='')"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    root, marker, body = run.stdout.splitlines()
    assert Path(root) == tmp_path / "ragaliq" / "templates"
    assert marker == comment_marker()
    assert body == "packaged"


def test_a_template_that_writes_text_before_the_headline_is_refused(tmp_path):
    template = write(
        tmp_path,
        "liar.md.j2",
        '### ✅ RagaliQ Gate passed\n{% extends "comment.md.j2" %}',
    )
    with pytest.raises(TemplateError, match="writes text before the gate's headline"):
        render_comment(realistic_decision(), template=template)
