"""``infodiv run``: the whole study for one model and task, offline by default.

1. ``infodiv extract`` — exact per-member contributions (resumable run directory);
2. ``infodiv decompose`` — bias–diversity (Theorems 1–3), junction curves, information
   decomposition (Theorem 4);
3. ``infodiv curves`` — layer-addition curves and submodularity diagnostics (Theorems 5–8).

With no arguments it runs the embedded default: the real stories260K model from
``../shared/models`` on all 872 SST-2 dev examples from ``../shared/data`` (set
``INFODIV_SHARED`` to point elsewhere). Everything lands in ``--out`` with a ``README.md`` that
links the reports. Rerunning resumes: finished extraction shards are reused.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    """``$INFODIV_SHARED`` or the ``shared`` folder beside the repository."""
    return Path(os.environ.get("INFODIV_SHARED", ROOT.parent / "shared"))


def default_model() -> str:
    return str(shared_dir() / "models" / "stories260K" / "hf")


def configure(parser) -> None:
    parser.add_argument("--model", default=None,
                        help="hub id, folder, .gguf or 'smollm2-135m' (default: stories260K "
                             "from ../shared/models)")
    parser.add_argument("--task", default="sst2")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="default: ../shared/data when present")
    parser.add_argument("--granularity", default="block", choices=("block", "head"))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, default=None,
                        help="default runs/<model>-<task>-<granularity>")
    parser.add_argument("--objective", nargs="+", default=None,
                        help="set functions for the curves (default: those of infodiv curves)")
    parser.add_argument("--n-permutations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")


def _sub_args(module, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with ``module``'s own parser so every default stays in one place."""
    parser = argparse.ArgumentParser()
    module.configure(parser)
    return parser.parse_args(argv)


def run(args) -> int:
    from infodiv.commands import curves, decompose, extract

    model = args.model or default_model()
    if args.model is None and not Path(model).is_dir():
        raise SystemExit(f"infodiv run: the default model is not at {model}; pass --model or "
                         "set INFODIV_SHARED")
    data_dir = args.data_dir
    if data_dir is None and (shared_dir() / "data").is_dir():
        data_dir = shared_dir() / "data"
    out = args.out or extract._default_out(model, args.task, args.granularity)
    contrib_dir = out / "contributions"
    t0 = time.perf_counter()
    argv = ["--model", model, "--task", args.task, "--n", str(args.n), "--device", args.device,
            "--granularity", args.granularity, "--out", str(contrib_dir)]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    if args.quiet:
        argv.append("--quiet")
    steps = [("extract", extract, argv),
             ("decompose", decompose, [str(contrib_dir), "--out", str(out / "decompositions"),
                                       "--seed", str(args.seed)]),
             ("curves", curves, [str(contrib_dir), "--out", str(out / "curves"),
                                 "--seed", str(args.seed),
                                 "--n-permutations", str(args.n_permutations)]
              + (["--objective", *args.objective] if args.objective else []))]
    timings = {}
    for name, module, sub_argv in steps:
        print(f"== infodiv {name}")
        t = time.perf_counter()
        status = module.run(_sub_args(module, sub_argv))
        timings[name] = time.perf_counter() - t
        if status:
            print(f"infodiv run: step {name} failed (exit {status})")
            return status
    (out / "README.md").write_text(
        f"# infodiv run: {Path(model).name} on {args.task}\n\n"
        f"- contributions: `contributions/` (meta.json records model, task, exactness)\n"
        f"- decompositions: `decompositions/decompositions.md`\n"
        f"- curves and submodularity: `curves/report.md`\n\n"
        f"Wall time: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        + f" (total {time.perf_counter() - t0:.1f} s).\n")
    print(f"infodiv run: done in {time.perf_counter() - t0:.1f} s; see {out / 'README.md'}")
    return 0
