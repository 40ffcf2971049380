"""``infodiv extract``: run a causal LM over a task and save its exact per-member contributions.

Loads the model (hub id, local folder, ``.gguf`` file or the alias ``smollm2-135m``), builds the
task (paper Table 3 template and options with ``--task``, or a ``.csv`` / ``.jsonl`` file with
``--task-file --template --options --label-field``; with ``--unlabelled`` records without a
label are extracted, and analyses that need labels refuse them), runs
:func:`extraction.extract` with a progress bar (examples/s) and writes a ``Contributions`` run
directory (resumable: rerunning the same command after an interruption reuses the finished
shards) with its manifest (``.infodiv-manifest.json``: the sha256 of ``meta.json`` and
``arrays.npz``, checked whenever the run is read); ``--out`` is replaced only under the rules
of :mod:`extraction.outdir`: never a file or a folder holding anything else, another
extraction only with ``--overwrite``, and never the extraction inside a run folder of ``infodiv
run`` or one that already has its analyses beside it (:func:`check_replace`); the resume shards
of an interrupted extraction of another run are discarded only with ``--overwrite``. Prints N, M,
C, the largest exactness error against the model's own output logits and the model's
accuracy; exits 1 if the exactness check failed (the message gives the numbers).

The prompt options (``--chat-template``, ``--shots``, ``--fixed-demos``, ``--demo-start``,
``--start``) are those of ``infodiv run`` (:func:`infodiv.commands.options.add_prompt_options`).
Each option is scored on one token under the exact prompt used; options that share it, or
that would be scored on a fragment of their word when a whole-word token exists (SmolLM2's
chat template splits ``sport`` into ``s`` + ``port``; ``" sport"`` is one token), are refused
in one line listing every option's token, exit 2 (:mod:`extraction.optiontokens`).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from infodiv.commands.options import add_prompt_options
from infodiv.commands.preflight import batch_size, nonneg_int, positive_int
from infodiv.commands.tasksel import add_task_file_options


def add_model_options(parser: argparse.ArgumentParser, *, workers: bool = True) -> None:
    """``--device``, ``--dtype``, ``--batch-size`` and (``workers``) ``--workers``: where, in
    which precision, in which batches and in how many processes the model runs (``infodiv
    extract``, ``infodiv run``; ``infodiv grid``, whose ``--workers`` are Dask's, without)."""
    parser.add_argument("--device", default="auto",
                        help="auto, cpu, cuda, cuda:N, mps, or device_map (spread over GPUs)")
    parser.add_argument("--dtype", default="auto",
                        choices=("auto", "float32", "bfloat16", "float16"),
                        help="model dtype (auto: checkpoint dtype on CUDA, float32 on CPU)")
    parser.add_argument("--batch-size", type=batch_size, default="auto",
                        help="'auto' (token budget) or examples per batch")
    if not workers:
        return
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="processes extracting the shards (CPU: one per core, with one "
                             "torch thread each, scales where threads do not)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True,
                        help="hub id, local folder, .gguf file, or 'smollm2-135m'")
    parser.add_argument("--gguf-file", default=None, help="GGUF file name inside --model")
    parser.add_argument("--task", default=None,
                        help="ag_news, arc (= arc_challenge), arc_easy, boolq, mnli, qqp, rte, "
                             "sst2, wic (or use --task-file)")
    add_task_file_options(parser)
    parser.add_argument("--position", type=int, default=-1,
                        help="read position: -1 the last prompt token (default), other negative "
                             "values from the end, non-negative from the start")
    parser.add_argument("--vocab", default="options", choices=("options", "full"),
                        help="columns of u: the option tokens (default) or the whole vocabulary")
    parser.add_argument("--n", type=positive_int, default=2000,
                        help="examples: rows START..START+N-1 of the split (default 2000)")
    add_prompt_options(parser)
    parser.add_argument("--seed", type=nonneg_int, default=0,
                        help="seed of the demonstration draws")
    parser.add_argument("--split", default=None, help="dataset split (default: the paper's)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder laid out like ../shared/data (default: HF datasets or "
                             "$INFODIV_DATA_DIR)")
    parser.add_argument("--out", type=Path, default=None,
                        help="run directory (default runs/<model>-<task>-<granularity>)")
    add_model_options(parser)
    parser.add_argument("--granularity", default="block",
                        choices=("block", "head", "neuron", "expert"),
                        help="members: attention/MLP writes, attention heads, MLP neurons or "
                             "routed experts (mixture-of-experts families)")
    parser.add_argument("--neuron-top-k", type=positive_int, default=None,
                        help="with --granularity neuron: keep the k largest neurons per MLP "
                             "execution plus one rest member")
    parser.add_argument("--max-length", type=positive_int, default=None,
                        help="prompt token limit (default: the model context)")
    parser.add_argument("--no-resume", action="store_true",
                        help="ignore shards of an interrupted run")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an extraction of another run at --out (a file or a "
                             "folder holding anything else is never replaced)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _default_out(model: str, task: str, granularity: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).stem if Path(model).exists() else model)
    return Path("runs") / f"{slug}-{task}-{granularity}"


def _task(args):
    from extraction.tasks import get_task

    if (args.task is None) == (args.task_file is None):
        raise ValueError("give exactly one of --task NAME and --task-file FILE")
    if args.fixed_demos and not args.shots:
        raise ValueError("--fixed-demos needs --shots N (N >= 1 demonstrations to fix)")
    if args.task is not None:
        stray = [f for f in ("template", "options", "label_field") if getattr(args, f)]
        if stray:
            raise ValueError(f"--{stray[0].replace('_', '-')} needs --task-file (the named "
                             "tasks have their own template and options)")
        return get_task(args.task, data_dir=args.data_dir, split=args.split, n=args.n,
                        shots=args.shots, seed=args.seed, fixed_demos=args.fixed_demos,
                        start=args.start, demo_start=args.demo_start)
    for flag, value in (("--start", args.start or None), ("--demo-start", args.demo_start)):
        if value is not None:
            raise ValueError(f"{flag} {value} needs --task (a task file's rows are chosen in "
                             "the file)")
    task = _load_file(args, args.n)
    if args.shots:
        if task.n_unlabelled and not args.fixed_demos:
            raise ValueError(f"--shots needs labelled demonstrations; {task.n_unlabelled} of "
                             f"{len(task)} records in {args.task_file} have no label")
        task = task.with_demonstrations(args.shots, seed=args.seed, pool=_demo_pool(args, task),
                                        fixed=args.fixed_demos)
    return task


def _load_file(args, n):
    """The --task-file task (shared by ``infodiv run``): --template and --options required,
    --label-field required unless --unlabelled."""
    from extraction.taskfiles import load_task_file, parse_options

    if not args.template or not args.options:
        raise ValueError("--task-file needs --template and --options")
    if args.label_field is None and not args.unlabelled:
        raise ValueError(f"--task-file {args.task_file} needs --label-field COLUMN (the gold "
                         "option of every record), or --unlabelled to extract without labels")
    return load_task_file(args.task_file, template=args.template,
                          options=parse_options(args.options), label_field=args.label_field,
                          truncatable=[f for f in args.truncatable.split(",") if f], n=n,
                          allow_unlabelled=args.unlabelled)


def _demo_pool(args, task):
    """With --fixed-demos on a task file: the records after the first --n, which are no example
    (a fixed draw from the examples would show some of them their own answer)."""
    if not args.fixed_demos:
        return None
    from extraction.tasks import Task

    full = _load_file(args, None)
    keep = [i for i in range(len(task), len(full)) if full.labels[i] >= 0]
    rest = Task(full.name, full.template, full.options, [full.records[i] for i in keep],
                full.labels[keep], dict(full.meta), full.truncatable)
    if len(rest) < args.shots:
        raise ValueError(f"--fixed-demos --shots {args.shots} needs {args.shots} labelled "
                         f"records after the first --n {len(task)} of {args.task_file}; it has "
                         f"{len(rest)}")
    return rest


def _identity(args, task) -> dict:
    """The settings that make an extraction at --out the same run (extraction.outdir)."""
    return {"model": {"model_id": str(args.model)}, "task": task.name,
            "n_examples": len(task), "granularity": args.granularity,
            "seed": (task.meta or {}).get("seed"), "template": task.template,
            "options": list(task.options), "position": args.position, "vocab": args.vocab,
            "chat_template": bool(args.chat_template), "max_length": args.max_length,
            "neuron_top_k": args.neuron_top_k, "task_meta": dict(task.meta or {})}


def check_replace(out: Path, state: str) -> None:
    """Refuse (UserError, one line, nothing written) what ``--overwrite`` must not replace:
    the extraction of an ``infodiv run`` folder (``RUN/contributions``: the run's stages and
    page were made from it) unless it is this same run, and an extraction of another run that
    has its analyses beside it (``decompositions/``, ``curves/``, a page)."""
    from extraction.outdir import DERIVED
    from infodiv.runfiles import RUN_FILE, UserError

    run_folder = out.parent / RUN_FILE
    if run_folder.is_file() and state != "same":
        raise UserError(f"--out {out} is the extraction of the infodiv run folder {out.parent} "
                        "(its analyses and page were made from it); it is never replaced by "
                        "infodiv extract: choose another --out, or rerun that run with "
                        "`infodiv run ... --overwrite` (nothing was written)")
    derived = sorted(p.name for p in out.iterdir() if p.name in DERIVED) if out.is_dir() else []
    if state == "replace" and derived:
        raise UserError(f"--out {out} holds another extraction with its analyses "
                        f"({', '.join(derived)}); --overwrite never replaces analyses: choose "
                        "another --out (nothing was written)")


def run(args) -> int:
    from extraction.models import load_model
    from extraction.outdir import check_target, output_lock, run_identity
    from extraction.readout import ExactnessError
    from extraction.runner import extract
    from infodiv.study.checks import check_model

    check_model(args.model, args.gguf_file)   # an unknown model: one line, exit 2, no work
    task = _task(args)
    out = args.out or _default_out(str(args.model), task.name, args.granularity)
    with output_lock(out):
        state = check_target(out, run_identity(_identity(args, task)), args.overwrite,
                             analyses=True)
        check_replace(Path(out), state)
        if state == "replace":
            print(f"infodiv extract: --overwrite: replacing the extraction of another run at "
                  f"{out} (meta.json, arrays.npz)")
        if args.quiet:   # no weight-loading bars either
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        model, tokenizer = load_model(args.model, gguf_file=args.gguf_file, device=args.device,
                                      dtype=args.dtype)
        try:
            c = extract(model, tokenizer, task, granularity=args.granularity,
                        batch_size=args.batch_size, out=out, resume=not args.no_resume,
                        progress=not args.quiet, max_length=args.max_length,
                        chat_template=args.chat_template, position=args.position,
                        vocab=args.vocab, neuron_top_k=args.neuron_top_k,
                        overwrite=args.overwrite, workers=args.workers)
        except ExactnessError as exc:
            print(f"infodiv extract: exactness check FAILED: {exc}", file=sys.stderr)
            return 1
    m = c.meta
    acc = (f"accuracy={c.accuracy():.4f}" if m.get("labelled", True)
           else f"unlabelled={m['n_unlabelled']}")
    print(f"{out}: N={c.n_examples} M={c.n_members} C={c.n_options} "
          f"max|Σu+bias−model logits|={m['max_exactness_error']:.3g} "
          f"(relative {m['max_relative_exactness_error']:.3g}, tolerance {m['exactness_rtol']:g}) "
          f"{acc} truncated={m['n_truncated']} demos_dropped={m.get('n_demos_dropped', 0)} "
          f"options={m.get('option_tokens')}")
    return 0
