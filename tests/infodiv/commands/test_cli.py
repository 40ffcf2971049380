"""The CLI surface: commands listed, every option documented with its default, one-line errors."""

import pytest

from infodiv.cli import COMMANDS, build_parser, main


def _subparsers(parser):
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_help_lists_commands(capsys):
    text = build_parser().format_help()
    for name in ("validate", "extract", "decompose", "curves", "run", "demo", "report"):
        assert name in text
    assert main([]) == 2


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_has_help_and_default(command):
    sub = _subparsers(build_parser())[command]
    for action in sub._actions:
        if not action.option_strings or action.dest == "help":
            continue
        assert action.help, f"{command} {action.option_strings} has no help text"
        if action.default not in (None, False):
            shown = sub._get_formatter()._get_help_string(action)
            assert "default" in shown.lower(), (command, action.option_strings, shown)
    text = " ".join(sub.format_help().split())
    if command == "run":
        for needle in ("--shots", "--batch-size", "--dtype", "--max-length", "--stratify",
                       "--data-dir", "(default: 2000)", "(default: smollm2-135m",
                       "INFODIV_DATA_DIR", "INFODIV_SHARED"):
            assert needle in text, needle


def test_commands_table_is_a_table():
    assert all(isinstance(v, tuple) and len(v) == 2 for v in COMMANDS.values())


def test_unknown_command_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and "invalid choice" in err


def test_report_out_takes_a_folder_or_a_bare_name(tmp_path):
    from infodiv.commands.report import html_target

    assert html_target(tmp_path) == tmp_path / "report.html"            # an existing folder
    assert html_target(tmp_path / "page") == tmp_path / "page.html"      # no suffix: .html
    assert html_target(tmp_path / "p.html") == tmp_path / "p.html"


def test_help_names_the_demos_task(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("demo"))
    assert "AG News" in line and "SST-2" not in line
