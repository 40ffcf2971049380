"""``infodiv zoo train|finetune|report``: the controlled depth / layer-sharing zoo (DESIGN.md 2.9).

``infodiv zoo train`` trains (or resumes) every model of the grid under ``--root`` (default
``runs/zoo``, git-ignored): Llama models of width ``--width`` at depths ``--depths`` and shared
twins at ``--shared-depths`` (each block executed twice in a row), for every seed in
``--seeds``, then the optional ``--extra-depths``; all with the same steps and schedule. Rerunning
the same command continues where it stopped (finished models are skipped, an interrupted one
resumes from its last checkpoint) and says so. Bad settings: one line, exit 2. The root and
every model folder carry the output manifest (:mod:`infodiv.experiments.trained`): a file of
someone else's where training writes is refused in one line before any work; a finished model
or a checkpoint is reused only when the manifest confirms its sha256 (otherwise trained again,
and the log says so); ``--overwrite`` trains the models again from step 0 replacing only the
files the manifests list, and names them; ``--adopt`` takes a root trained before manifests as
the toolkit's. With
``--task hops --hops K`` the grid trains on K-hop pointer chasing (:mod:`infodiv.experiments.hops`)
instead of AG News: every model on its own seeded generated stream (chain lengths uniform on
``[--min-hops, K]``, ``--queries`` answered questions per sequence), scored on
``--n-heldout`` held-out K-hop examples that ``<root>/heldout.jsonl`` holds as a task file
(see :mod:`infodiv.experiments.depth`).

``infodiv zoo finetune`` fine-tunes a pretrained model (default the SmolLM2-135M-Instruct alias)
on the same rows into ``<root>/finetune/<name>`` (resumable; the same manifest, ``--overwrite``
and ``--adopt``); with ``--train-top K`` the frozen
bottom's output on the visited training prompts is computed once and cached (exact; see
:mod:`infodiv.experiments.prefix`). ``infodiv zoo report`` extracts every finished checkpoint on the
2000 held-out rows into ``<out>/contributions/<model>``, runs the toolkit's analyses (the curve
inference at ``--curves-inference`` resamples/permutations) and writes ``<out>/summary.json``,
the across-depth summary with intervals over seeds and examples (``--resamples``) and Table 1.
With ``--from-contributions`` it needs no checkpoint: the models are the records of
``<out>/summary.json`` and their committed contributions (:mod:`infodiv.experiments.sources`), and
every per-model analysis is cached, so a rerun resumes model by model (``--only`` for one model).
Every folder it writes carries the output manifest (:mod:`infodiv.experiments.owned`): a file of
the user's with one of its names is refused before any work, a rerun replaces only its own
files and says which, an edited per-model report or cached figure is recomputed and the log
says so; ``--adopt`` takes results written before manifests as the toolkit's.

``infodiv zoo depth-report ROOT [ROOT ...]`` analyses every finished model of pointer-chasing
depth roots (:mod:`infodiv.experiments.depth_report`): exact extraction on each root's held-out
file, accuracy, usable information, the claims' verdicts through the inference engine with their
power, per model cached in ``<root>/analysis/`` (a rerun reuses them and says so); then
``--out`` (default ``docs/results/depth``) gets ``summary.json``, ``README.md`` and figures;
``depth-page``, ``depth-bundle`` and ``depth-reproduce`` (:mod:`infodiv.commands.zoo_depth`)
redraw the page from the summary, write the committed bundle and recompute everything from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .fields import add_fields, fields_of
from .zoo_depth import HANDLERS as DEPTH_HANDLERS
from .zoo_depth import add_adopt, configure_depth

#: ``--task hops`` options: the :class:`~infodiv.experiments.hops.HopsTask` field each one sets,
#: with its help (:func:`_add_fields`)
HOPS_OPTIONS = {
    "hops": "with --task hops: K (held-out hops)",
    "min_hops": "with --task hops: fewest hops of a training example (uniform mixture on "
                "[--min-hops, --hops]; equal to --hops: no mixture)",
    "symbols": "with --task hops: symbol pool",
    "queries": "with --task hops: questions per training sequence, each answer supervised (1: "
               "only the last)",
    "next_frac": "with --task hops: fraction of the earlier questions that are one-hop lookups "
                 "'> x' (answer: the successor of x)",
    "n_heldout": "with --task hops: held-out examples",
    "heldout_seed": "with --task hops: seed of the held-out draw",
    "heldout_frac": "with --task hops: share of training sequences posed exactly as the "
                    "held-out question (K hops, one question)",
    "n_mixed_heldout": "with --task hops: a second held-out set of this size whose questions "
                       "take 1..K hops in equal shares (0: none)",
}
def _shard(text: str):
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard must be K/N, got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 0 <= K < N, got {text!r}")
    return k, n


def _add_count(p, flag: str, default: int, text: str) -> None:
    """A count of resamples, permutations or surrogates where 0 skips what it counts: a
    non-negative integer (refused when parsed otherwise)."""
    from infodiv.commands.preflight import nonneg_int

    p.add_argument(flag, type=nonneg_int, default=default, help=f"{text} (0 skips)")


def _add_schedule(p, *, steps, batch_size, lr, warmup, checkpoint_every) -> None:
    """The training loop's options (:class:`infodiv.experiments.train.TrainConfig`) with the
    subcommand's defaults, and ``--threads``."""
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--checkpoint-every", type=int, default=checkpoint_every)
    p.add_argument("--threads", type=int, default=1, help="torch threads")


def _schedule(args, **extra):
    """The :class:`~infodiv.experiments.train.TrainConfig` of the options of
    :func:`_add_schedule`."""
    from infodiv.experiments.train import TrainConfig

    return TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                       warmup=args.warmup, checkpoint_every=args.checkpoint_every,
                       threads=args.threads, **extra)


def _add_owned(p, what: str) -> None:
    """``--overwrite`` and ``--adopt`` of the training commands
    (:mod:`infodiv.experiments.trained`)."""
    p.add_argument("--overwrite", action="store_true",
                   help=f"train {what} again from step 0 (and write settings that differ), "
                        "replacing only the files the folder's manifest lists; says which")
    p.add_argument("--adopt", action="store_true",
                   help="take the files training writes that the folders already hold "
                        "without a manifest entry as the toolkit's (trained before manifests; "
                        "a file git tracks must be unchanged against HEAD)")


def _configure_train(p) -> None:
    from infodiv.experiments.hops import HopsTask

    p.add_argument("--root", type=Path, default=Path("runs/zoo"), help="zoo folder")
    p.add_argument("--depths", type=int, nargs="*", default=[1, 2, 4, 8])
    p.add_argument("--shared-depths", type=int, nargs="*", default=[1, 2, 4])
    p.add_argument("--extra-depths", type=int, nargs="*", default=[],
                   help="unshared depths trained after the whole grid (e.g. 12 16)")
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--mlp", type=int, default=384, help="SwiGLU MLP width")
    p.add_argument("--init-std", type=float, default=0.02,
                   help="standard deviation of the initial weights (initializer_range)")
    p.add_argument("--max-len", type=int, default=None,
                   help="context / prompt truncation (default 64; hops: the K-hop prompt)")
    p.add_argument("--task", choices=("ag_news", "hops"), default="ag_news",
                   help="training task: AG News rows, or generated K-hop pointer chasing")
    add_fields(p, HopsTask, HOPS_OPTIONS)
    _add_schedule(p, steps=600, batch_size=32, lr=2e-3, warmup=30, checkpoint_every=50)
    p.add_argument("--lm-weight", type=float, default=0.0,
                   help="weight of the next-token loss on the prompt (default 0: answer only)")
    p.add_argument("--restart-check", type=int, default=0, metavar="STEP",
                   help="with --task hops: a model whose mean loss over the last "
                        "--restart-window steps is still on the chance plateau (>= 0.95 ln "
                        "#options) at STEP restarts from a new initialisation (0: never)")
    p.add_argument("--max-restarts", type=int, default=2,
                   help="with --restart-check: restarts per model at most (all recorded)")
    p.add_argument("--restart-window", type=int, default=100,
                   help="with --restart-check: steps averaged at the check")
    p.add_argument("--vocab-size", type=int, default=4096)
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--shard", type=_shard, default=(0, 1),
                   help="K/N: train every N-th model starting at K (parallel processes)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    _add_owned(p, "every model of this call")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _configure_finetune(p) -> None:
    p.add_argument("--model", default="smollm2-135m", help="anything extraction.load_model takes")
    p.add_argument("--root", type=Path, default=Path("runs/zoo"))
    p.add_argument("--train-top", type=int, default=None,
                   help="train only the last K blocks + final norm (default: everything)")
    p.add_argument("--max-len", type=int, default=96)
    _add_schedule(p, steps=300, batch_size=8, lr=5e-5, warmup=20, checkpoint_every=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    p.add_argument("--no-heldout-eval", action="store_true",
                   help="skip the held-out score at the end (infodiv zoo report measures it "
                        "exactly from the extraction; saves a forward pass over 2000 prompts)")
    p.add_argument("--no-prefix-cache", action="store_true",
                   help="with --train-top: run the frozen bottom blocks at every step instead "
                        "of caching their output once (same gradients, ~3x slower per step)")
    _add_owned(p, "the model")
    p.add_argument("--quiet", action="store_true")


def _add_curve_sizes(p) -> None:
    """The paired sizes of the curve inference per objective (:func:`infodiv.experiments.analyses.
    curves_settings`): example resamples B = label permutations K, and power surrogates per
    kind; the first (accuracy) objective's as two counts, the others' (mi_readout) as one
    ``B POWER`` pair."""
    _add_count(p, "--curves-inference", 200,
               "example resamples B = label permutations K of the curve inference of the "
               "accuracy objective: two-level bootstrap and null of every curve statistic")
    _add_count(p, "--curves-power", 20,
               "surrogates per kind for the power of the accuracy curve verdicts")
    p.add_argument("--curves-secondary", type=int, nargs=2, default=[50, 10],
                   metavar=("B", "POWER"),
                   help="curve inference B = K and power surrogates of each kind of the "
                        "usable-information objective (mi_readout)")


def _configure_report(p) -> None:
    p.add_argument("--root", type=Path, default=Path("runs/zoo"))
    p.add_argument("--out", type=Path, default=Path("docs/results/zoo"))
    p.add_argument("--from-contributions", action="store_true",
                   help="no checkpoints: rerun the analyses of the models recorded in "
                        "OUT/summary.json from their committed contributions "
                        "OUT/contributions/<model> (validated before any work)")
    p.add_argument("--analyses", nargs="*", default=["decompose", "curves"],
                   choices=("decompose", "curves"),
                   help="toolkit reports per model (none: only reread the finished ones; a "
                        "curves report of other settings is then left out of the summary)")
    _add_curve_sizes(p)
    _add_count(p, "--curves-report-size", 20,
               "example resamples B = label permutations K of the report-only claims "
               "(Theorem 8's Eq. 12 bounds) on the first curve objective")
    _add_count(p, "--resamples", 100,
               "stratified example resamples shared by every model, for the intervals over "
               "examples and seeds")
    _add_count(p, "--probe-null", 50, "label permutations of the probe bound on I(U;Y)")
    _add_count(p, "--information-null", 5,
               "label permutations inside every shared resample for the null-corrected "
               "Gaussian information terms across depth")
    p.add_argument("--reduced", nargs="*", default=[],
                   help="model-name substrings whose inference runs at --reduced-size "
                        "resamples/permutations (CPU budget of the M = 61 model)")
    p.add_argument("--reduced-size", type=int, default=20,
                   help="resamples = permutations for the --reduced models")
    p.add_argument("--reduced-curves", nargs="*", default=None,
                   help="curve objectives whose inference --reduced cuts (default: all)")
    p.add_argument("--only", nargs="*", default=None,
                   help="model-name substrings: analyse only these, write no summary")
    p.add_argument("--skip", nargs="*", default=[],
                   help="model-name substrings of finished checkpoints to leave out (listed "
                        "in the summary)")
    p.add_argument("--info-method", default="usable",
                   help="estimator of the headline information terms: 'usable' (valid for a "
                        "discrete label), a model-based one by name ('gaussian', ...); 'none' "
                        "skips")
    p.add_argument("--n-bootstrap", type=int, default=200,
                   help="example bootstrap of the information terms (0 with --n-permutations "
                        "0 skips)")
    p.add_argument("--n-permutations", type=int, default=19,
                   help="label permutations of the information terms' null (each reruns the "
                        "whole cross-fitted procedure)")
    p.add_argument("--data-dir", type=Path, default=None)
    add_adopt(p)
    p.add_argument("--quiet", action="store_true")


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    _configure_train(sub.add_parser("train", help="train or resume the zoo"))
    _configure_finetune(sub.add_parser("finetune", help="fine-tune SmolLM2 on the zoo rows"))
    _configure_report(sub.add_parser("report", help="extract and analyse finished checkpoints"))
    configure_depth(sub)


def _train(args) -> int:
    from infodiv.experiments.configs import ModelSpec, zoo_grid

    hops = rule = None
    if args.task == "hops":
        from infodiv.experiments.hops import HopsTask, train_len

        hops = fields_of(args, HopsTask, HOPS_OPTIONS)
        if args.restart_check:
            from infodiv.experiments.restarts import RestartRule

            rule = RestartRule(args.restart_check, args.max_restarts, args.restart_window)
    elif args.restart_check:
        raise ValueError("--restart-check applies to --task hops only (the AG News zoo "
                         "trains without restarts)")
    max_len = args.max_len or (64 if hops is None else train_len(hops))
    common = dict(width=args.width, heads=args.heads, mlp=args.mlp, max_len=max_len,
                  init_std=args.init_std)
    cfg = _schedule(args, lm_weight=args.lm_weight)
    specs = zoo_grid(args.depths, args.shared_depths, args.seeds, **common)
    specs += [ModelSpec(depth=d, seed=s, **common) for s in args.seeds for d in args.extra_depths]
    log = lambda m: print(m, flush=True)  # noqa: E731
    if hops is None:
        from infodiv.experiments.runner import train_zoo

        records = train_zoo(args.root, specs, cfg, vocab_size=args.vocab_size,
                            data_dir=args.data_dir, shard=args.shard, progress=not args.quiet,
                            device=args.device, log=log, overwrite=args.overwrite,
                            adopt=args.adopt)
    else:
        from infodiv.experiments.depth import train_depth

        records = train_depth(args.root, specs, cfg, hops, shard=args.shard,
                              progress=not args.quiet, device=args.device, log=log, rule=rule,
                              overwrite=args.overwrite, adopt=args.adopt)
    done = sum(bool(r.get("finished")) for r in records)
    print(f"{args.root}: {done}/{len(records)} model(s) finished", flush=True)
    return 0


def _finetune(args) -> int:
    from infodiv.experiments.data import zoo_tasks
    from infodiv.experiments.finetune import finetune, finetune_name
    from infodiv.experiments.trained import FINETUNE, check_folder
    from infodiv.study.checks import check_model

    cfg = _schedule(args)
    check_model(args.model)   # an unknown model: one line, exit 2, before any work
    log = lambda m: print(m, flush=True)  # noqa: E731
    run_dir = args.root / "finetune" / finetune_name(args.model, args.train_top, args.seed)
    check_folder(run_dir, FINETUNE, adopt=args.adopt, log=log)   # a file in the way: no work
    train, held = zoo_tasks(args.data_dir)
    rec = finetune(args.model, train, run_dir, cfg, train_top=args.train_top,
                   max_len=args.max_len, seed=args.seed,
                   heldout_task=None if args.no_heldout_eval else held,
                   progress=not args.quiet, device=args.device,
                   cache_prefix=not args.no_prefix_cache, overwrite=args.overwrite, log=log)
    acc = rec.get("heldout", {}).get("accuracy")
    print(f"{run_dir}: {rec['step']}/{cfg.steps} steps, {rec['s_per_step']:.2f} s/step"
          + ("" if acc is None else f", held-out accuracy {acc:.4f}"), flush=True)
    return 0


def _report(args) -> int:
    from infodiv.experiments.report import ZooSettings, curves_settings, report_zoo

    settings = ZooSettings(
        analyses=tuple(args.analyses),
        curves=curves_settings(args.curves_inference, args.curves_power,
                               secondary=args.curves_secondary,
                               report_size=args.curves_report_size),
        info_method=None if args.info_method == "none" else args.info_method,
        n_bootstrap=args.n_bootstrap, n_permutations=args.n_permutations,
        n_resamples=args.resamples, probe_null=args.probe_null,
        info_null=args.information_null, reduced=tuple(args.reduced),
        reduced_size=args.reduced_size,
        reduced_curves=None if args.reduced_curves is None else tuple(args.reduced_curves))
    records = report_zoo(args.root, args.out, settings, data_dir=args.data_dir,
                         only=args.only, skip=tuple(args.skip),
                         from_contributions=args.from_contributions, adopt=args.adopt,
                         progress=not args.quiet, log=lambda m: print(m, flush=True))
    for r in records:
        print(f"{r['model']}: M={r['n_members']} accuracy={r['accuracy']:.4f} "
              f"CE={r['cross_entropy']:.4f}")
    print(f"{args.out}: {len(records)} model(s)"
          + (" (--only: no summary written)" if args.only else " in summary.json"))
    return 0


def run(args) -> int:
    handlers = {"train": _train, "finetune": _finetune, "report": _report, **DEPTH_HANDLERS}
    if args.zoo_command not in handlers:
        print("infodiv zoo: choose a subcommand: " + ", ".join(handlers), file=sys.stderr)
        return 2
    from infodiv.runfiles import UserError

    try:
        return handlers[args.zoo_command](args)
    except (ValueError, FileNotFoundError, UserError) as exc:
        print(f"infodiv zoo {args.zoo_command}: {exc}", file=sys.stderr)
        return 2
