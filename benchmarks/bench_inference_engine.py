"""Benchmark: the full inferential curves report through the claims engine, against a
single-fit baseline measured in the same process.

The report is :func:`infodiv.study.curves.curves_stage` of one objective with every default
(curves, greedy searches, point estimates, the four curve claims' verdict records from
:func:`infodiv.inference.engine.evaluate` — B example resamples with everything refitted, K = B
label permutations, 10 Monte-Carlo reruns, 20 orders per replicate, the DR chains, ``--power``
surrogates of each kind — the selection claims, greedy stability, the layer graph, figures).

The baseline is the same engine replicate with every DR set fitted on its own (one calibration
fit per set, ``benchmarks/_per_set.py``) instead of the batched scoring, timed on a few
replicates and scaled to the report's B + K + Monte-Carlo replicates
(``baseline_report_cpu_s_estimated``); both replicates give the same statistics (checked).
``ratio_bootstrap_and_null_over_baseline`` compares the engine's bootstrap and null (the
verdicts without power) with it, ``ratio_report_over_baseline`` the whole report.
``verdicts_cpu_s`` and ``selection_cpu_s`` are the engine's CPU seconds of the curve claims and
of the selection claims (bootstrap and null, power); ``selection_replicate_cpu_s`` is one
replicate of the selection claims (two held-out greedy searches and 50 random orders on halves
of the rows), timed like the baseline; ``verdicts`` and ``selection_verdicts`` keep each claim's
detection, estimate and power rate. The compiled calibration kernels are loaded (in a fresh
checkout: compiled) before anything is timed (``kernel_load_cpu_s``).

The target: the full report of the SmolLM2 block run's shape (61 members, 872 prompts, C = 2,
calibrated accuracy about 0.64; synthetic, :func:`infodiv.inference.dependent_ensemble`, or a
run folder with ``--run``) at B = K = 200 and 20 surrogates per kind in at most half the CPU
time committed for the same report by the pipeline the engine replaced
(``benchmarks/results/inference.json``, ``full_curves_report.cpu_s``: 520 CPU s). Process CPU
seconds of one process with one BLAS thread (``n_jobs = 1``), so the number does not depend
on other load; ``meets_target`` is recorded only at the target's sizes.

Run: ``python benchmarks/bench_inference_engine.py`` (the report's sizes: several CPU
minutes); ``--b 20 --power 2`` takes a few CPU minutes on the full shape. Writes
``benchmarks/results/inference_engine.json``, one entry per sizes, objective and run shape.
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

import numpy as np
from threadpoolctl import threadpool_limits

from infodiv.claims import claim_names, get_claims
from infodiv.inference.claim import Design
from infodiv.inference.engine import ClaimStatistics
from infodiv.inference.synthetic import dependent_ensemble
from infodiv.setfunctions import fit_calibration
from infodiv.study import StudySettings
from infodiv.study.curves import curves_stage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _per_set import PerSetStatistics  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "inference_engine.json"
REFERENCE = HERE / "results" / "inference.json"
FULL = {"b": 200, "power": 20}


def load_kernels() -> float:
    """CPU seconds to load the compiled calibration kernels from numba's cache (to compile
    them, about 10 CPU s, in a fresh checkout), done before anything is timed."""
    c0 = time.process_time()
    fit_calibration(np.zeros((1, 2, 4)), np.array([0, 1, 0, 1]))
    return time.process_time() - c0


def replicate_cpu(pipe, run, repeats: int) -> tuple[float, dict]:
    """CPU seconds per replicate of ``pipe`` (mean of ``repeats``) and the last statistics."""
    rng = np.random.default_rng(0)
    c0 = time.process_time()
    for _ in range(repeats):
        out = pipe(run, rng)
    return (time.process_time() - c0) / repeats, out


def same_statistics(a: dict, b: dict) -> bool:
    return all(np.allclose(a[k], b[k], rtol=1e-9, atol=1e-12, equal_nan=True) for k in a)


def summary(verdicts: dict) -> dict:
    """Detection, estimate and power rate of each verdict record."""
    return {k: {"detected": v["detected"], "estimate": v["estimate"],
                "power": (v["power"] or {}).get("rate")} for k, v in verdicts.items()}


def load_run(args):
    if args.run is None:
        return dependent_ensemble(args.n_examples, args.n_members, signal=0.055, rho=0.3,
                                  random_state=0)
    from extraction.contributions import Contributions

    return Contributions.load(args.run)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--b", type=int, default=FULL["b"], help="B = K (resamples, permutations)")
    ap.add_argument("--power", type=int, default=FULL["power"], help="surrogates of each kind")
    ap.add_argument("--objective", default="accuracy_calibrated")
    ap.add_argument("--run", type=Path, default=None,
                    help="a run folder (default: synthetic of the SmolLM2 block shape)")
    ap.add_argument("--n-examples", type=int, default=872)
    ap.add_argument("--n-members", type=int, default=61)
    ap.add_argument("--repeats", type=int, default=2, help="baseline replicates timed")
    args = ap.parse_args(argv)
    if args.b < 20 or args.power < 0 or args.repeats < 1:
        ap.error(f"--b must be >= 20, --power >= 0 and --repeats >= 1, got {args.b}, "
                 f"{args.power} and {args.repeats}")
    if args.run is not None and not (args.run / "meta.json").exists():
        ap.error(f"--run {args.run}: not a run folder (no meta.json)")
    run = load_run(args)
    settings = StudySettings().with_settings(objectives=(args.objective,),
                                             claims=claim_names("curve"), n_bootstrap=args.b,
                                             power_replicates=args.power)
    c, inf = settings.curves, settings.inference
    design = Design(args.objective, {"ridge": c.ridge}, n_orders=inf.n_orders,
                    n_triples=c.n_triples)
    claims = get_claims(c.claims)
    n_replicates = args.b + inf.k + inf.n_mc
    with threadpool_limits(1):
        kernels = load_kernels()
        batched, out_b = replicate_cpu(ClaimStatistics(claims, design), run, args.repeats)
        per_set, out_p = replicate_cpu(PerSetStatistics(claims, design), run, args.repeats)
        selection, _ = replicate_cpu(ClaimStatistics(
            get_claims(claim_names("selection")),
            Design(args.objective, {"ridge": c.ridge}, n_random=settings.selection.n_random)),
            run, args.repeats)
        with tempfile.TemporaryDirectory() as tmp:
            t0, c0 = time.perf_counter(), time.process_time()
            doc = curves_stage(run, tmp, settings, log=lambda *a: None)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    entry = doc["objectives"][args.objective]
    if "error" in entry:
        print(f"bench_inference_engine: the report failed: {entry['error']}", file=sys.stderr)
        return 1
    reference = json.loads(REFERENCE.read_text())["full_curves_report"]["cpu_s"]
    full = args.b == FULL["b"] and args.power == FULL["power"]
    result = {
        "sizes": {**inf.sizes(), "n_triples": c.n_triples, "n_curve_orders": c.n_curve_orders,
                  "n_random": settings.selection.n_random, "stability": c.stability},
        "objective": args.objective,
        "run": {"source": str(args.run) if args.run else "synthetic (dependent_ensemble)",
                "n_examples": run.n_examples, "n_members": run.n_members},
        "report_cpu_s": cpu, "report_wall_s": wall, "kernel_load_cpu_s": kernels,
        "verdicts_cpu_s": entry["cpu_s"],
        "selection_cpu_s": (doc.get("selection", {}).get("inference") or {}).get("cpu_s"),
        "selection_replicate_cpu_s": selection,
        "replicate_cpu_s": batched, "baseline_replicate_cpu_s": per_set,
        "baseline_same_statistics": same_statistics(out_b, out_p),
        "n_replicates": n_replicates,
        "baseline_report_cpu_s_estimated": per_set * n_replicates,
        "ratio_report_over_baseline": cpu / (per_set * n_replicates),
        "ratio_bootstrap_and_null_over_baseline": (entry["cpu_s"]["inference"]
                                                   / (per_set * n_replicates)),
        "reference_cpu_s": reference, "target_cpu_s": reference / 2,
        "meets_target": bool(cpu <= reference / 2) if full else None,
        "verdicts": summary(entry["verdicts"]),
        "selection_verdicts": summary((doc.get("selection", {}).get("inference") or {})
                                      .get("verdicts", {})),
        "machine": {"python": platform.python_version(),
                    "cpu": platform.processor() or platform.machine(),
                    "cores": os.cpu_count(), "blas_threads": 1, "n_jobs": 1},
        "date": time.strftime("%Y-%m-%d"),
    }
    runs = json.loads(OUT.read_text()) if OUT.exists() else {}
    # entries of the comparison with the replaced pipeline have no report_cpu_s: dropped
    runs = {k: v for k, v in runs.items() if "report_cpu_s" in v}
    key = f"b{args.b}_power{args.power}_{args.objective}_n{run.n_examples}_m{run.n_members}"
    runs[key] = result
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(runs, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("report_cpu_s", "baseline_report_cpu_s_estimated",
                                             "ratio_report_over_baseline", "target_cpu_s",
                                             "meets_target", "baseline_same_statistics")},
                     indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
