"""Command-line interface: ``infodiv <command> ...``.

Each command lives in its own module ``infodiv.commands.<name>`` exposing ``configure(parser)``
and ``run(args) -> int``; modules are imported only when their command runs, so ``infodiv
validate`` never imports torch.

User errors (a bad option, an unknown model, an unwritable ``--out``, a corrupt run directory)
end in ONE line on stderr and exit status 2; nothing already written is removed. A stage that
fails on valid input (``StageFailed``: an objective the run cannot support) is one line naming
the stage, exit status 1; so is an OSError of the machine (disk full, read-only file system,
permission denied: the path, the reason and its errno name). Options are checked together
before any work (:mod:`infodiv.commands.option_checks`). An interrupt (Ctrl-C) exits 130 and
says how many examples an extraction saved and how to resume. ``INFODIV_TRACEBACK=1``
re-raises instead, for debugging.
Warnings are collected (:func:`infodiv.warncollect.collect_warnings`): a warning repeated a
thousand times is one line with its count and the range of its numbers, at the end of the stage
or command that raised it.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import sys

from infodiv.commands.option_checks import check_options, track_given

# name -> (module, one-line help)
COMMANDS = {
    "validate": ("infodiv.commands.validate", "estimator ground-truth suite: truth vs estimate"),
    "extract": ("infodiv.commands.extract", "run a causal LM on a task and save Contributions"),
    "decompose": ("infodiv.commands.decompose", "bias-diversity, BVC, information decompositions"),
    "curves": ("infodiv.commands.curves", "layer-addition curves and submodularity report"),
    "run": ("infodiv.commands.run", "end to end: extract, decompose, curves, report"),
    "grid": ("infodiv.commands.grid", "many (model, task) runs, their analyses on Dask"),
    "demo": ("infodiv.commands.demo",
             "the offline default: SmolLM2-135M on the bundled AG News rows"),
    "report": ("infodiv.commands.report", "rebuild the HTML report from existing run folders"),
    "select": ("infodiv.commands.select", "the best k members or layers, held out, with stability"),
    "zoo": ("infodiv.commands.zoo", "train the depth / layer-sharing model zoo and report on it"),
}

DESCRIPTION = "Command-line interface: infodiv <command> ..."
EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


class DefaultsFormatter(argparse.HelpFormatter):
    """Help that states every option's default (unless its text already does)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text.lower() or action.default in (None, argparse.SUPPRESS, False) \
                or not action.option_strings:
            return text
        value = " ".join(map(str, action.default)) if isinstance(action.default, (list, tuple)) \
            else action.default
        return f"{text} (default: {value})".strip()


class OneLineParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (``infodiv run: error: ...``) and exit 2."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="infodiv", description=DESCRIPTION,
                           formatter_class=DefaultsFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text,
                           formatter_class=DefaultsFormatter)
        module = importlib.import_module(module_name)
        module.configure(p)
        track_given(p)   # args._given: the options given on the command line
        p.set_defaults(_run=module.run, _parser=p)
    return parser


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text


def _failed_path(exc: OSError) -> str | None:
    """The file an OSError is about: its ``filename``, else the innermost frame's path-like
    local (``f.write`` raising ENOSPC names no file)."""
    if exc.filename is not None:
        return os.fsdecode(exc.filename)
    tb, frames = exc.__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for name in ("path", "self", "tmp", "out", "file", "fh", "f"):
            value = frame.f_locals.get(name)
            if isinstance(value, os.PathLike):
                return os.fspath(value)
            if isinstance(getattr(value, "name", None), str) and hasattr(value, "write"):
                return value.name
    return None


def environment_error(exc: OSError) -> str:
    """One line for an OSError of the machine (disk full, read-only file system, permission
    denied): the path, the reason and its errno name."""
    code = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or _one_line(exc)
    path = _failed_path(exc)
    where = f"{path}: " if path else ""
    return f"{where}{reason}" + (f" ({code})" if code else "")


def interrupted(exc: KeyboardInterrupt) -> str:
    """What an interrupt leaves: ``exc.saved = (done, total, folder)`` when an extraction set
    it (:func:`extraction.shardloop.run_shards`), and ``exc.resume`` the command to rerun."""
    from infodiv.runfiles import display_path

    rerun = f"rerun `{exc.resume}`" if getattr(exc, "resume", None) else \
        "rerun the same command"
    saved = getattr(exc, "saved", None)
    if saved:
        done, total, folder = saved
        return (f"interrupted: {done} of {total} examples saved in {display_path(folder)}; "
                f"{rerun} to resume")
    return f"interrupted; finished stages are kept, {rerun} to resume"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from infodiv.runfiles import StageFailed, UserError
    from infodiv.warncollect import collect_warnings

    prog = f"infodiv {args.command}"
    try:
        check_options(args, prog)   # options checked together, before any work
        with collect_warnings(args.command):   # one line per kind of warning, at the end
            return int(args._run(args) or 0)
    except KeyboardInterrupt as exc:
        if os.environ.get("INFODIV_TRACEBACK"):
            raise
        print(f"\n{prog}: {interrupted(exc)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StageFailed as exc:
        if os.environ.get("INFODIV_TRACEBACK"):
            raise
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except (UserError, FileNotFoundError, NotADirectoryError, json.JSONDecodeError,
            ValueError) as exc:
        if os.environ.get("INFODIV_TRACEBACK"):
            raise
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:   # the machine: disk full, read-only, permission denied, ...
        if os.environ.get("INFODIV_TRACEBACK"):
            raise
        print(f"{prog}: error: {environment_error(exc)}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
