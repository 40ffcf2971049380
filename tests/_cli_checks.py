"""What every bad-input test asserts of the command line: one line, exit 2, no traceback."""

from __future__ import annotations

from infodiv.cli import main


def one_line_error(capsys, argv, *needles, code: int = 2) -> str:
    """Run ``argv``; assert exit ``code`` (2: a user mistake; 1: a failed stage) and ONE
    stderr line holding every needle; return it."""
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == code, err
    assert "\n" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err
