"""LNC (``method="lnc"``, Gao, Ver Steeg & Galstyan 2015) against KSG; writes
benchmarks/results/bmi_lnc.json.

Four parts (the BMI tasks themselves are columns of bench_bmi.py -> bmi.json):

* ``alpha_rules``: the calibrated threshold (bias <= 0.002 nats on locally uniform
  neighbourhoods) against a fixed 0.5% quantile of ``Vbar / V`` there, on independent and
  rho = 0.999999 Gaussian pairs, k = 3, 5, 8 (n = 1000, 10 seeds);

* ``strong_dependence``: the paper's regime, bivariate Gaussians with ``rho`` up to 0.999999
  (``I = -log(1 - rho^2) / 2``) and ``Y = X + U(0, a)`` with ``X ~ U(0, 1)``
  (``I = a / 2 - log a``), n = 1000 and 5000, 5 seeds: KSG (default normal scores, k = 3;
  standardised at k = 8) and LNC (k = 5 and 8, standardised and on normal scores), plus
  independent pairs (``rho = 0``), where LNC must add nothing;
* ``groundtruth``: the quantities of estimators.groundtruth that LNC covers (continuous MI and
  TC, TC given labels by stratification, TC given a continuous Z), the samples of
  ``infodiv validate`` (n = 2000, 5 seeds, seed ``[s, crc32(case)]``): ``knn`` default (k = 3)
  beside ``lnc`` at ``k = max(5, D)`` and ``k = 2D``, with ``D`` the case's total continuous
  dimension (an upper bound on every quantity's joint dimension, which LNC needs k to reach),
  and KSG at ``k = 2D``; RMSE in bits;
* ``npeet``: NPEET's own LNC (npeet-plus ``mi(..., alpha=)``, k = 5) on three BMI tasks, where
  it diverges once ``k < d``, beside ours, which refuses ``k < d``.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from bench_bmi import npeet_lnc
from bench_preprocess import suite_samples

from estimators import mutual_information

OUT = Path(__file__).resolve().parent / "results" / "bmi_lnc.json"
SEEDS = 5


def _pairs():
    out = {}
    for rho in (0.0, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999):
        def gauss(n, s, rho=rho):
            cov = [[1.0, rho], [rho, 1.0]]
            z = np.random.default_rng(s).multivariate_normal([0.0, 0.0], cov, n)
            return z[:, :1], z[:, 1:]
        out[f"gaussian rho={rho}"] = (-0.5 * np.log1p(-rho**2), gauss)
    for a in (0.1, 0.01, 0.001):
        def band(n, s, a=a):
            rng = np.random.default_rng(s)
            x = rng.uniform(size=(n, 1))
            return x, x + a * rng.uniform(size=(n, 1))
        out[f"X + U(0,{a})"] = (a / 2 - np.log(a), band)
    return out


PAIR_METHODS = {
    "knn k=3 (default)": {"method": "knn", "k": 3},
    "knn standardize k=8": {"method": "knn", "k": 8, "preprocess": "standardize"},
    "lnc k=5": {"method": "lnc", "k": 5},
    "lnc k=8": {"method": "lnc", "k": 8},
    "lnc rank k=8": {"method": "lnc", "k": 8, "preprocess": "rank"},
}


def _summary(values, truth):
    v = np.asarray(values, dtype=float)
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)), "error": float(v.mean() - truth),
            "rmse": float(np.sqrt(np.mean((v - truth) ** 2))), "estimates": v.tolist()}


def strong_dependence(ns=(1000, 5000)):
    rows = []
    for n in ns:
        for name, (truth, sample) in _pairs().items():
            data = [sample(n, s) for s in range(SEEDS)]
            row = {"case": name, "n": n, "truth_nats": float(truth)}
            for label, kw in PAIR_METHODS.items():
                row[label] = _summary([mutual_information(x, y, base="e", random_state=s, **kw)
                                       for s, (x, y) in enumerate(data)], truth)
            rows.append(row)
            print(f"{name:<22} n={n:<5} truth {truth:6.3f} " + "  ".join(
                f"{m} {row[m]['mean']:.3f}" for m in PAIR_METHODS), flush=True)
    return rows


def alpha_rules(n=1000, seeds=10):
    """The calibrated alpha (added bias <= UNIFORM_BIAS on uniform neighbourhoods) against a
    fixed 0.5% quantile of Vbar/V on uniform neighbourhoods: independent and rho = 0.999999
    Gaussian pairs, k = 3, 5, 8, standardised, mean over seeds (nats)."""
    from estimators.lnc import CALIBRATION_DRAWS, _uniform_ratios, calibrated_alpha

    rows = []
    for rho in (0.0, 0.999999):
        truth, sample = _pairs()[f"gaussian rho={rho}"]
        data = [sample(n, 200 + s) for s in range(seeds)]
        for k in (3, 5, 8):
            alphas = {"bias-calibrated": calibrated_alpha(k, 2),
                      "0.5% quantile": float(np.exp(np.quantile(
                          _uniform_ratios(k, 2, CALIBRATION_DRAWS), 0.005)))}
            row = {"rho": rho, "k": k, "n": n, "truth_nats": float(truth),
                   "ksg": _summary([mutual_information(x, y, k=k, base="e", random_state=s,
                                                       preprocess="standardize")
                                    for s, (x, y) in enumerate(data)], truth)}
            for rule, a in alphas.items():
                row[rule] = {"alpha": a, **_summary([mutual_information(
                    x, y, method="lnc", k=k, alpha=a, base="e", random_state=s)
                    for s, (x, y) in enumerate(data)], truth)}
            rows.append(row)
            print(f"alpha rules rho={rho} k={k}: ksg {row['ksg']['mean']:.3f} " + "  ".join(
                f"{r} (alpha {row[r]['alpha']:.3f}) {row[r]['mean']:.3f}" for r in alphas),
                flush=True)
    return rows


def _continuous_dim(data) -> int:
    return sum(a.shape[1] if a.ndim == 2 else 1 for a in data.values()
               if np.issubdtype(a.dtype, np.floating))


def groundtruth(n=2000):
    rows = []
    for name, case, samples in suite_samples(n, SEEDS):
        dim = _continuous_dim(samples[0])
        settings = {"knn k=3 (default)": {"method": "knn", "k": 3},
                    f"knn standardize k=2D={2 * dim}": {"method": "knn", "k": 2 * dim,
                                                        "preprocess": "standardize"},
                    f"lnc k=max(5,D)={max(5, dim)}": {"method": "lnc", "k": max(5, dim)},
                    f"lnc k=2D={2 * dim}": {"method": "lnc", "k": 2 * dim}}
        for q in case.quantities:
            row = {"case": name, "quantity": q.name, "true_bits": float(q.true_bits),
                   "D": dim, "methods": {}}
            for label, kw in settings.items():
                try:
                    v = [q.estimate(d, random_state=s, **kw) for s, d in enumerate(samples)]
                except ValueError as exc:  # no LNC form (entropy, mixed MI, CMI)
                    row["methods"][label] = {"not_covered": str(exc)}
                    continue
                row["methods"][label] = _summary(v, q.true_bits)
            rows.append(row)
            print(f"{name:<24} {q.name:<9} " + "  ".join(
                f"{m} {r['rmse']:.4f}" for m, r in row["methods"].items() if "rmse" in r),
                flush=True)
    return rows


def ours_beside_npeet(n=5000, seeds=2, k=5):
    from estimators.bmi import tasks

    rows = []
    for name in ("student-identity-2-2-1", "asinh-student-identity-3-3-2",
                 "multinormal-sparse-5-5"):
        task = tasks()[name]
        try:
            v = [mutual_information(*task.sample(n, s), method="lnc", k=k, base="e",
                                    random_state=s) for s in range(seeds)]
            rows.append({"task": name, "k": k, **_summary(v, task.true_nats)})
        except ValueError as exc:
            rows.append({"task": name, "k": k, "refused": str(exc)})
    return rows


def main():
    warnings.simplefilter("ignore")
    t0 = time.time()
    result = {"machine": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg()},
              "seeds": SEEDS, "alpha_rules": alpha_rules(),
              "strong_dependence": strong_dependence(),
              "groundtruth": groundtruth(),
              "npeet": npeet_lnc(), "ours_at_npeet_k": ours_beside_npeet()}
    result["machine"]["loadavg_end"] = os.getloadavg()
    result["seconds"] = time.time() - t0
    result["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
