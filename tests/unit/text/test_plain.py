from __future__ import annotations

import io

from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.github.commands import Workflow
from ragaliq.text.plain import is_blank, one_line, safe_lines
from tests.conftest import write_jsonl


def test_untrusted_text_is_one_line_without_control_or_bidi_characters():
    assert one_line("a\nb\r\n::error::x\x1b[31m\u202eevil\u2066") == "a b ::error::x [31mevil"


def test_console_text_keeps_its_lines_but_no_escape_bidi_mark_or_carriage_return():
    text = "a\x1b[2Jb\rc\u202ed\u2028e\tf"
    assert safe_lines(text) == "a[2Jb\ncd\ne\tf"


def test_an_unknown_key_is_shown_quoted_with_its_odd_characters_escaped(tmp_path):
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(
        '{"id":"a","query":"q","context":["c"],"response":"r",'
        '"\\n::set-output name=passed::true\\u202e":1}\n',
        encoding="utf-8",
    )
    config = tmp_path / "ragaliq.yaml"
    config.write_text("dataset: d.jsonl\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 2
    error = result.stderr.strip()
    assert "\n" not in error and "\u202e" not in error
    assert "unknown key '\\u000a::set-output name=passed::true\\u202e'" in error


def test_no_line_a_runner_would_take_for_a_command():
    text = "ok\n::set-output name=passed::true\n  ::add-mask::x\n##[error]boom"
    assert safe_lines(text) == (
        "ok\n> ::set-output name=passed::true\n  > ::add-mask::x\n> ##[error]boom"
    )


def test_the_action_log_never_carries_a_workflow_command_from_text():
    stream = io.StringIO()
    workflow = Workflow(output_file=None, summary_file=None, stream=stream)
    workflow.log("case ::stop-commands::x\n::add-mask::leak")
    workflow.notice("a real notice")
    lines = stream.getvalue().splitlines()
    assert lines == ["case ::stop-commands::x", "> ::add-mask::leak", "::notice::a real notice"]


def test_a_dataset_cannot_write_workflow_commands_through_the_console(tmp_path):
    dataset = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {
                "id": "c1",
                "query": "q",
                "context": ["The sky is blue."],
                "response": "The sky is green.\n::set-output name=passed::true\n\u202eok",
            }
        ],
    )
    (tmp_path / "ragaliq.yaml").write_text(
        f"dataset: {dataset.name}\njudge: {{provider: offline}}\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(tmp_path / "ragaliq.yaml"),
            "--base",
            "none",
            "--comment-out",
            str(tmp_path / "comment.md"),
        ],
    )
    assert result.exit_code in (0, 1), result.output
    for line in result.output.splitlines():
        assert not line.lstrip().startswith("::"), line
    assert "\u202e" not in result.output


def test_ctrl_c_while_the_command_line_starts_exits_130_with_one_line():
    import subprocess
    import sys

    start = (
        "import builtins\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        "    if name == 'click':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted\n"
        "from ragaliq.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", start], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 130
    assert done.stderr.strip() == "interrupted: nothing more was written"


def test_text_of_only_spaces_and_invisible_format_characters_is_blank():
    # U+200B zero-width space, U+FEFF byte order mark, U+2060 word joiner, U+00AD soft hyphen.
    for text in ("", "  \n", "\u200b", " \u200b\ufeff\u2060\u00ad "):
        assert is_blank(text), repr(text)
    for text in ("a", "\u200ba", "?", "0"):
        assert not is_blank(text), repr(text)
