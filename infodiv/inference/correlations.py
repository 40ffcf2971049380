"""Correlations over cumulative junction series, with inference that respects their dependence.

Figure 3 of the paper correlates accuracy with MSE, bias and diversity over the junction points
of one model. The points are cumulative prefixes of the same members on the same examples, not
independent draws, so the textbook p-value of r over K points is invalid. Here:

- the example bootstrap resamples the prompts and **recomputes the whole series** for every
  replicate; the interval of r is the percentile interval and the p-value of r ≠ 0 is
  ``min(1, 2·min(1 + #{r_b ≤ 0}, 1 + #{r_b ≥ 0}) / (1 + B))``;
- a leave-last-k-out sensitivity recomputes r (and its interval) without the last k junction
  points, which a single final point can dominate;
- ``n_bootstrap=0`` (``infodiv decompose --inference 0``) draws no resample: every r is
  computed, its interval and bootstrap p are ``None`` and the row says why
  (``no_interval``: :data:`NO_RESAMPLES`);
- every variant of the decomposition (:data:`VARIANTS`: logit, probability and the paper's
  Eq. 14, member scale "mean" = the paper's or "sum" = the model's) is available and named;
- :func:`fisher_z_average` averages a measure's r across tasks through Fisher's z (weights
  K − 3, :func:`infodiv.tables.fisher_z_mean`) with a bootstrap interval from the per-task
  replicates (tasks are independent samples, so replicate b of each task is combined).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from estimators.resampling import (
    bootstrap_indices,
    contain_estimate,
    parallel_map,
    percentile_interval,
)
from estimators.validation import check_seed_sequence
from infodiv.junctions import junction_curves
from infodiv.tables import fisher_z_mean

__all__ = ["VARIANTS", "NO_RESAMPLES", "junction_correlations", "fisher_z_average",
           "correlation"]

#: name -> junction_curves arguments
VARIANTS = {f"{space}/{scale}": {"space": space, "scale": scale}
            for space in ("logit", "probability", "paper_eq14") for scale in ("mean", "sum")}
#: why a record holds a point estimate without interval or p (0 example resamples)
NO_RESAMPLES = "no example resamples (--inference 0)"


def correlation(x, y, method: str = "pearson") -> float:
    """Pearson's r, or Spearman's ρ (Pearson on average ranks); NaN for a constant series."""
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if method == "spearman":
        x, y = rankdata(x), rankdata(y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _series(run, variants, measures):
    out = {}
    for name in variants:
        jc = junction_curves(run, cross_entropy=any(m.startswith("ce") or m == "cross_entropy"
                                                    for m in measures), **VARIANTS[name])
        out[name] = {"accuracy": np.asarray(jc.accuracy),
                     **{m: np.asarray(getattr(jc, m)) for m in measures}}
    return out


def _pearson(x, y) -> float:
    x, y = x - x.mean(), y - y.mean()
    den = np.sqrt((x @ x) * (y @ y))
    return float(x @ y / den) if den > 0 else float("nan")


def _all_r(series, measures, methods, leave_last):
    """r for every (variant, measure, method, dropped last points) as a flat dict
    (:func:`correlation`'s formulas, written out for speed: ~100 per bootstrap replicate)."""
    out = {}
    for variant, s in series.items():
        k = len(s["accuracy"])
        for drop in (0, *leave_last):
            acc = s["accuracy"][: k - drop]
            ranked = {"pearson": acc, "spearman": rankdata(acc)}
            for m in measures:
                y = s[m][: k - drop]
                ys = {"pearson": y, "spearman": rankdata(y)}
                for method in methods:
                    out[(variant, m, method, drop)] = _pearson(ranked[method], ys[method])
    return out


def _boot_task(task, _rng):
    run, variants, measures, methods, leave_last, seed = task
    idx = bootstrap_indices(len(run.labels), np.random.default_rng(seed), strata=run.labels)
    return _all_r(_series(run.take(idx), variants, measures), measures, methods, leave_last)


def junction_correlations(run, *, variants=("logit/mean", "paper_eq14/mean"),
                          measures=("mse", "bias", "diversity"),
                          methods=("pearson", "spearman"), leave_last=(1, 5),
                          n_bootstrap: int = 200, confidence: float = 0.95, random_state=0,
                          n_jobs=1) -> dict:
    """Correlation of accuracy with each measure over junction points, with bootstrap
    p-values and intervals (series recomputed) and leave-last-k-out values (module doc).

    Returns ``{"rows": [...], "n_points": K, "n_bootstrap": B, "replicates": {key: [B]}}``;
    each row has variant, measure, method, left_out (k), r, ci, p_bootstrap and the naive
    ``p_independent_points`` (Fisher t-test over K points, shown only to be contrasted).
    ``n_bootstrap`` is 0 (no resample: ``ci``, ``ci_widened`` and ``p_bootstrap`` are None,
    ``no_interval`` says why, ``replicates`` is empty) or at least 20.
    """
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variants {unknown}; choose from {sorted(VARIANTS)}")
    if n_bootstrap != 0 and n_bootstrap < 20:
        raise ValueError(f"n_bootstrap must be 0 (no resample) or >= 20, got {n_bootstrap}")
    series = _series(run, variants, measures)
    n_points = len(next(iter(series.values()))["accuracy"])
    leave_last = tuple(k for k in leave_last if n_points - k >= 3)
    observed = _all_r(series, measures, methods, leave_last)
    if not n_bootstrap:
        rows = [{"variant": key[0], "measure": key[1], "method": key[2], "left_out": key[3],
                 "n_points": n_points - key[3], "r": r, "ci": None, "ci_widened": None,
                 "p_bootstrap": None, "no_interval": NO_RESAMPLES,
                 "p_independent_points": _naive_p(r, n_points - key[3])}
                for key, r in observed.items()]
        return {"rows": rows, "n_points": n_points, "n_bootstrap": 0,
                "leave_last": list(leave_last), "replicates": {}}
    seeds = check_seed_sequence(random_state).spawn(n_bootstrap)
    tasks = [(run, variants, measures, methods, leave_last, s) for s in seeds]
    boots = parallel_map(_boot_task, tasks, n_jobs=n_jobs, progress="correlation bootstrap")
    rows, reps = [], {}
    for key, r in observed.items():
        dist = np.array([b[key] for b in boots])
        # an r that is rounding noise around 0 (a flat series) can fall a few ulps outside
        # its replicates' range: the interval is widened to contain it, by how much is kept
        lo, hi, gap = contain_estimate(r, *percentile_interval(dist, confidence))
        ok = np.isfinite(dist)
        below = 1 + (dist[ok] <= 0).sum()
        above = 1 + (dist[ok] >= 0).sum()
        k_pts = n_points - key[3]
        rows.append({"variant": key[0], "measure": key[1], "method": key[2],
                     "left_out": key[3], "n_points": k_pts, "r": r,
                     "ci": [float(lo), float(hi)], "ci_widened": float(gap),
                     "p_bootstrap": float(min(1.0, 2 * min(below, above) / (1 + ok.sum()))),
                     "p_independent_points": _naive_p(r, k_pts)})
        reps["|".join(map(str, key))] = dist
    return {"rows": rows, "n_points": n_points, "n_bootstrap": n_bootstrap,
            "leave_last": list(leave_last), "replicates": reps}


def _naive_p(r, k):
    from scipy.stats import t

    if not np.isfinite(r) or k < 3 or abs(r) >= 1:
        return float("nan") if not np.isfinite(r) else 0.0
    stat = r * np.sqrt((k - 2) / (1 - r * r))
    return float(2 * t.sf(abs(stat), k - 2))


def fisher_z_average(results, variant: str, measure: str, method: str = "pearson",
                     left_out: int = 0, confidence: float = 0.95) -> dict:
    """Fisher-z average of r across tasks (``results``: task → :func:`junction_correlations`),
    with the percentile interval of the replicate-wise averages."""
    key = "|".join(map(str, (variant, measure, method, left_out)))
    if any(not res.get("n_bootstrap") for res in results.values()):
        raise ValueError("fisher_z_average needs the bootstrap replicates of every task; "
                         f"a task has none ({NO_RESAMPLES})")
    rs, ns, dists = [], [], []
    for res in results.values():
        row = next(r for r in res["rows"] if (r["variant"], r["measure"], r["method"],
                                              r["left_out"]) == (variant, measure, method,
                                                                 left_out))
        rs.append(row["r"])
        ns.append(row["n_points"])
        dists.append(res["replicates"][key])
    b = min(len(d) for d in dists)
    avg = np.array([fisher_z_mean([d[i] for d in dists], ns) for i in range(b)])
    lo, hi = percentile_interval(avg, confidence)
    return {"r": fisher_z_mean(rs, ns), "ci": [float(lo), float(hi)], "n_tasks": len(rs),
            "n_bootstrap": b, "variant": variant, "measure": measure, "method": method,
            "left_out": left_out}
