"""Batched Gaussian-I set values; writes benchmarks/results/gaussian_sets.json.

The DR chains of every replicate and every power surrogate score 4 sets per triple. For the
Gaussian information (``mi_gaussian``) each set used to cost three Cholesky factorisations
(pooled, two classes) through ``value``; :meth:`GaussianSetFunction.set_values` stacks the
sets of one size into one factorisation per covariance. Measured in one process, interleaved,
on a synthetic run of the SmolLM2 SST-2 shape (61 members, 872 examples, C = 2):

1. the 800 sets of 200 triples: per-set ``value`` (baseline) against ``set_values``;
2. one curve-pipeline replicate (10 random orders + the 200 triples): the pipeline with the
   per-set DR scoring (baseline, ``bench_inference.NaiveDR``) against the batched one;
3. the power detector on one shuffled-label surrogate (``FixedFitDetector``), per-set
   against batched. Gaussian I has per-example (pointwise) scores, so the detector fits the
   covariances once and reweights examples through ``scores`` per set, not ``set_values``:
   expect no change there (measured 1.00); what ``set_values`` speeds up is every refitted
   replicate of the real run's bootstrap and label null.

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

from infodiv.inference import CurvePipeline, dependent_ensemble, shuffled_labels
from infodiv.inference.power import FixedFitDetector
from infodiv.inference.verdicts import NullReference
from infodiv.setfunctions import make_set_function

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inference import NaiveDR  # noqa: E402  (the per-set baseline pipeline)

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
    pipe = CurvePipeline("mi_gaussian", n_orders=10, n_triples=200, information=False,
                         diversity=False)
    naive = NaiveDR("mi_gaussian", n_orders=10, n_triples=200, information=False,
                    diversity=False)
    sets = [s for a, b, x in pipe.triples(61) for s in (a, np.append(a, x), b, np.append(b, x))]
    out = {}
    with threadpool_limits(1):
        np.testing.assert_allclose(f.set_values(sets), [f.value(s) for s in sets], rtol=1e-10)
        per_set = cpu(lambda: [f.value(s) for s in sets], args.repeats)
        batched = cpu(lambda: f.set_values(sets), args.repeats)
        out["dr_sets"] = {"n_sets": len(sets), "per_set_cpu_s": per_set,
                          "batched_cpu_s": batched, "speedup": per_set / batched}
        rng = np.random.default_rng(0)
        p_naive = cpu(lambda: naive(run, rng), args.repeats)
        p_batch = cpu(lambda: pipe(run, rng), args.repeats)
        out["pipeline_replicate"] = {"n_orders": 10, "n_triples": 200,
                                     "per_set_cpu_s": p_naive, "batched_cpu_s": p_batch,
                                     "speedup": p_naive / p_batch}
        ref = NullReference(None, None, np.zeros((19, 200)))
        sur = shuffled_labels(run, random_state=1)
        times = {}
        for name, cls in (("per_set", NaiveDR), ("batched", CurvePipeline)):
            det = FixedFitDetector(cls("mi_gaussian", n_orders=10, n_triples=200,
                                       information=False, diversity=False), ref,
                                   n_bootstrap_refit=30)
            c0 = time.process_time()
            det(sur, np.random.default_rng(1))
            times[name] = time.process_time() - c0
        out["power_surrogate"] = {"per_set_cpu_s": times["per_set"],
                                  "batched_cpu_s": times["batched"],
                                  "speedup": times["per_set"] / times["batched"],
                                  "n_bootstrap_refit": 30}
    out.update(python=platform.python_version(), machine=platform.machine(),
               blas_threads=1, repeats=args.repeats)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
