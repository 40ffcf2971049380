"""Benchmark of layer-addition curves; writes benchmarks/results/curves.json.

Synthetic Contributions (U_m = μ_m·onehot(Y) + noise), C = 4, N = 2000, against the targets of
issue 5, each with a naive baseline measured in the same run:

1. greedy forward + backward, readout objectives (raw accuracy, raw cross-entropy), M = 129
   (target 5 s) and M = 301 (target 30 s). Baseline: the same search through the generic
   set-function protocol (one fresh Σ_{m∈S} u_m and one scoring per candidate set).
2. greedy forward + backward with the calibrated cross-entropy (temperature + offsets fitted per
   candidate set, cross-fitted), M = 129 (target 5 s, the readout target). Batched damped Newton
   over all candidates, warm-started from extrapolated fits of the previous step; checked against
   independent cold per-set fits along both greedy paths. Before (commit d7481e3, one Newton
   solve per fold over the strided [K, C, n] logits, warm-started from the current set): 36.6 s.
3. greedy forward + backward with the Gaussian I(U_S;Y), M = 129 (target 60 s), incremental
   log-determinants. Baseline: a Cholesky per candidate set (``GaussianBlockMI.value``); it is run
   in full at M = 40 (ratio measured there) and for the first 3 forward steps at M = 129.
4. 200 random orders, raw readout, M = 129 (target 10 s). Baseline: the generic state loop
   (one scoring per prefix) on 20 orders, scaled to 200.

Run: ``python benchmarks/bench_curves.py`` (a few minutes on 2 shared cores). BLAS is limited
to one thread (small matrices; oversubscription on a shared machine costs more than it gains).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from infodiv.controls import conditionally_independent_ensemble
from infodiv.curves import greedy_backward, greedy_forward, random_order_values
from infodiv.setfunctions import SetFunction, make_set_function

OUT = Path(__file__).resolve().parent / "results" / "curves.json"


class Generic(SetFunction):
    """Naive baseline: the base-class protocol around a set function's own ``scores``."""

    def __init__(self, f):
        super().__init__(f.n_members, f.n_examples)
        self.f, self.name, self.greater_is_better = f, f.name, f.greater_is_better

    def scores(self, members):
        return self.f.scores(members)

    def value(self, members):
        return self.f.value(members)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def data(m, seed=0, n=2000, c=4):
    mu = np.random.default_rng(seed + 1).uniform(0.0, 0.25, m)
    return conditionally_independent_ensemble(n, m, n_options=c, mu=mu, random_state=seed)


def fwd_bwd(f):
    t_f, (order_f, vals_f, _) = timed(lambda: greedy_forward(f))
    t_b, (order_b, vals_b, _) = timed(lambda: greedy_backward(f))
    return {"forward_s": t_f, "backward_s": t_b, "total_s": t_f + t_b}, order_f, order_b


def bench_readout(m, objectives, target):
    c = data(m)
    out = {"M": m, "N": c.n_examples, "C": c.n_options, "target_s": target}
    for obj in objectives:
        f = make_set_function(c, obj)
        res, of, ob = fwd_bwd(f)
        res["meets_target"] = res["total_s"] <= target
        if m <= 129:
            base, bf, bb = fwd_bwd(Generic(f))
            res["baseline_total_s"] = base["total_s"]
            res["speedup"] = base["total_s"] / res["total_s"]
            res["same_orders_as_baseline"] = bool(np.array_equal(of, bf)
                                                  and np.array_equal(ob, bb))
        out[obj] = res
    return out


def bench_calibrated(m=129, target=5.0):
    c = data(m)
    f = make_set_function(c, "cross_entropy_calibrated")
    res, of, ob = fwd_bwd(f)
    vf, vb = greedy_forward(f)[1], greedy_backward(f)[1]
    ks = (1, 2, 10, 64, m - 1, m)
    diff = max(max(abs(vf[k] - f.value(of[:k])), abs(vb[k] - f.value(ob[:k]))) for k in ks)
    t_r, _ = timed(lambda: random_order_values(f, 20, random_state=0))
    return {"M": m, "N": c.n_examples, "C": c.n_options, "target_s": target, **res,
            "meets_target": res["total_s"] <= target,
            "max_abs_diff_vs_cold_fits_bits": float(diff), "before_total_s": 36.62,
            "random_orders_20_s": t_r, "random_orders_20_before_s": 17.1,
            "note": "calibration (a, c) is refitted by batched damped Newton for every candidate "
                    "set on each half of the examples (warm starts; scaled gradient <= 1e-10)"}


def bench_gaussian(m=129, m_small=40, target=60.0):
    c = data(m)
    f = make_set_function(c, "mi_gaussian")
    res, order, _ = fwd_bwd(f)
    out = {"M": m, "N": c.n_examples, "C": c.n_options, "target_s": target, **res,
           "meets_target": res["total_s"] <= target}
    # equality with the direct estimator on the greedy path
    vals = greedy_forward(f)[1]
    out["max_abs_diff_vs_direct_bits"] = float(max(abs(vals[k] - f.value(order[:k]))
                                                   for k in (1, 10, 50, m)))
    # baseline, first forward steps at full M
    g = Generic(f)
    state, remaining = g.start(()), list(range(m))
    t0 = time.perf_counter()
    for _ in range(3):
        vals = g.added_values(state, remaining)
        j = remaining.pop(int(np.argmax(vals)))
        state = g.add(state, j)
    out["baseline_first_3_forward_steps_s"] = time.perf_counter() - t0
    state = f.start(())
    t0 = time.perf_counter()
    remaining = list(range(m))
    for _ in range(3):
        vals = f.added_values(state, remaining)
        j = remaining.pop(int(np.argmax(vals)))
        state = f.add(state, j)
    out["incremental_first_3_forward_steps_s"] = time.perf_counter() - t0
    # full comparison at a smaller M
    cs = data(m_small)
    fs = make_set_function(cs, "mi_gaussian")
    inc, of, ob = fwd_bwd(fs)
    base, bf, bb = fwd_bwd(Generic(fs))
    out[f"M{m_small}"] = {"incremental_total_s": inc["total_s"],
                          "baseline_total_s": base["total_s"],
                          "speedup": base["total_s"] / inc["total_s"],
                          "same_orders": bool(np.array_equal(of, bf) and np.array_equal(ob, bb))}
    return out


def bench_random(m=129, n_perm=200, target=10.0):
    c = data(m)
    f = make_set_function(c, "accuracy")
    t, _ = timed(lambda: random_order_values(f, n_perm, random_state=0))
    g = Generic(f)

    def loop(order):
        state = g.start(())
        vals = [g.state_value(state)]
        for j in order:
            state = g.add(state, int(j))
            vals.append(g.state_value(state))
        return vals

    rng = np.random.default_rng(0)
    tb, _ = timed(lambda: [loop(rng.permutation(m)) for _ in range(20)])
    return {"M": m, "N": c.n_examples, "n_permutations": n_perm, "seconds": t,
            "target_s": target, "meets_target": t <= target,
            "baseline_seconds_scaled_to_200": tb * n_perm / 20,
            "speedup": tb * n_perm / 20 / t}


def main():
    results = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                           "note": "shared 2-core machine; other jobs were running"}}
    with threadpool_limits(1):
        t0 = time.perf_counter()
        results["readout_M129"] = bench_readout(129, ("accuracy", "cross_entropy"), 5.0)
        print(json.dumps(results["readout_M129"], indent=1))
        results["readout_M301"] = bench_readout(301, ("accuracy", "cross_entropy"), 30.0)
        print(json.dumps(results["readout_M301"], indent=1))
        results["random_orders_M129"] = bench_random()
        print(json.dumps(results["random_orders_M129"], indent=1))
        results["gaussian_M129"] = bench_gaussian()
        print(json.dumps(results["gaussian_M129"], indent=1))
        results["calibrated_M129"] = bench_calibrated()
        print(json.dumps(results["calibrated_M129"], indent=1))
        results["wall_s"] = time.perf_counter() - t0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
