"""Every code block of the README runs as written.

Python blocks run in order in one namespace; ``bash`` blocks run each ``infodiv ...`` line
through the CLI, in a scratch working directory. Blocks under ``<!-- readme-test: parse -->``
(set-up, the demo, GPU and multi-model studies) are parsed by the real argument parser instead:
every option they use must exist and take the value written.
"""

import re
import shlex

import pytest
from _paths import ROOT

from infodiv.cli import build_parser, main

README = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- readme-test: (?P<mark>\w+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```",
                   re.S)


def blocks():
    return [(m["lang"], m["mark"], m["body"]) for m in BLOCK.finditer(README.read_text())]


def _commands(body):
    for line in body.strip().splitlines():
        for cmd in line.split("&&"):
            yield shlex.split(cmd.split("#")[0])


def test_readme_has_the_two_commands_and_code():
    langs = [b[0] for b in blocks()]
    assert langs.count("python") >= 4 and langs.count("bash") >= 4
    first = [b[2].strip() for b in blocks() if b[0] == "bash"][:2]
    assert first == ["bash scripts/setup.sh && infodiv demo",
                     "bash scripts/setup.sh && python -m pytest -q && python -m pytest -q -m slow"]


def test_parse_only_blocks_use_real_options(capsys):
    root = README.parent
    parser = build_parser()
    n = 0
    for _lang, mark, body in blocks():
        if mark != "parse":
            continue
        for argv in _commands(body):
            if argv[0] == "infodiv":
                args = parser.parse_args(argv[1:])     # SystemExit(2) on an unknown option
                assert args.command and hasattr(args, "_run"), argv
                n += 1
            elif argv[:1] == ["bash"]:
                assert (root / argv[1]).is_file(), argv
            else:
                assert argv[:3] == ["python", "-m", "pytest"], argv
    assert n >= 5


@pytest.mark.slow
@pytest.mark.real_model
def test_readme_blocks_run(smollm2_available, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    ran = 0
    for i, (lang, mark, body) in enumerate(blocks()):
        if mark == "parse" or lang not in ("python", "bash"):
            continue
        if lang == "python":
            exec(compile(body, f"README.md block {i}", "exec"), namespace)
        else:
            for argv in _commands(body):
                assert argv[0] == "infodiv", argv
                assert main(argv[1:]) == 0, (argv, capsys.readouterr().err)
        ran += 1
    assert ran >= 6
    assert namespace["c"].u.shape == (16, 61, 2)
    assert (tmp_path / "runs" / "readme-sst2" / "report.html").is_file()
