"""Benchmark: the claims engine against the pipeline it replaces, on the same verdicts.

Both sides compute the four curve verdicts of one objective — diminishing returns (g(k)
slope), the DR mean, violations (step-down test) and the diversity effect — with the same
example bootstrap (B, everything refitted), label null (K), Monte-Carlo reruns, random orders
per replicate, DR chains and power surrogates per kind:

- ``pipeline``: :func:`infodiv.inference.report.curve_inference` without the growth laws and
  the information terms (which are not verdicts);
- ``engine``: :func:`infodiv.inference.engine.evaluate` of the registry's curve claims
  (:data:`infodiv.claims.CURVE_CLAIMS`).

The run is synthetic of the SmolLM2 block run's shape (872 examples, 61 members, C = 2,
calibrated accuracy about 0.64: :func:`infodiv.inference.dependent_ensemble`). Process CPU
seconds of one process (``n_jobs = 1``), so the number does not depend on other load; the
ratio engine / pipeline is written to ``benchmarks/results/inference_engine.json`` with the
sizes, and the check that both gave the same estimates and verdicts.

Run: ``python benchmarks/bench_inference_engine.py [--b 200 --power 20]`` (the defaults are
the report's sizes and take tens of CPU minutes; ``--b 20 --power 4`` takes a few).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from infodiv.claims import CURVE_CLAIMS, get_claims
from infodiv.inference.claim import Design
from infodiv.inference.engine import evaluate
from infodiv.inference.report import curve_inference
from infodiv.inference.synthetic import dependent_ensemble

OUT = Path(__file__).resolve().parent / "results" / "inference_engine.json"
SLOPE, DR = "diminishing_returns", "dr_mean_difference_positive"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--b", type=int, default=200, help="B = K (example resamples, permutations)")
    ap.add_argument("--power", type=int, default=20, help="surrogates of each kind")
    ap.add_argument("--objective", default="accuracy_calibrated")
    ap.add_argument("--n-examples", type=int, default=872)
    ap.add_argument("--n-members", type=int, default=61)
    args = ap.parse_args(argv)
    if args.b < 20 or args.power < 0:
        ap.error(f"--b must be >= 20 and --power >= 0, got {args.b} and {args.power}")
    run = dependent_ensemble(args.n_examples, args.n_members, signal=0.055, rho=0.3,
                             random_state=0)
    sizes = {"n_bootstrap": args.b, "n_permutations": args.b, "n_mc": 10, "n_orders": 20,
             "n_triples": 100, "power": args.power}
    with threadpool_limits(1):
        c0 = time.process_time()
        old = curve_inference(run, args.objective, n_bootstrap=args.b, n_permutations=args.b,
                              n_mc=10, n_orders=20, n_triples=100, growth_laws=False,
                              information=False, power_replicates=args.power, random_state=0,
                              progress=False)
        c1 = time.process_time()
        triples = [(t["A"], t["B"], t["x"]) for t in old["dr"]["triples"]]
        new = evaluate(run, get_claims(CURVE_CLAIMS),
                       Design(args.objective, n_orders=20, triples=triples),
                       n_bootstrap=args.b, n_permutations=args.b, n_mc=10,
                       n_power=args.power, random_state=0)["records"]
        c2 = time.process_time()
    same = {"slope": old["gain_slope"]["slope"] == new[SLOPE].estimate,
            "dr_mean": old["dr"]["mean_difference"] == new[DR].estimate,
            "verdicts": all(v["detected"] == new[k].detected
                            for k, v in old["verdicts"].items())}
    doc = {"sizes": sizes, "objective": args.objective,
           "run": {"n_examples": args.n_examples, "n_members": args.n_members},
           "pipeline_cpu_s": c1 - c0, "engine_cpu_s": c2 - c1,
           "ratio_engine_over_pipeline": (c2 - c1) / (c1 - c0), "same": same,
           "machine": {"cpu": platform.processor() or platform.machine(),
                       "cores": os.cpu_count()},
           "date": time.strftime("%Y-%m-%d")}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    runs = json.loads(OUT.read_text()) if OUT.exists() else {}
    runs[f"b{args.b}_power{args.power}_{args.objective}"] = doc
    OUT.write_text(json.dumps(runs, indent=1) + "\n")
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
