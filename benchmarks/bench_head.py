"""Benchmark: a head run's analysis (M = 301 members, n = 1000 examples, C = 4 options, the
demo's sizes) in process CPU seconds, beside the implementation it replaced.

The run is synthetic (:func:`infodiv.inference.synthetic.dependent_ensemble`: members that
share a latent factor, so they are dependent given the label, with per-member label signal)
at the size of a SmolLM2-135M head run on the demo's 1000 AG News rows. The stages are those
of ``infodiv run`` after the extraction, with the demo's settings
(:mod:`infodiv.commands.demo`): the decompositions and the curves with every verdict. Both
sides run in child processes with one job and one BLAS thread
(``benchmarks/_analysis_sides.py``: the reference is the analysis as it stood at its commit,
loaded from git), one after the other in the same call.

By default the unit of the engine's cost is measured: one example-resample and one
label-permutation replicate of the curve and control claims per objective
(``replicates``), with the curves stage's CPU projected from them
(``projected_verdict_cpu_s``: (B + n_mc) resamples and K permutations per objective; power,
the drawn curves and selection left out, so it is a lower bound). ``--full`` runs the whole
decompositions and curves stages on both sides instead (hours on 2 cores).
Writes ``benchmarks/results/head.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the head run's shape (members, examples, options) and the target on 2 idle cores
SHAPE, TARGET_S = (301, 1000, 4), 600.0


def head_run(folder: Path) -> Path:
    """The synthetic head-sized run saved under ``folder``."""
    from infodiv.inference.synthetic import dependent_ensemble

    m, n, c = SHAPE
    run = dependent_ensemble(n, m, n_options=c, signal=0.15, rho=0.3, random_state=0)
    return run.save(folder / "head-run")


def projected(side: dict, settings) -> float:
    """Σ over objectives of (B + n_mc)·resample + K·permutation replicate CPU."""
    total = 0.0
    for obj, cell in side["replicates"].items():   # (the shared part once: first - steady)
        s = settings.inference.for_objective(obj)
        total += ((s.n_bootstrap + s.n_mc) * cell["bootstrap"] + s.k * cell["permutation"]
                  + cell["permutation_first"] - cell["permutation"])
    return total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the whole stages on both sides")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "head.json")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _analysis_sides import _settings, side_by_side

    stages = ("decompose", "curves") if args.full else ("replicates",)
    with tempfile.TemporaryDirectory(prefix="infodiv-bench-head-") as tmp:
        res = side_by_side(head_run(Path(tmp)), stages=stages)
    settings = _settings(None, None)
    res.update(shape={"members": SHAPE[0], "examples": SHAPE[1], "options": SHAPE[2]},
               sizes=settings.inference.sizes(), target_s=TARGET_S, cpu_count=os.cpu_count(),
               machine=platform.processor() or platform.machine(),
               date_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if not args.full:
        res["projected_verdict_cpu_s"] = {side: projected(res[side], settings)
                                          for side in ("reference", "new")}
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"head: ratio {res.get('ratio_replicates') or res['ratio']} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
