"""BMI tasks (Czyż et al. 2023; estimators.bmi) with infodiv beside NPEET, ennemi and frites.

Every method sees the very same samples (n = 5000 by default, 5 seeds). Reported per task and
method: truth, mean estimate, RMSE over seeds (nats) and mean seconds per estimate. Methods:

* infodiv ``knn`` with ``preprocess="standardize"`` and ``"rank"`` (KSG on marginal normal
  scores), ``chain`` (scalar chain rule on normal scores) and ``copula``;
* infodiv ``lnc`` (KSG with the local non-uniformity correction of Gao, Ver Steeg & Galstyan
  2015; needs ``k >= d = d_x + d_y``) at ``k = max(5, d)`` and ``k = 2d``, standardised (its
  default) and on normal scores, beside KSG at ``k = 2d``;
* NPEET ``mi`` (through npeet-plus): KSG on the raw data;
* ennemi: its KSG/Frenzel–Pompe over scalar pieces, ``sum_ij I(X_i; Y_j | X_<i, Y_<j)``
  (``estimate_mi`` with ``cond=``, ennemi's default unit-variance preprocessing), the scalar
  chain rule the issue compares against;
* frites: ``mi_nd_gg`` on ``copnorm_nd`` (its Gaussian-copula MI, bits converted to nats).

The chains cost ``d_x d_y`` conditional estimates; they are skipped (and say so) above
``--max-chain-terms`` terms. Also records the pass count of ennemi's analytic unit-test cases
(tests/ennemi_cases.py) for each ``preprocess``. frites needs mne, so it lives in a benchmark
environment: ``python -m venv --system-site-packages V && V/bin/pip install frites``, then
``V/bin/python benchmarks/bench_bmi.py``; missing peers are skipped and named in the output.
``--lnc-only`` measures NPEET's LNC correction (``alpha``) on three tasks (also part of
bench_lnc.py's bmi_lnc.json).

Writes benchmarks/results/bmi.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _npeet import load_npeet

from estimators import mutual_information
from estimators.bmi import tasks

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bmi.json"


def _ennemi():
    try:
        import ennemi
        return ennemi
    except ImportError:
        return None


def _frites():
    try:
        from frites.core import copnorm_nd, mi_nd_gg
        return copnorm_nd, mi_nd_gg
    except ImportError:
        return None


def ennemi_chain(en, x, y, k=3):
    """``sum_ij I(X_i; Y_j | X_<i, Y_<j)`` with ennemi's estimators (nats)."""
    total = 0.0
    for i in range(x.shape[1]):
        for j in range(y.shape[1]):
            cond = np.hstack([x[:, :i], y[:, :j]])
            kw = {"cond": cond} if cond.shape[1] else {}
            total += float(np.asarray(en.estimate_mi(y[:, j], x[:, i], k=k, max_threads=1,
                                                     **kw)).ravel()[0])
    return total


def _dim(x, y) -> int:
    return x.shape[1] + y.shape[1]


def methods(max_chain_terms: int):
    ee, which = load_npeet()
    en, fr = _ennemi(), _frites()
    out = {
        "infodiv knn standardize": lambda x, y, s: mutual_information(
            x, y, base="e", preprocess="standardize", random_state=s),
        "infodiv knn rank": lambda x, y, s: mutual_information(
            x, y, base="e", preprocess="rank", random_state=s),
        "infodiv chain": lambda x, y, s: (
            mutual_information(x, y, method="chain", base="e", random_state=s)
            if x.shape[1] * y.shape[1] <= max_chain_terms else None),
        "infodiv copula": lambda x, y, s: mutual_information(
            x, y, method="copula", base="e", random_state=s),
        # LNC needs k >= d = d_x + d_y; KSG at the same k separates the effect of k
        "infodiv knn standardize k=2d": lambda x, y, s: mutual_information(
            x, y, k=2 * _dim(x, y), base="e", preprocess="standardize", random_state=s),
        "infodiv lnc k=max(5,d)": lambda x, y, s: mutual_information(
            x, y, method="lnc", k=max(5, _dim(x, y)), base="e", random_state=s),
        "infodiv lnc k=2d": lambda x, y, s: mutual_information(
            x, y, method="lnc", k=2 * _dim(x, y), base="e", random_state=s),
        "infodiv lnc rank k=max(5,d)": lambda x, y, s: mutual_information(
            x, y, method="lnc", k=max(5, _dim(x, y)), base="e", preprocess="rank",
            random_state=s),
        "infodiv lnc rank k=2d": lambda x, y, s: mutual_information(
            x, y, method="lnc", k=2 * _dim(x, y), base="e", preprocess="rank",
            random_state=s),
    }
    skipped = {}
    if ee is not None:
        out[f"NPEET mi ({which})"] = lambda x, y, s: float(ee.mi(x, y, k=3, base=np.e))
    else:
        skipped["NPEET"] = which
    if en is not None:
        out["ennemi chain"] = lambda x, y, s: (
            ennemi_chain(en, x, y) if x.shape[1] * y.shape[1] <= max_chain_terms else None)
    else:
        skipped["ennemi"] = "not importable"
    if fr is not None:
        copnorm_nd, mi_nd_gg = fr
        out["frites gcmi"] = lambda x, y, s: float(mi_nd_gg(
            copnorm_nd(x.T, axis=-1), copnorm_nd(y.T, axis=-1), mvaxis=0, traxis=-1)) * np.log(2)
    else:
        skipped["frites"] = "not importable (install it in a benchmark venv)"
    return out, skipped


def run_tasks(n, seeds, max_chain_terms, only=None):
    fns, skipped = methods(max_chain_terms)
    rows = []
    for name, task in tasks().items():
        if only and name not in only:
            continue
        samples = [task.sample(n, s) for s in range(seeds)]
        for mname, fn in fns.items():
            values, times = [], []
            for s, (x, y) in enumerate(samples):
                np.random.seed(s)  # noqa: NPY002 - NPEET draws its noise from the global RNG
                t0 = time.perf_counter()
                v = fn(x, y, s)
                times.append(time.perf_counter() - t0)
                if v is None:
                    break
                values.append(float(v))
            row = {"task": name, "method": mname, "truth_nats": task.true_nats, "n": n}
            if not values:
                row["skipped"] = f"more than {max_chain_terms} chain terms ({task.dim_x} x " \
                                 f"{task.dim_y})"
            else:
                v = np.asarray(values)
                row.update(estimates=values, mean=float(v.mean()),
                           rmse=float(np.sqrt(np.mean((v - task.true_nats) ** 2))),
                           seconds=float(np.mean(times)))
            rows.append(row)
            print(f"{name:<32} {mname:<34} truth {task.true_nats:.3f} "
                  + (f"mean {row['mean']:.3f} rmse {row['rmse']:.3f} {row['seconds']:.2f}s"
                     if values else row["skipped"]), flush=True)
    return rows, skipped


def ennemi_case_counts():
    sys.path.insert(0, str(ROOT / "tests"))
    from ennemi_cases import cases

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pre in (None, "standardize", "rank", "none"):
            failed = [c.name for c in cases() if not c.passes(c.value(pre))]
            out[pre or "default"] = {"passed": len(cases()) - len(failed),
                                     "total": len(cases()), "failed": failed}
    return out


def npeet_lnc(n=5000, seeds=2, alphas=(0.0, 0.1, 0.25), k=5,
              names=("student-identity-2-2-1", "asinh-student-identity-3-3-2",
                     "multinormal-sparse-5-5")):
    """NPEET's local non-uniformity correction (Gao, Ver Steeg & Galstyan 2015; ``alpha``) on
    three tasks (it diverges once k < d_x + d_y; ours, method="lnc", refuses that k)."""
    ee, which = load_npeet()
    if ee is None:
        return {"skipped": which}
    rows = []
    for name in names:
        task = tasks()[name]
        samples = [task.sample(n, s) for s in range(seeds)]
        for alpha in alphas:
            values = []
            for s, (x, y) in enumerate(samples):
                np.random.seed(s)  # noqa: NPY002 - NPEET draws its noise from the global RNG
                values.append(float(ee.mi(x, y, k=k, base=np.e, alpha=alpha)))
            v = np.asarray(values)
            rows.append({"task": name, "alpha": alpha, "k": k, "truth_nats": task.true_nats,
                         "estimates": values,
                         "rmse": float(np.sqrt(np.mean((v - task.true_nats) ** 2)))})
            print(f"NPEET LNC {name:<32} alpha {alpha}: rmse {rows[-1]['rmse']:.3f}", flush=True)
    return {"implementation": which, "n": n, "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--max-chain-terms", type=int, default=25)
    ap.add_argument("--tasks", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--lnc-only", action="store_true",
                    help="only NPEET's LNC rows, to benchmarks/results/bmi_lnc.json")
    args = ap.parse_args(argv)
    if args.lnc_only:
        path = OUT.with_name("bmi_lnc.json")
        path.write_text(json.dumps(npeet_lnc(), indent=1) + "\n")
        print(f"wrote {path}")
        return
    t0 = time.time()
    rows, skipped = run_tasks(args.n, args.seeds, args.max_chain_terms, args.tasks)
    result = {"machine": {"cpus": os.cpu_count(), "loadavg": os.getloadavg(),
                          "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
              "n": args.n, "seeds": args.seeds, "rows": rows, "peers_skipped": skipped,
              "ennemi_cases": ennemi_case_counts(), "seconds": time.time() - t0}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["ennemi_cases"], indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
