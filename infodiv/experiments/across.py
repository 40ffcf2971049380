"""Across-depth statistics of the zoo with intervals over seeds *and* examples.

Inputs: the zoo records, each model's point figures and its example-bootstrap replicates on
the resamples shared by every model (:mod:`infodiv.experiments.intervals`). An interval over seeds
and examples draws, for every shared resample b, the configuration's seeds with replacement and
averages their replicate-b values (a two-level bootstrap: training randomness outside, prompts
inside); with one seed it is the example interval. Paired comparisons (Table 1, truncated
model vs trained depth) take differences replicate by replicate, so the shared prompts cancel.

- :func:`by_depth`: seed mean and interval of every scalar per (shared, depth), against the
  number of members and the parameters;
- :func:`growth_across_depth`: linear, a·log x + b and saturating power law fitted to each
  seed's figures across depth (x = members or parameters;
  :func:`infodiv.growth.fit_growth_laws` at arbitrary x), the AICc winner per seed and
  whether all seeds agree;
- :func:`table1`: shared minus unshared at equal parameters and equal executions, paired by
  seed, and :func:`gap_regression` — does the diversity gap explain the accuracy gap?;
- :func:`truncated_vs_depth`: the deepest model's truncated (logit-lens) curve after block b
  against the trained depth-b models of the same seed.
"""

from __future__ import annotations

import numpy as np

from .intervals import INFORMATION, SCALARS

__all__ = ["figure_names", "seed_example_interval", "by_depth", "growth_across_depth", "table1",
           "gap_regression", "truncated_vs_depth", "prefix_curve"]

GROWTH_FIGURES = ("accuracy", "cross_entropy", "sq_diversity", "ce_diversity", "probe_bound",
                  "usable_joint", "usable_d_corrected")


def figure_names(points, reps, models) -> list[str]:
    """:data:`~infodiv.experiments.intervals.SCALARS`, then the
    :data:`~infodiv.experiments.intervals.INFORMATION` figures that every model in ``models`` has,
    as a point and as replicates."""
    return list(SCALARS) + [n for n in INFORMATION
                            if all(n in points[m] and n in reps[m] for m in models)]


def _pct(draws):
    draws = np.asarray(draws, np.float64)
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return [float("nan"), float("nan")]
    return [float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))]


def seed_example_interval(points, reps, *, random_state=0) -> dict:
    """Mean of ``points`` (one per seed) and the two-level 95% interval from ``reps`` (one
    array [B] per seed, on shared resamples): seeds resampled with replacement per b."""
    reps = np.asarray(reps, np.float64)                # [S, B]
    s, b = reps.shape
    rng = np.random.default_rng(random_state)
    pick = rng.integers(0, s, size=(b, s)) if s > 1 else np.zeros((b, 1), dtype=int)
    draws = reps[pick, np.arange(b)[:, None]].mean(axis=1)
    return {"mean": float(np.mean(points)), "ci95": _pct(draws), "n_seeds": int(s),
            "n_resamples": int(b)}


def _zoo(records):
    return [r for r in records if r.get("width") is not None]


def depth_groups(records) -> dict:
    """``{(shared, depth): its records sorted by seed}``, in key order."""
    g = {}
    for r in records:
        g.setdefault((bool(r["shared"]), int(r["depth"])), []).append(r)
    return {k: sorted(v, key=lambda r: r["seed"]) for k, v in sorted(g.items())}


def _groups(records):
    return depth_groups(_zoo(records))


def depth_rows(groups, names, points, reps) -> list[dict]:
    """One row per (shared, depth) group of :func:`depth_groups`: members, parameters, seeds
    and each figure of ``names`` with its seed mean and seed-and-example interval."""
    rows = []
    for (shared, depth), rs in groups.items():
        row = {"shared": shared, "depth": depth, "n_members": int(rs[0]["n_members"]),
               "params": int(rs[0]["params"]), "executions": int(rs[0]["executions"]),
               "seeds": [int(r["seed"]) for r in rs]}
        for name in names:
            row[name] = seed_example_interval([points[r["model"]][name] for r in rs],
                                              [reps[r["model"]][name] for r in rs])
        rows.append(row)
    return rows


def by_depth(records, points, reps) -> list[dict]:
    """One row per (shared, depth): members, parameters, seeds and every scalar of
    :data:`infodiv.experiments.intervals.SCALARS` with its seed-and-example interval."""
    groups = _groups(records)
    names = figure_names(points, reps, [r["model"] for rs in groups.values() for r in rs])
    return depth_rows(groups, names, points, reps)


def _fit_laws(x, y) -> dict:
    """The growth laws' one home, :func:`infodiv.growth.fit_growth_laws`, at the abscissae
    ``x`` (members or parameters): parameters, RSS, AICc and held-out extrapolation RMSE per
    law, the AICc and extrapolation winners."""
    from infodiv.growth import fit_growth_laws

    return fit_growth_laws(np.asarray(y, np.float64), k=np.asarray(x, np.float64))


def depth_sets(groups, shared) -> list[list[int]]:
    """The depths every seed of the family has, and (when some depths have fewer seeds, e.g.
    extra depths still training) all its depths."""
    depths = sorted(d for (s, d) in groups if s == shared)
    seeds = {d: {int(r["seed"]) for r in groups[(shared, d)]} for d in depths}
    every = set().union(*seeds.values()) if seeds else set()
    common = [d for d in depths if seeds[d] == every]
    return [common] + ([depths] if depths != common else [])


def growth_across_depth(records, points) -> list[dict]:
    """Growth laws of each figure across depth, per seed and on the seed means, for the
    unshared and the shared family, against members and against parameters; on the depths
    every seed has and, where they differ, on all depths with the seeds that have them all
    (``depth_set``: "every seed" / "all depths")."""
    rows = []
    groups = _groups(records)
    for shared in (False, True):
        for k, depths in enumerate(depth_sets(groups, shared)):
            if len(depths) < 3:
                continue
            seeds = sorted(set.intersection(*({int(r["seed"]) for r in groups[(shared, d)]}
                                              for d in depths)))
            rows += _growth_rows(groups, points, shared, depths, seeds,
                                 "every seed" if k == 0 else "all depths")
    return rows


def _growth_rows(groups, points, shared, depths, seeds, depth_set) -> list[dict]:
    rows = []
    for xname in ("n_members", "params"):
        x = np.asarray([groups[(shared, d)][0][xname] for d in depths], np.float64)
        models = [r["model"] for d in depths for r in groups[(shared, d)]]
        for fig in GROWTH_FIGURES:
            if not all(fig in points[m] for m in models):
                continue
            per_seed = {}
            for seed in seeds:
                y = np.asarray([points[next(r["model"] for r in groups[(shared, d)]
                                            if int(r["seed"]) == seed)][fig]
                                for d in depths], np.float64)
                per_seed[seed] = _fit_laws(x, y)
            mean_y = np.asarray([np.mean([points[r["model"]][fig]
                                          for r in groups[(shared, d)]]) for d in depths])
            winners = [f["best_aicc"] for f in per_seed.values()]
            rows.append({"shared": shared, "x": xname, "figure": fig, "depth_set": depth_set,
                         "depths": depths, "x_values": x.tolist(), "seeds": seeds,
                         "seed_mean": _fit_laws(x, mean_y), "per_seed": per_seed,
                         "winners": winners,
                         "replicates": len(winners) > 1 and None not in winners
                         and len(set(winners)) == 1})
    return rows


def _pairs(records):
    from .summary import twin_pairs

    return [(depth, compare, d, seed, r["model"], o["model"])
            for depth, compare, d, seed, r, o in twin_pairs(records)]


def table1(records, points, reps) -> list[dict]:
    """Shared (L blocks, 2L executions) minus unshared L (equal parameters) and 2L (equal
    executions), paired by seed and by resample; per-seed differences with example intervals
    and the seed mean with the seed-and-example interval."""
    pairs = _pairs(records)
    names = figure_names(points, reps, [m for p in pairs for m in p[4:]])
    rows = []
    for key in sorted({p[:3] for p in pairs}):
        ps = [p for p in pairs if p[:3] == key]
        row = {"shared_depth": key[0], "compare": key[1], "unshared_depth": key[2],
               "seeds": [p[3] for p in ps]}
        for name in names:
            diffs = [points[a][name] - points[b][name] for *_, a, b in ps]
            drep = [reps[a][name] - reps[b][name] for *_, a, b in ps]
            row[name] = {**seed_example_interval(diffs, drep),
                         "per_seed": [{"seed": p[3], "difference": float(d),
                                       "ci95_examples": _pct(r)}
                                      for p, d, r in zip(ps, diffs, drep)]}
        rows.append(row)
    return rows


def gap_regression(records, points, reps, *, diversity: str = "sq_diversity",
                   n_permutations: int = 9999, random_state=0) -> dict:
    """Across every shared/unshared pair (both comparisons, every seed): correlation and OLS
    slope of the accuracy gap on the ``diversity`` gap, with a two-level interval (inside every
    shared example resample the pairs are resampled with replacement: the pairs are the units
    the regression generalises over, so an interval over examples alone would be as narrow as
    the example noise however few pairs there are) and a permutation p (gaps shuffled across
    pairs, two-sided)."""
    pairs = _pairs(records)
    if len(pairs) < 3:
        return {"n_pairs": len(pairs), "diversity": diversity}
    da = np.asarray([points[a]["accuracy"] - points[b]["accuracy"] for *_, a, b in pairs])
    dd = np.asarray([points[a][diversity] - points[b][diversity] for *_, a, b in pairs])
    ra = np.asarray([reps[a]["accuracy"] - reps[b]["accuracy"] for *_, a, b in pairs])
    rd = np.asarray([reps[a][diversity] - reps[b][diversity] for *_, a, b in pairs])

    def stats(x, y):
        if np.std(x) == 0 or np.std(y) == 0:
            return float("nan"), float("nan")
        return float(np.corrcoef(x, y)[0, 1]), float(np.polyfit(x, y, 1)[0])

    r, slope = stats(dd, da)
    rng = np.random.default_rng(random_state)
    draws = rng.integers(0, len(pairs), size=(ra.shape[1], len(pairs)))
    boot = np.asarray([stats(rd[idx, b], ra[idx, b]) for b, idx in enumerate(draws)])
    null = np.asarray([stats(rng.permutation(dd), da)[0] for _ in range(n_permutations)])
    p = float((1 + np.sum(np.abs(null) >= abs(r))) / (1 + n_permutations))
    return {"diversity": diversity, "n_pairs": len(pairs), "r": r, "r_ci95": _pct(boot[:, 0]),
            "slope": slope, "slope_ci95": _pct(boot[:, 1]), "p_permutation": p,
            "n_permutations": n_permutations,
            "pairs": [{"shared_depth": p[0], "compare": p[1], "unshared_depth": p[2],
                       "seed": p[3], "accuracy_gap": float(x), "diversity_gap": float(y)}
                      for p, x, y in zip(pairs, da, dd)]}


def truncated_vs_depth(records, points, reps) -> list[dict]:
    """For the deepest unshared model of each seed: truncated-model accuracy after block b
    (junction k = 1 + 2b) against the trained depth-b model of the same seed, with paired
    example intervals of the difference."""
    groups = _groups(records)
    unshared = sorted(d for (s, d) in groups if not s)
    rows = []
    if not unshared:
        return rows
    deepest = unshared[-1]
    for r in groups[(False, deepest)]:
        seed, name = int(r["seed"]), r["model"]
        k = list(points[name]["k"])
        for b in unshared:
            other = next((o for o in groups[(False, b)] if int(o["seed"]) == seed), None)
            if other is None or (1 + 2 * b) not in k:
                continue
            j = k.index(1 + 2 * b)
            t_pt = float(points[name]["truncated_accuracy"][j])
            t_rep = reps[name]["truncated_accuracy"][:, j]
            o_pt = float(points[other["model"]]["accuracy"])
            o_rep = reps[other["model"]]["accuracy"]
            rows.append({"model": name, "seed": seed, "after_block": b,
                         "truncated_accuracy": t_pt, "truncated_ci95": _pct(t_rep),
                         "depth_model": other["model"], "depth_model_accuracy": o_pt,
                         "depth_model_ci95": _pct(o_rep), "difference": t_pt - o_pt,
                         "difference_ci95": _pct(t_rep - o_rep)})
    return rows


def prefix_curve(points, reps, model) -> dict:
    """The truncated-model (logit-lens) accuracy and cross-entropy curves of one model with
    example intervals at every junction, and the growth laws of its accuracy curve
    (:func:`infodiv.growth.fit_growth_laws`, k = junction index, the embedding alone = f(∅))."""
    from infodiv.growth import fit_growth_laws

    p, r = points[model], reps[model]
    acc = np.asarray(p["truncated_accuracy"], np.float64)
    return {"model": model, "k": [int(k) for k in p["k"]],
            "truncated_accuracy": acc.tolist(),
            "truncated_accuracy_ci95": [_pct(r["truncated_accuracy"][:, j])
                                        for j in range(acc.size)],
            "truncated_cross_entropy_bits": np.asarray(p["truncated_cross_entropy"]).tolist(),
            "truncated_cross_entropy_ci95": [_pct(r["truncated_cross_entropy"][:, j])
                                             for j in range(acc.size)],
            "growth_laws": fit_growth_laws(acc)}
