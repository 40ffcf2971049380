"""``infodiv grid``: the study of many (model, task) pairs, its analyses on a Dask cluster.

The pairs are every ``--models`` × ``--tasks`` (or ``--task-file``) combination, or the pairs
of a ``--grid`` file: a JSON list of ``{"model": ..., "task": ...}`` objects (a model as
``--models`` takes it, relative paths from the working directory; a task by its name). Each
pair gets the run folder ``infodiv run`` would make under ``--out``, with the same stage keys,
so a grid resumes per run and ``infodiv run`` / ``infodiv report`` read its folders. The
extraction runs here, on ``--device`` (auto: CUDA when torch sees it), one model at a time;
each run's analysis (decompositions, curves and verdicts, the page) is a Dask task, on a
local cluster of ``--workers`` single-threaded processes or on the scheduler at
``--scheduler ADDRESS`` (:mod:`infodiv.study.grid`). The study options are those of
``infodiv run`` (``--choose-prompt`` aside); the command ends with one row per run: each
stage done (with its CPU seconds), skipped or failed. A failed run is one line and the others
go on; the exit status is then 1. Needs Dask: ``pip install 'dask[distributed]'``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from infodiv.commands.options import study_settings
from infodiv.commands.preflight import positive_int
from infodiv.commands.run import add_study_options, rerun_command
from infodiv.commands.tasksel import add_task_file_options
from infodiv.runfiles import UserError

#: options of this command that are no study setting
_GRID_ONLY = ("models", "tasks", "grid", "scheduler", "dask_workers")


def configure(parser) -> None:
    from extraction.datasets import SUPPORTED_TASKS

    parser.add_argument("--models", nargs="+", default=None, metavar="MODEL",
                        help="hub ids, local folders, .gguf files or aliases; every one runs "
                             "on every task")
    parser.add_argument("--tasks", nargs="+", default=None, choices=SUPPORTED_TASKS,
                        metavar="TASK", help=f"tasks: {', '.join(SUPPORTED_TASKS)} (or "
                                             "--task-file)")
    parser.add_argument("--grid", type=Path, default=None, metavar="FILE",
                        help='the pairs instead: a JSON list of {"model": ..., "task": ...} '
                             "objects")
    add_task_file_options(parser)
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="a running Dask scheduler (tcp://host:8786) whose workers see "
                             "--out at the same path (default: a local cluster)")
    parser.add_argument("--workers", dest="dask_workers", type=positive_int, default=None,
                        metavar="N", help="worker processes of the local cluster, one thread "
                                          "each (default: the cores, at most one per run)")
    add_study_options(parser, prompt_choice=False, extraction_workers=False)
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar and no stage lines; the final table only")


def _strings(values, what: str) -> list[str]:
    seen = list(dict.fromkeys(values))
    if len(seen) != len(values):
        twice = sorted({v for v in values if values.count(v) > 1})
        raise UserError(f"{what} names {', '.join(twice)} twice")
    return seen


def read_grid_file(path: Path, tasks) -> list[tuple[str, str]]:
    """The pairs of a grid file (module docstring); UserError in one line otherwise."""
    where = f"--grid {path}"
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{where}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg})") from None
    if not isinstance(doc, list) or not doc:
        raise UserError(f'{where}: expected a non-empty JSON list of {{"model": ..., '
                        f'"task": ...}} objects, got {type(doc).__name__}'
                        + (" (empty)" if isinstance(doc, list) else ""))
    pairs = []
    for i, entry in enumerate(doc, 1):
        if not isinstance(entry, dict) or set(entry) != {"model", "task"} or not all(
                isinstance(v, str) and v.strip() for v in entry.values()):
            raise UserError(f'{where}: entry {i} is not {{"model": "...", "task": "..."}} '
                            f"(got {json.dumps(entry)[:80]})")
        if entry["task"] not in tasks:
            raise UserError(f"{where}: entry {i}: unknown task {entry['task']!r} (tasks: "
                            f"{', '.join(tasks)})")
        pairs.append((entry["model"], entry["task"]))
    dup = sorted({p for p in pairs if pairs.count(p) > 1})
    if dup:
        raise UserError(f"{where}: the pair {dup[0][0]} on {dup[0][1]} appears twice")
    return pairs


def grid_pairs(args) -> list[tuple[str, str | None]]:
    """The (model, task) pairs of ``args``; task None: the ``--task-file`` task."""
    from extraction.datasets import SUPPORTED_TASKS

    if args.grid is not None:
        if args.models or args.tasks or args.task_file is not None:
            raise UserError("give --grid FILE, or --models with --tasks or --task-file, not "
                            "both")
        return read_grid_file(args.grid, SUPPORTED_TASKS)
    if not args.models:
        raise UserError("give --models MODEL... with --tasks TASK... (or --task-file FILE), "
                        "or --grid FILE")
    if args.tasks and args.task_file is not None:
        raise UserError("give --tasks NAME... or --task-file FILE, not both")
    if not args.tasks and args.task_file is None:
        raise UserError("give --tasks TASK... or --task-file FILE for --models")
    models = _strings(args.models, "--models")
    tasks = _strings(args.tasks, "--tasks") if args.tasks else [None]
    return [(m, t) for m in models for t in tasks]


def grid_table(outcomes) -> str:
    """The final table: one row per run, per stage its status and CPU seconds."""
    from infodiv.study.grid import GRID_STAGES

    rows = [["run", *GRID_STAGES, "CPU s"]]
    for o in outcomes:
        cells, total = [o.run], 0.0
        for s in GRID_STAGES:
            st = o.stages.get(s, {"status": "not run"})
            if st["status"] == "done" and st.get("cpu_s") is not None:
                cells.append(f"done {st['cpu_s']:.1f}")
                total += st["cpu_s"]
            else:
                cells.append(st["status"])
        cells.append(f"{total:.1f}")
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    text = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    n = {k: sum(1 for o in outcomes for s in GRID_STAGES if o.stages.get(s, {}).get("status") == k)
         for k in ("done", "skipped", "failed")}
    clocks = sorted({o.clock for o in outcomes if o.clock})
    text.append(f"{len(outcomes)} runs, {sum(o.ok for o in outcomes)} finished; stages: "
                f"{n['done']} done, {n['skipped']} skipped, {n['failed']} failed; CPU s per "
                "stage: the extraction's here, the analyses' in their worker"
                + (f" (time.{'/'.join(clocks)}_time)" if clocks else ""))
    return "\n".join(text)


def run(args) -> int:
    from infodiv.study.grid import run_grid

    pairs = grid_pairs(args)
    shared = argparse.Namespace(**{k: (None if k in _GRID_ONLY else v)
                                   for k, v in vars(args).items()})
    settings = study_settings(argparse.Namespace(
        **{k: v for k, v in vars(shared).items() if k not in _GRID_ONLY}))
    t0 = time.perf_counter()
    outcomes = run_grid(pairs, settings, args.out, scheduler=args.scheduler,
                        workers=args.dask_workers, overwrite=args.overwrite, quiet=args.quiet,
                        command=rerun_command(args._parser, shared))
    print(grid_table(outcomes))
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        print(f"infodiv grid: failed: {o.run}: {o.error}")
    print(f"infodiv grid: {len(outcomes) - len(failed)} of {len(outcomes)} runs finished in "
          f"{time.perf_counter() - t0:.0f} s; table in {Path(args.out) / 'grid.json'}")
    return 1 if failed else 0
