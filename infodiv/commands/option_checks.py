"""Options checked together, after parsing and before any work (called by :func:`infodiv.cli.main`).

Each option is checked alone where it is defined (:mod:`infodiv.commands.options`,
:mod:`infodiv.commands.preflight`); here are the combinations, in one place, for every command
that has the options involved:

- an option whose work another option skips is refused (one line naming both, exit 2):
  ``--no-inference`` with a size of the verdicts it skips (``--n-bootstrap``,
  ``--n-permutations``, ``--power-replicates``, ``--n-orders``, ``--objective-sizes``);
  ``--info-null`` with ``--info-method none``; a prompt-choice option (``--choice-n``,
  ``--choice-start``, ``--choice-criterion``) without ``--choose-prompt``;
- the same run folder twice in ``infodiv report`` is refused.

``--inference 0`` / ``--decompose-inference 0`` needs no note: every stage it sizes draws no
example resample then (Figures 3/5/7 in every variant and the model-based information terms
give their point estimates, recorded with ``n_bootstrap`` 0 and no interval or p).

Only options the user gave are judged: :func:`track_given` makes the parser record them in
``args._given``, so a default is never mistaken for a choice.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["track_given", "given", "check_options"]

_GIVEN = "_given"
#: sizes of the verdicts that ``--no-inference`` skips
_VERDICT_SIZES = ("n_bootstrap", "n_permutations", "power_replicates", "n_orders",
                  "objective_sizes")
_CHOICE_OPTIONS = ("choice_n", "choice_start", "choice_criterion")
_recording_classes: dict = {}


def _recording(cls):
    """A subclass of the argparse action ``cls`` that adds its dest to ``namespace._given``."""
    if cls not in _recording_classes:
        def __call__(self, parser, namespace, values, option_string=None):
            seen = getattr(namespace, _GIVEN, None)
            if seen is None:
                seen = set()
                setattr(namespace, _GIVEN, seen)
            seen.add(self.dest)
            return cls.__call__(self, parser, namespace, values, option_string)

        _recording_classes[cls] = type(f"Given{cls.__name__}", (cls,), {"__call__": __call__})
    return _recording_classes[cls]


def track_given(parser: argparse.ArgumentParser) -> None:
    """Make every optional argument of ``parser`` record its dest in ``args._given`` when it
    appears on the command line (help and version actions excepted)."""
    for action in parser._actions:
        if action.option_strings and not isinstance(
                action, (argparse._HelpAction, argparse._VersionAction)):
            action.__class__ = _recording(type(action))


def given(args, dest: str) -> bool:
    """Whether the option ``dest`` was given on the command line (see :func:`track_given`)."""
    return dest in (getattr(args, _GIVEN, None) or ())


def _flag(args, dest: str) -> str:
    """The option string of ``dest`` in the command's parser (``--n-bootstrap``)."""
    parser = getattr(args, "_parser", None)
    for action in getattr(parser, "_actions", ()):
        if action.dest == dest and action.option_strings:
            return max(action.option_strings, key=len)
    return "--" + dest.replace("_", "-")


def _shown(args, dest: str) -> str:
    value = getattr(args, dest)
    if isinstance(value, (list, tuple)):
        value = " ".join(f"{v[0]}={','.join(map(str, v[1:]))}" if isinstance(v, tuple)
                         else str(v) for v in value)
    elif isinstance(value, bool):
        return _flag(args, dest)
    return f"{_flag(args, dest)} {value}".strip()


def _refuse(message: str):
    from infodiv.runfiles import UserError

    raise UserError(message)


def _skipped_options(args) -> None:
    if getattr(args, "no_inference", False):
        for dest in _VERDICT_SIZES:
            if hasattr(args, dest) and given(args, dest):
                _refuse(f"--no-inference skips every verdict, interval, null and power check, "
                        f"so {_shown(args, dest)} would not be used: give one of them")
    if hasattr(args, "info_method") and given(args, "info_null"):
        methods = tuple(args.info_method or ())
        if not methods or "none" in methods:
            _refuse(f"{_shown(args, 'info_null')} permutes the labels of the information "
                    f"terms, which --info-method {' '.join(methods) or '(no value)'} skips: "
                    "give one of them")
    if hasattr(args, "choose_prompt") and args.choose_prompt is None:
        for dest in _CHOICE_OPTIONS:
            if given(args, dest):
                _refuse(f"{_shown(args, dest)} sets the prompt choice, which runs only with "
                        "--choose-prompt: add --choose-prompt or drop it")


def _runs_once(args) -> None:
    """``infodiv report``: every run folder once (a folder and its ``contributions/`` count as
    the same run)."""
    from infodiv.runfiles import UserError, find_run

    seen: dict = {}
    for path in getattr(args, "run_dir", None) or ():
        try:
            root = find_run(path)[1].resolve()
        except (UserError, OSError):
            continue   # the command says what is wrong with it
        if root in seen:
            _refuse(f"run folder {root} is given twice (as {seen[root]} and {path}); give "
                    "each run once")
        seen[root] = Path(path)


def check_options(args, prog: str) -> None:
    """Refuse (:class:`~infodiv.runfiles.UserError`, one line, exit 2) the combinations of the
    module docstring; nothing is computed before (``prog``, the program's name, is kept for
    the caller: nothing is printed here)."""
    _skipped_options(args)
    if args.command == "report":
        _runs_once(args)
