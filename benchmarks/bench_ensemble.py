"""Benchmark: every ensemble decomposition + junction curves at N = 2000, M = 129, C = 4.

Target (issue 4): all decompositions and the junction curves in <= 1 s on 2 cores. The baseline,
timed in the same run on the same data, is the naive form of the same computations: a Python
loop over examples for each decomposition and a loop over junctions (one vectorised
decomposition per prefix) for the curves. Both give the same numbers (checked here).

Run: ``python benchmarks/bench_ensemble.py``; writes ``benchmarks/results/ensemble.json``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp, softmax

from estimators.bvc import bias_variance_covariance
from estimators.ensemble import bias_diversity, paper_eq14
from extraction.contributions import Contributions, Member
from infodiv.junctions import junction_curves
from infodiv.runs import ensemble_arrays

N, M, C = 2000, 129, 4
TARGET_S = 1.0
OUT = Path(__file__).resolve().parent / "results" / "ensemble.json"
VARIANTS = [("squared", "logit"), ("squared", "probability"), ("cross_entropy", "logit")]


def make_run(seed=0) -> Contributions:
    """MobileLLM-350M-LS-sized run: embed + 64 × (attn, mlp), RMSNorm (no constant member)."""
    rng = np.random.default_rng(seed)
    members = [Member("embed", "embed")] + [
        Member(f"L{i // 2}.{kind}#0", kind, i // 2) for i, kind in
        enumerate(["attn", "mlp"] * ((M - 1) // 2))]
    u = (rng.standard_normal((N, M, C)) * rng.gamma(2.0, 0.5, (1, M, 1))).astype(np.float32)
    scale = np.cumsum(rng.gamma(2.0, 0.1, (N, M)), axis=1).astype(np.float32)
    return Contributions(u, np.zeros(C, np.float32), rng.integers(0, C, N), u.sum(1),
                         scale, members, list("ABCD"), meta={"model": "synthetic-129",
                                                             "task": "bench"})


def arrays(run):
    """What estimators takes for a run (infodiv.runs.ensemble_arrays)."""
    return ensemble_arrays(run)


def vectorised(run):
    out, a = {}, arrays(run)
    for (loss, space), scale in [(v, s) for v in VARIANTS for s in ("mean", "sum")]:
        out[f"bias_diversity/{loss}/{space}/{scale}"] = bias_diversity(
            **a, loss=loss, space=space, scale=scale)
    out["paper_eq14"] = paper_eq14(a["u"], a["labels"], bias=a["bias"])
    out["bias_variance_covariance"] = bias_variance_covariance(a["u"], a["labels"],
                                                               bias=a["bias"])
    out["junction_curves"] = junction_curves(run)
    return out


def naive_example(v, t, y):
    """All decompositions for ONE example ([M, C] members) with plain loops over members."""
    m = v.shape[0]
    res = {}
    for space in ("logit", "probability"):
        mem = softmax(v, axis=1) if space == "probability" else v
        ens = mem.mean(0)
        res[space] = (np.mean((t - ens) ** 2), np.mean([np.mean((t - x) ** 2) for x in mem]),
                      np.mean([np.mean((ens - x) ** 2) for x in mem]))
    logq = [x - logsumexp(x) for x in v]
    lqbar = v.mean(0) - logsumexp(v.mean(0))
    res["ce"] = (-lqbar[y], np.mean([-lq[y] for lq in logq]),
                 np.mean([np.sum(np.exp(lqbar) * (lqbar - lq)) for lq in logq]))
    e = v - t
    ec = e - e.mean(1, keepdims=True)
    cov = ec @ ec.T / v.shape[1]                              # member covariance matrix
    res["bvc"] = (np.mean(e.mean(1)), np.mean(e.var(1)),
                  (cov.sum() - np.trace(cov)) / (m * (m - 1)))
    return res


def baseline(run):
    u = run.u.astype(np.float64)
    eye = np.eye(C)
    per_example = [naive_example(s * u[i], eye[run.labels[i]], run.labels[i])
                   for s in (1, M) for i in range(N)]
    curves = []
    for k in range(1, M + 1):                                 # one decomposition per junction
        sq = bias_diversity(u[:, :k], run.labels)
        ce = bias_diversity(u[:, :k], run.labels, loss="cross_entropy")
        acc = (u[:, :k].sum(1).argmax(1) == run.labels).mean()
        curves.append((acc, sq.loss, sq.bias, sq.diversity, ce.loss, ce.diversity))
    return per_example, np.array(curves)


def timed(fn, *args, repeat=1):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    run = make_run()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t_vec, res = timed(vectorised, run, repeat=3)
    parts = {}
    a = arrays(run)
    for name, fn in [("bias_diversity x6", lambda: [bias_diversity(**a, loss=lo, space=sp,
                                                                  scale=sc)
                                                   for (lo, sp) in VARIANTS
                                                   for sc in ("mean", "sum")]),
                     ("paper_eq14", lambda: paper_eq14(a["u"], a["labels"], bias=a["bias"])),
                     ("bias_variance_covariance",
                      lambda: bias_variance_covariance(a["u"], a["labels"], bias=a["bias"])),
                     ("junction_curves (fixed, logit, mean)", lambda: junction_curves(run))]:
        parts[name] = timed(fn, repeat=3)[0]
    extra = {}
    for label, kw in [("junction_curves logit_lens mean", {"readout": "logit_lens"}),
                      ("junction_curves logit_lens mean, cross_entropy=False",
                       {"readout": "logit_lens", "cross_entropy": False}),
                      ("junction_curves fixed sum (pairwise softmax terms)", {"scale": "sum"}),
                      ("junction_curves logit_lens sum probability (pairwise)",
                       {"readout": "logit_lens", "scale": "sum", "space": "probability"})]:
        extra[label] = timed(lambda kw=kw: junction_curves(run, **kw))[0]
    t_base, (per_example, curves) = timed(baseline, run)

    # the two implementations agree
    cur = res["junction_curves"]
    got = np.column_stack([cur.accuracy, cur.mse, cur.bias, cur.diversity, cur.cross_entropy,
                           cur.ce_diversity])
    err_curves = float(np.abs(got - curves).max())           # both in bits (base=2)
    ce_naive = np.array([r["ce"] for r in per_example[:N]])[:, 0] / np.log(2)
    err_ce = float(np.abs(res["bias_diversity/cross_entropy/logit/mean"].loss_examples
                          - ce_naive).max())
    result = {
        "shape": {"N": N, "M": M, "C": C},
        "target_s": TARGET_S,
        "vectorised_total_s": round(t_vec, 4),
        "meets_target": bool(t_vec <= TARGET_S),
        "vectorised_parts_s": {k: round(v, 4) for k, v in parts.items()},
        "baseline_total_s": round(t_base, 3),
        "baseline": "Python loop over examples per decomposition + loop over junctions",
        "speedup_vs_baseline": round(t_base / t_vec, 1),
        "max_abs_difference_vs_baseline": {"junction_curves": err_curves,
                                           "cross_entropy_per_example": err_ce},
        "other_junction_configs_s": {k: round(v, 3) for k, v in extra.items()},
        "machine": {"cpus": os.cpu_count(), "load_avg_1min": round(load, 2),
                    "python": platform.python_version(), "numpy": np.__version__},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
