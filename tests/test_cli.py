from infodiv.cli import build_parser, main


def test_help_lists_commands(capsys):
    parser = build_parser()
    text = parser.format_help()
    for name in ("validate", "extract", "decompose", "curves", "run"):
        assert name in text
    assert main([]) == 2
