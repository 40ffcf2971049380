"""Command-line interface: ``infodiv <command> ...``.

Each command lives in its own module ``infodiv.commands.<name>`` exposing ``configure(parser)``
and ``run(args) -> int``; modules are imported only when their command runs, so ``infodiv
validate`` never imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, one-line help)
COMMANDS = {
    "validate": ("infodiv.commands.validate", "estimator ground-truth suite: truth vs estimate"),
    "extract": ("infodiv.commands.extract", "run a causal LM on a task and save Contributions"),
    "decompose": ("infodiv.commands.decompose", "bias-diversity, BVC, information decompositions"),
    "curves": ("infodiv.commands.curves", "layer-addition curves and submodularity report"),
    "run": ("infodiv.commands.run", "end to end: extract, decompose, curves, report"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="infodiv", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            p.set_defaults(_missing=module_name)
            continue
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "_missing", None):
        print(f"infodiv: command {args.command!r} is not available in this build", file=sys.stderr)
        return 2
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
