"""Subsampling at n, n/2, n/4 with a 1/n extrapolation (DESIGN.md 2.8).

For an estimator whose bias is O(1/n), E θ̂_n ≈ θ + b/n. :func:`subsample_extrapolation`
evaluates the statistic on the full run and on ``n_subsamples`` class-stratified subsamples
(without replacement) at each smaller fraction, fits θ̂(n) = θ_∞ + b/n by ordinary least squares
to the level means, and reports θ_∞ (the n → ∞ extrapolation) and b. The interval of θ_∞ comes
from an example bootstrap of the whole procedure (each replicate resamples the run, then
subsamples it and refits the line): its percentile spread centred at θ_∞,
θ_∞ + (q_{(1−c)/2} − mean_b, q_{(1+c)/2} − mean_b), B reported. (Duplicated rows bias a
resampled estimate again, so only the spread of the replicates is used.)
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import bootstrap_indices, parallel_map, percentile_interval
from estimators.validation import check_seed_sequence

__all__ = ["subsample_extrapolation", "extrapolate_inverse_n", "stratified_subsample"]


def stratified_subsample(labels, fraction: float, rng) -> np.ndarray:
    """Sorted indices of a class-stratified subsample without replacement (≥ 1 per class)."""
    y = np.asarray(labels)
    parts = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        parts.append(rng.choice(rows, max(1, int(round(fraction * rows.size))), replace=False))
    return np.sort(np.concatenate(parts))


def extrapolate_inverse_n(ns, values) -> tuple[float, float]:
    """OLS fit of ``values = θ_∞ + b / n``; returns ``(θ_∞, b)``."""
    x = 1.0 / np.asarray(ns, dtype=np.float64)
    design = np.column_stack([np.ones_like(x), x])
    coef = np.linalg.lstsq(design, np.asarray(values, dtype=np.float64), rcond=None)[0]
    return float(coef[0]), float(coef[1])


def _levels(run, statistic, fractions, n_subsamples, rng):
    means, ns = [], []
    for frac in fractions:
        if frac >= 1:
            vals, n = [statistic(run)], run.n_examples
        else:
            subs = [stratified_subsample(run.labels, frac, rng) for _ in range(n_subsamples)]
            vals, n = [statistic(run.take(s)) for s in subs], len(subs[0])
        means.append(np.mean(vals))
        ns.append(n)
    return np.asarray(ns), np.asarray(means)


def _replicate(task, _rng):
    run, statistic, fractions, n_subsamples, seed = task
    idx_seed, sub_seed = seed.spawn(2)
    boot = run.take(bootstrap_indices(len(run.labels), np.random.default_rng(idx_seed),
                                      strata=run.labels))
    try:
        ns, means = _levels(boot, statistic, fractions, n_subsamples,
                            np.random.default_rng(sub_seed))
    except ValueError:
        return float("nan")
    return extrapolate_inverse_n(ns, means)[0]


def subsample_extrapolation(run, statistic, *, fractions=(1.0, 0.5, 0.25), n_subsamples: int = 5,
                            n_bootstrap: int = 100, confidence: float = 0.95, random_state=0,
                            n_jobs=1) -> dict:
    """Estimates at n·fractions, the 1/n extrapolation θ_∞ and its bootstrap interval.

    Parameters
    ----------
    run : Contributions
    statistic : callable ``statistic(run) -> float`` (refits everything on the run it gets)
    fractions : sizes as fractions of n (at least two distinct; 1.0 = the full run)
    n_subsamples : subsamples averaged at each fraction below 1
    n_bootstrap : example-bootstrap replicates of the whole procedure (0: no interval)
    """
    fractions = tuple(float(f) for f in fractions)
    if len(set(fractions)) < 2 or not all(0 < f <= 1 for f in fractions):
        raise ValueError(f"fractions must hold at least two distinct values in (0, 1], "
                         f"got {fractions}")
    data_seed, boot_root = check_seed_sequence(random_state).spawn(2)
    ns, means = _levels(run, statistic, fractions, n_subsamples, np.random.default_rng(data_seed))
    theta, slope = extrapolate_inverse_n(ns, means)
    out = {"n": ns.tolist(), "values": means.tolist(), "extrapolated": theta,
           "inverse_n_coefficient": slope, "n_subsamples": n_subsamples,
           "n_bootstrap": n_bootstrap, "ci": [float("nan"), float("nan")], "n_failed": 0}
    if n_bootstrap:
        tasks = [(run, statistic, fractions, n_subsamples, s)
                 for s in boot_root.spawn(n_bootstrap)]
        dist = np.asarray(parallel_map(_replicate, tasks, n_jobs=n_jobs))
        lo, hi = percentile_interval(dist, confidence)
        centre = float(np.nanmean(dist))
        out.update(ci=[theta + float(lo) - centre, theta + float(hi) - centre],
                   n_failed=int((~np.isfinite(dist)).sum()))
    return out
