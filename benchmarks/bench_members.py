"""Information about a label on synthetic members with a known answer: infodiv's default
beside NPEET, ennemi and a plain logistic probe, in one run.

Cases: :mod:`estimators.members_truth` (exact ``I(U;Y)``, ``I(U_m;Y)``, ``D``). Every method
sees the same samples and estimates the joint ``I(U;Y)`` and every member's ``I(U_m;Y)`` on its
whole ``C``-vector; ``R`` is the sum, ``D = I - R``.

* infodiv: ``estimators.information_decomposition(u, y)`` with default arguments;
* infodiv_reference: the same estimator as it stood at commit
  :data:`bench_usable_speed.REFERENCE` (before its solvers were rewritten for speed; loaded
  from git by :func:`bench_usable_speed.load_reference`), for the accuracy before and after
  (``--no-reference`` leaves it out);
* NPEET (npeet-plus): ``micd`` (KSG-type mixed continuous / discrete MI, k = 3) on the stacked
  coordinates and on each member;
* ennemi: the chain rule ``sum_j I(Y; X_j | X_<j)`` with ``discrete_y=True`` (its estimators
  take one scalar ``x`` at a time), skipped above :data:`ENNEMI_MAX_DIMS` coordinates;
* probe: scikit-learn ``LogisticRegression()`` (defaults) on standardised coordinates,
  5-fold stratified cross-fitted ``H(Y) - CE``.

Time = process CPU seconds per full decomposition (joint + every member), after one untimed
call that loads the compiled kernels. Writes
``benchmarks/results/members.json`` with per-seed estimates, errors and, per case, the ratios
``|error| peer / |error| infodiv`` and ``CPU peer / CPU infodiv`` (same run).
Usage: ``python benchmarks/bench_members.py [--n 2000] [--seeds 2] [--cases a,b]
[--no-reference]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _npeet import load_npeet  # noqa: E402

from estimators import information_decomposition  # noqa: E402
from estimators.members_truth import member_cases, truth  # noqa: E402

ENNEMI_MAX_DIMS = 16
CASES = ("binary_M4", "four_M8", "binary_M16_warped", "binary_M61")
OUT = Path(__file__).resolve().parent / "results" / "members.json"


def _h_y(y):
    p = np.bincount(y) / len(y)
    return float(-(p[p > 0] * np.log2(p[p > 0])).sum())


def probe_bits(x, y):
    """H(Y) - 5-fold cross-fitted CE of a default LogisticRegression (bits)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    proba = cross_val_predict(model, x, y, cv=folds, method="predict_proba")
    ce = -np.mean(np.log2(np.maximum(proba[np.arange(len(y)), y], np.finfo(float).tiny)))
    return _h_y(y) - ce


def ennemi_bits(x, y):
    import ennemi

    if x.shape[1] > ENNEMI_MAX_DIMS:
        return None
    total = 0.0
    for j in range(x.shape[1]):
        kw = {"cond": x[:, :j]} if j else {}
        total += float(np.asarray(ennemi.estimate_mi(y, x[:, j], k=3, discrete_y=True,
                                                     max_threads=1, **kw)).ravel()[0])
    return total / np.log(2)


def methods(reference=True):
    ee, _ = load_npeet()

    def infodiv(u, y):
        d = information_decomposition(u, y)
        return d.joint, list(d.relevancies)

    def decomposition(fn):
        def run(u, y):
            d = fn(u, y)
            return d.joint, list(d.relevancies)
        return run

    def per_member(fn):
        def run(u, y):
            joint = fn(u.reshape(len(u), -1), y)
            if joint is None:
                return None
            return joint, [fn(u[:, m], y) for m in range(u.shape[1])]
        return run

    out = {"infodiv": infodiv}
    if reference:
        from bench_usable_speed import load_reference

        out["infodiv_reference"] = decomposition(load_reference())
    out.update(probe=per_member(probe_bits), ennemi=per_member(ennemi_bits))
    if ee is not None:
        out["npeet"] = per_member(lambda x, y: float(ee.micd(x, y[:, None], k=3, base=2)))
    return out


def run(n, seeds, names, reference=True):
    models = member_cases()
    fns = methods(reference)
    # the first call of a process loads the compiled kernels (numba's cache): not timed
    information_decomposition(*models["binary_M4"].sample(300, np.random.default_rng(0)))
    result = {"n": n, "seeds": seeds, "cases": {}}
    for name in names:
        model, tr = models[name], truth(models[name])
        entry = {"truth": {k: tr[k] for k in ("joint", "relevancy", "diversity", "h_y")},
                 "methods": {}}
        for seed in range(seeds):
            u, y = model.sample(n, np.random.default_rng([seed, 99]))
            for method, fn in fns.items():
                c0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = fn(u, y)
                cpu = time.process_time() - c0
                rec = entry["methods"].setdefault(method, {"estimates": []})
                if got is None:
                    rec["skipped"] = f"more than {ENNEMI_MAX_DIMS} coordinates"
                    continue
                joint, rel = got
                rec["estimates"].append({"joint": joint, "relevancy": float(np.sum(rel)),
                                         "diversity": joint - float(np.sum(rel)),
                                         "cpu_s": cpu})
                print(f"{name} seed {seed} {method:8s} I {joint:8.3f} (truth "
                      f"{tr['joint']:.3f})  R {np.sum(rel):8.3f} ({tr['relevancy']:.3f})  "
                      f"cpu {cpu:6.1f} s", flush=True)
        _summarise(entry)
        result["cases"][name] = entry
    return result


def _summarise(entry):
    tr = entry["truth"]
    for rec in entry["methods"].values():
        if not rec["estimates"]:
            continue
        for q in ("joint", "relevancy", "diversity"):
            v = np.array([e[q] for e in rec["estimates"]])
            rec[f"{q}_abs_error"] = float(np.mean(np.abs(v - tr[q])))
        rec["above_h_y"] = int(sum(e["joint"] > tr["h_y"] for e in rec["estimates"]))
        rec["cpu_s"] = float(np.mean([e["cpu_s"] for e in rec["estimates"]]))
    ours = entry["methods"]["infodiv"]
    entry["ratios_vs_infodiv"] = {
        m: {**{f"{q}_abs_error": rec[f"{q}_abs_error"] / max(ours[f"{q}_abs_error"], 1e-12)
               for q in ("joint", "relevancy", "diversity")},
            "cpu": rec["cpu_s"] / ours["cpu_s"]}
        for m, rec in entry["methods"].items() if m != "infodiv" and rec["estimates"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-reference", dest="reference", action="store_false")
    args = parser.parse_args(argv)
    t0 = time.time()
    result = run(args.n, args.seeds, [c for c in args.cases.split(",") if c], args.reference)
    result["wall_s"] = time.time() - t0
    result["load_average"] = list(__import__("os").getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    for name, entry in result["cases"].items():
        print(name, json.dumps(entry["ratios_vs_infodiv"]))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
