"""Benchmark of the kNN backend (estimators.knn); writes benchmarks/results/knn.json.

1. Speed of KSG mutual information, 2+2 dims (and 1+1), k = 3, n = 10,000 and 50,000: ours
   against NPEET's ``mi`` (npeet-plus), ennemi's KSG (its internal ``_estimate_single_mi``,
   which takes vector variables; its public API pairs scalar columns) and scikit-learn's
   ``mutual_info_regression`` (1-D only), on the same data, interleaved, ``--repeats`` times;
   ratios per repeat and their medians. Once on all cores of this process, once pinned to one
   core (``taskset -c 0`` child process, one thread everywhere).
2. knn TC + conditional TC (binary labels) over 61 variables x 3 dims, n = 2000: wall time
   against the 2 s target, in one shared pass (``total_correlation_with_conditional``) and as two
   separate calls; estimates against the exact values of a label model with vector blocks.
3. Accuracy on equicorrelated scalar Gaussians (rho = 0.2, n = 2000; m = 61: exact TC 7.81
   bits): knn TC against the truth by the number of variables, ``preprocess`` standardize and
   rank (the dimension behind the kNN warning of estimators.diagnostics).
4. Small-sample bias of the Frenzel-Pompe CMI on the Gaussian cov [[1,1,1],[1,4,1],[1,1,9]]
   (exact 0.187 bits) at n = 10, 25, 50, 200 for each ``preprocess`` and NPEET's ``cmi``.

Run: ``python benchmarks/bench_knn.py`` (a few minutes on 2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy
import sklearn
from _npeet import load_npeet
from _timing import best_time
from sklearn.feature_selection import mutual_info_regression

from estimators import knn
from estimators.groundtruth import capacity  # C(a) nats: I(U;Y) for U = a Y + N(0,1)

OUT = Path(__file__).resolve().parent / "results" / "knn.json"
LOG2 = np.log(2)


def _ennemi_ksg():
    try:
        from ennemi._entropy_estimators import _estimate_single_mi
        return _estimate_single_mi
    except ImportError:
        return None


def _speed_once(n, repeats, seed=0):
    """Interleaved timings at one n; per-repeat ratios peer / ours and their medians."""
    rng = np.random.default_rng(seed)
    cov = np.array([[1, .3, .5, .2], [.3, 1, .1, .4], [.5, .1, 1, .3], [.2, .4, .3, 1]])
    data = rng.multivariate_normal(np.zeros(4), cov, size=n)
    x, y, x1, y1 = data[:, :2], data[:, 2:], data[:, :1], data[:, 2:3]
    ee, which = load_npeet()
    en = _ennemi_ksg()
    runs = {
        "ours_2d_2d": lambda: knn.mutual_information(x, y, k=3, rng=np.random.default_rng(1),
                                                     preprocess="standardize"),
        "ours_1d_1d": lambda: knn.mutual_information(x1, y1, k=3, rng=np.random.default_rng(1),
                                                     preprocess="standardize"),
        "sklearn_1d_1d": lambda: float(mutual_info_regression(
            x1, y1[:, 0], n_neighbors=3, random_state=0)[0]),
    }
    if ee is not None:
        runs["npeet_2d_2d"] = lambda: float(ee.mi(x, y, k=3, base=np.e))
    if en is not None:
        runs["ennemi_2d_2d"] = lambda: float(en(x, y, k=3))
        runs["ennemi_1d_1d"] = lambda: float(en(x1, y1, k=3))
    for fn in runs.values():  # warm up (numba compilation, caches)
        fn()
    times = {name: [] for name in runs}
    values = {}
    for _ in range(repeats):
        for name, fn in runs.items():
            t, v = best_time(fn, repeats=1)
            times[name].append(t["seconds"])
            values[name] = float(v)
    out = {"n": n, "npeet_implementation": which, "seconds": times, "estimates_nats": values,
           "exact_nats_2d_2d": 0.5 * (np.linalg.slogdet(cov[:2, :2])[1]
                                      + np.linalg.slogdet(cov[2:, 2:])[1]
                                      - np.linalg.slogdet(cov)[1])}
    ratios = {}
    for peer, ours in [("npeet_2d_2d", "ours_2d_2d"), ("ennemi_2d_2d", "ours_2d_2d"),
                       ("sklearn_1d_1d", "ours_1d_1d"), ("ennemi_1d_1d", "ours_1d_1d")]:
        if peer in times:
            r = np.asarray(times[peer]) / np.asarray(times[ours])
            ratios[f"{peer}_over_{ours}"] = {"median": float(np.median(r)), "all": r.tolist()}
    out["speed_ratios"] = ratios
    return out


def bench_speed(repeats=7, sizes=(10_000, 50_000)):
    """This process's cores; the child pinned to one core is started by :func:`main`."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": cores, "targets": {"npeet_2_cores": 3.0, "npeet_1_core": 1.5},
            "by_n": [_speed_once(n, repeats) for n in sizes]}


def _speed_one_core(repeats):
    """Run :func:`bench_speed` in a child pinned to CPU 0 with one thread everywhere."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    cmd = ["taskset", "-c", "0", sys.executable, str(Path(__file__).resolve()), "--speed-child",
           "--repeats", str(repeats)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _small_n_rows(draw, truth, sizes, seeds):
    ee, _ = load_npeet()
    rows = []
    for n, n_seeds in zip(sizes, seeds):
        est = {p: [] for p in (*knn.PREPROCESS, "npeet")}
        for s in range(n_seeds):
            x, y, z = draw(np.random.default_rng([n, s]), n)
            for p in knn.PREPROCESS:
                est[p].append(knn.conditional_mutual_information(
                    x, y, z, k=3, rng=np.random.default_rng(s), preprocess=p) / LOG2)
            if ee is not None:
                np.random.seed(s)  # noqa: NPY002 - NPEET's noise comes from the global RNG
                est["npeet"].append(float(ee.cmi(x, y, z, k=3, base=2)))
        row = {"n": n, "seeds": n_seeds}
        for p, v in est.items():
            if v:
                v = np.asarray(v)
                row[p] = {"mean_bits": float(v.mean()), "bias_bits": float(v.mean() - truth),
                          "se_bits": float(v.std(ddof=1) / np.sqrt(len(v)))}
        rows.append(row)
    return rows


def bench_small_n_cmi(sizes=(10, 25, 50, 200), seeds=(400, 200, 100, 50)):
    """Mean bias (bits) of the kNN CMI at small n, per preprocess, and NPEET's cmi, on two
    cases: a Gaussian with very different scales (cov [[1,1,1],[1,4,1],[1,1,9]]) and a
    correlated pair (rho = 0.7144) with an independent U(0, 1) conditioner (CMI = MI =
    0.515 bits), where the raw conditioner's small scale keeps it out of the max-norm balls."""
    cov = np.array([[1.0, 1.0, 1.0], [1.0, 4.0, 1.0], [1.0, 1.0, 9.0]])
    ld = lambda idx: np.linalg.slogdet(cov[np.ix_(idx, idx)])[1]  # noqa: E731
    chol = np.linalg.cholesky(cov)

    def gaussian(rng, n):
        d = rng.standard_normal((n, 3)) @ chol.T
        return d[:, :1], d[:, 1:2], d[:, 2:]

    rho = 0.7144

    def pair_uniform(rng, n):
        x = rng.standard_normal((n, 1))
        y = rho * x + np.sqrt(1 - rho**2) * rng.standard_normal((n, 1))
        return x, y, rng.uniform(0, 1, (n, 1))

    t1 = 0.5 * (ld([0, 2]) + ld([1, 2]) - ld([0, 1, 2]) - ld([2])) / LOG2
    t2 = -0.5 * np.log2(1 - rho**2)
    return {
        "gaussian_cov_1_4_9": {"exact_bits": t1, "k": 3,
                               "rows": _small_n_rows(gaussian, t1, sizes, seeds)},
        "pair_with_uniform_conditioner": {"exact_bits": t2, "k": 3,
                                          "rows": _small_n_rows(pair_uniform, t2, sizes,
                                                                seeds)},
    }


def bench_npeet_anchors(n=2000, m=61, rho=0.2, seed=0):
    """NPEET's tc / ctc on the equicorrelated case (sums of separately biased KL entropies)."""
    ee, which = load_npeet()
    if ee is None:
        return {"skipped": which}
    from estimators import total_correlation

    cov = np.full((m, m), rho) + (1 - rho) * np.eye(m)
    u = np.random.default_rng(seed).standard_normal((n, m)) @ np.linalg.cholesky(cov).T
    labels = np.random.default_rng(seed + 1).integers(0, 2, n)
    return {
        "implementation": which,
        "problem": f"{m} scalar Gaussians, pairwise correlation {rho}, n={n}, k=3; "
                   "labels independent of the data (true conditional TC = true TC)",
        "exact_tc_bits": -0.5 * np.linalg.slogdet(cov)[1] / LOG2,
        "npeet_tc_bits": float(ee.tc(u, k=3)),
        "npeet_ctc_bits": float(ee.ctc(u, labels[:, None], k=3)),
        "ours_gaussian_tc_bits": total_correlation(u, method="gaussian"),
        "ours_gaussian_conditional_tc_bits": total_correlation(u, given=labels,
                                                               method="gaussian"),
    }


def bench_tc(n=2000, m=61, d=3, a=0.3, seed=0):
    """Label model with vector blocks: U_b = a Y e/sqrt(d) + N(0, I_d), Y = +-1 equiprobable.

    Exact: I(U_b;Y) = C(a), I(U;Y) = C(a sqrt(m)), TC(U|Y) = 0, TC(U) = m C(a) - C(a sqrt(m)).
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    shift = a * (2 * labels - 1)[:, None] / np.sqrt(d)
    blocks = [shift + rng.standard_normal((n, d)) for _ in range(m)]
    tc_true = m * capacity(a) - capacity(a * np.sqrt(m))
    t_pair, (tc, ctc) = best_time(lambda: knn.total_correlation_with_conditional(
        blocks, labels, k=3, rng=np.random.default_rng(1)), repeats=5)
    t_sep, (tc2, ctc2) = best_time(lambda: (
        knn.total_correlation(blocks, k=3, rng=np.random.default_rng(1)),
        knn.conditional_total_correlation(blocks, labels, k=3, rng=np.random.default_rng(1))))
    return {
        "problem": f"{m} variables x {d} dims, n={n}, binary labels, k=3; label model a={a}",
        "target_seconds": 2.0,
        "shared_pass": t_pair,
        "meets_target": t_pair["seconds"] <= 2.0,
        "two_separate_calls": t_sep,
        "tc_bits": {"estimate": tc / LOG2, "exact": tc_true / LOG2},
        "conditional_tc_bits": {"estimate": ctc / LOG2, "exact": 0.0},
        "separate_calls_agree": bool(np.isclose(tc, tc2, rtol=1e-12, atol=1e-12)
                                     and np.isclose(ctc, ctc2, rtol=1e-12, atol=1e-12)),
    }


def bench_equicorrelated(n=2000, sizes=(5, 10, 15, 20, 30, 61), rho=0.2, seeds=3):
    """knn TC of m equicorrelated scalars against the exact value, per preprocess."""
    rows = []
    for m in sizes:
        cov = np.full((m, m), rho) + (1 - rho) * np.eye(m)
        truth = -0.5 * np.linalg.slogdet(cov)[1] / LOG2
        chol = np.linalg.cholesky(cov)
        row = {"m": m, "exact_tc_bits": truth}
        for p in ("standardize", "rank"):
            est, times = [], []
            for s in range(seeds):
                u = np.random.default_rng([m, s]).standard_normal((n, m)) @ chol.T
                t0 = time.perf_counter()
                est.append(knn.total_correlation(list(u.T[:, :, None]), k=3,
                                                 rng=np.random.default_rng(100 + s),
                                                 preprocess=p) / LOG2)
                times.append(time.perf_counter() - t0)
            est = np.asarray(est)
            row[p] = {"mean_bits": float(est.mean()), "sd_bits": float(est.std(ddof=1)),
                      "relative_error": float((est.mean() - truth) / truth),
                      "seconds_per_estimate": float(np.mean(times))}
        rows.append(row)
        print(f"equicorrelated m={m}: exact {truth:.3f} bits, standardize "
              f"{row['standardize']['relative_error']:+.1%}, rank "
              f"{row['rank']['relative_error']:+.1%}", flush=True)
    return {"problem": f"m scalar Gaussians, pairwise correlation {rho}, n={n}, k=3, "
                       f"{seeds} seeds", "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description="kNN benchmark")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--speed-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--speed-only", action="store_true",
                    help="rerun only the two speed sections and update them in knn.json")
    args = ap.parse_args(argv)
    if args.speed_child:
        print(json.dumps(bench_speed(args.repeats), default=float))
        return
    if args.speed_only:
        result = json.loads(OUT.read_text())
        load0 = os.getloadavg()
        result["ksg_mi_speed_all_cores"] = bench_speed(args.repeats)
        result["ksg_mi_speed_one_core"] = _speed_one_core(args.repeats)
        result["speed_machine"] = {"loadavg_at_start": load0, "loadavg_at_end": os.getloadavg(),
                                   "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                             time.gmtime())}
        OUT.write_text(json.dumps(result, indent=2, default=float) + "\n")
        for key in ("ksg_mi_speed_all_cores", "ksg_mi_speed_one_core"):
            for by_n in result[key]["by_n"]:
                print(key, by_n["n"], {k: round(v["median"], 2)
                                        for k, v in by_n["speed_ratios"].items()})
        return
    warnings.simplefilter("ignore")
    result = {
        "machine": {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg(),
                    "python": platform.python_version(), "numpy": np.__version__,
                    "scipy": scipy.__version__, "sklearn": sklearn.__version__,
                    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "ksg_mi_speed_all_cores": bench_speed(args.repeats),
        "ksg_mi_speed_one_core": _speed_one_core(args.repeats),
    }
    for key in ("ksg_mi_speed_all_cores", "ksg_mi_speed_one_core"):
        for by_n in result[key]["by_n"]:
            print(key, by_n["n"], {k: round(v["median"], 2)
                                    for k, v in by_n["speed_ratios"].items()}, flush=True)
    result["small_n_cmi_bias"] = bench_small_n_cmi()
    result["tc_conditional_tc_61x3"] = bench_tc()
    result["equicorrelated_tc_by_dimension"] = bench_equicorrelated()
    result["npeet_anchor_failures"] = bench_npeet_anchors()
    result["machine"]["loadavg_at_end"] = os.getloadavg()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2, default=float) + "\n")
    print(json.dumps(result["small_n_cmi_bias"], indent=1, default=float))


if __name__ == "__main__":
    main()
