"""Batched Gaussian-I set values; writes benchmarks/results/gaussian_sets.json.

The DR chains of every replicate and every power surrogate score 4 sets per triple. For the
Gaussian information (``mi_gaussian``) each set used to cost three Cholesky factorisations
(pooled, two classes) through ``value``; :meth:`GaussianSetFunction.set_values` stacks the
sets of one size into one factorisation per covariance. Measured in one process, interleaved,
on a synthetic run of the SmolLM2 SST-2 shape (61 members, 872 examples, C = 2):

1. the 800 sets of 200 DR chains: per-set ``value`` (baseline) against ``set_values``;
2. one replicate of the engine's chain claims (diminishing returns over 10 random orders, the
   DR mean and the violations' per-chain differences on the 200 chains): the DR sets scored
   one by one (baseline, ``benchmarks/_per_set.py``) against the batched scoring, same
   numbers. This is what every refitted replicate of the real run's bootstrap and label null
   costs. The power surrogates do not use ``set_values``: Gaussian I has per-example scores,
   so a surrogate is judged by the claims' one-fit shortcut (examples reweighted).

Process CPU time, best of ``--repeats`` (robust to other jobs on a shared machine).
Run: ``python benchmarks/bench_gaussian_sets.py`` (about a minute of CPU).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from infodiv.claims import get_claims
from infodiv.inference import dependent_ensemble
from infodiv.inference.claim import Design
from infodiv.inference.engine import ClaimStatistics
from infodiv.setfunctions import make_set_function

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _per_set import PerSetStatistics  # noqa: E402  (the per-set baseline)

CLAIMS = ("diminishing_returns", "dr_mean_difference_positive", "violations")

OUT = Path(__file__).resolve().parent / "results" / "gaussian_sets.json"


def cpu(fn, repeats):
    best = None
    for _ in range(repeats):
        c0 = time.process_time()
        fn()
        t = time.process_time() - c0
        best = t if best is None else min(best, t)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="best of this many")
    args = ap.parse_args(argv)
    run = dependent_ensemble(872, 61, signal=0.055, rho=0.3, random_state=0)
    f = make_set_function(run, "mi_gaussian")
    design = Design("mi_gaussian", n_orders=10, n_triples=200)
    sets = [s for a, b, x in design.chains(61) for s in (a, np.append(a, x), b, np.append(b, x))]
    out = {}
    with threadpool_limits(1):
        np.testing.assert_allclose(f.set_values(sets), [f.value(s) for s in sets], rtol=1e-10)
        per_set = cpu(lambda: [f.value(s) for s in sets], args.repeats)
        batched = cpu(lambda: f.set_values(sets), args.repeats)
        out["dr_sets"] = {"n_sets": len(sets), "per_set_cpu_s": per_set,
                          "batched_cpu_s": batched, "speedup": per_set / batched}
        pipes = {"per_set": PerSetStatistics(get_claims(CLAIMS), design),
                 "batched": ClaimStatistics(get_claims(CLAIMS), design)}
        stats = {k: p(run, np.random.default_rng(0)) for k, p in pipes.items()}
        for name in CLAIMS:
            np.testing.assert_allclose(stats["batched"][name], stats["per_set"][name],
                                       rtol=1e-9, atol=1e-12)
        times = {k: cpu(lambda p=p: p(run, np.random.default_rng(0)), args.repeats)
                 for k, p in pipes.items()}
        out["engine_replicate"] = {"claims": list(CLAIMS), "n_orders": 10, "n_triples": 200,
                                   "per_set_cpu_s": times["per_set"],
                                   "batched_cpu_s": times["batched"],
                                   "speedup": times["per_set"] / times["batched"]}
    out.update(python=platform.python_version(), machine=platform.machine(),
               blas_threads=1, repeats=args.repeats)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
