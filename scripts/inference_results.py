"""Issue 9's statistics on one real run; writes docs/results/inference/<name>/.

Usage: ``python scripts/inference_results.py RUN_DIR OUT [--resamples 100] [--power 20]``

Computes, with one seeded stream per replicate (seed 0):

1. the information terms of all members with their label-permutation null: the valid usable
   terms (I(U;Y) with its bracket, relevancy, D with its paired bootstrap) and the model-based
   Gaussian and copula terms, labelled and flagged above H(Y)
   (``infodiv.inference.information_terms.information_inference``);
2. subsampling of the Gaussian (model-based) I(U;Y) and D at n, n/2, n/4 with the 1/n
   extrapolation and its interval;
3. the curve statistics of ``accuracy_calibrated`` and ``mi_gaussian`` (g(k) slope with and
   without g(1), DR mean difference and per-triple BH tests, growth-law choice) under the
   two-level bootstrap and the null (``infodiv.inference.curve_inference``);
4. with ``--power N``: the detection rate of the calibrated-accuracy tests on N conditionally
   independent and N shuffled-label surrogates of the run (same pipeline, same n).

Everything is written as JSON (full numbers) and markdown.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from infodiv.inference.report import POWER_TESTS

from extraction.contributions import Contributions
from infodiv.inference import (
    CurvePipeline,
    bootstrap_detector,
    curve_inference,
    curve_inference_markdown,
    surrogate_power,
)
from infodiv.inference.information_terms import ModelBasedTerms, information_inference
from infodiv.inference.subsampling import subsample_extrapolation
from infodiv.reports.serialize import write_json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("out")
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--power", type=int, default=0)
    args = ap.parse_args()
    run = Contributions.load(args.run_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    b = args.resamples
    t0 = time.process_time()
    doc = {"run": {"dir": args.run_dir, "N": run.n_examples, "M": run.n_members,
                   "meta": {k: run.meta.get(k) for k in ("model", "task")}}}
    doc["information"] = information_inference(run, ("usable", "gaussian", "copula"),
                                               n_resamples=b, n_null=max(19, b // 5))
    gaussian = ModelBasedTerms()
    doc["subsampling"] = {f"{t} (gaussian, model-based)": subsample_extrapolation(
        run, lambda r, t=t: gaussian(r, None)[t], n_subsamples=5, n_bootstrap=30)
        for t in ("joint", "diversity")}
    md = []
    for obj in ("accuracy_calibrated", "mi_gaussian"):
        doc[obj] = curve_inference(run, obj, n_bootstrap=b, n_permutations=b, n_mc=5,
                                   n_orders=10, n_triples=100, growth_replicates=20,
                                   information=False, progress=False)
        md.append(curve_inference_markdown(doc[obj]))
    if args.power:
        pipe = CurvePipeline("accuracy_calibrated", n_orders=10, n_triples=100,
                             information=False)
        doc["power"] = surrogate_power(run, bootstrap_detector(pipe, POWER_TESTS,
                                                               n_bootstrap=50),
                                       kinds=("conditionally_independent", "shuffled_labels"),
                                       n_replicates=args.power, progress=False)
    doc["cpu_s"] = time.process_time() - t0
    write_json(out / "inference.json", doc)
    (out / "curves_inference.md").write_text("\n".join(md))
    print(json.dumps({"cpu_s": doc["cpu_s"], "out": str(out)}))


if __name__ == "__main__":
    main()
