"""What the seeds of the depth grid can say, read from the summary's model records alone
(DESIGN.md 2.9): recomputable from a committed ``summary.json`` without the models.

Three seeds per architecture are few, and the two-level bootstrap of
:func:`infodiv.experiments.across.seed_example_interval` resamples them with replacement, so its
interval can never leave the range of the three seed values. Beside it this module gives:

- :func:`model_state`: what a model did with the task, by a threshold fixed in advance (the
  saturation threshold τ = 0.90 of :mod:`infodiv.experiments.depth_saturation`): *solves*
  (held-out accuracy ≥ τ), *partial* (above chance, below τ), *chance* (its Wilson interval
  reaches the majority rate although training left the plateau) or *plateau* (training never
  left the chance plateau: an optimisation failure, not evidence about its depth);
- :func:`t_interval`: the seed mean with Student's t interval,
  :math:`\\bar a \\pm t_{0.975,\\,S-1}\\, s/\\sqrt{S}` (S seeds, s their standard deviation), which
  treats the seeds as draws from the training distribution and can be wider than their range;
- :func:`depth_curve` and :func:`collapses`: the seed median, mean and t interval of every
  unshared depth and the depths past the first saturated one whose median falls below τ again
  (a curve that is not monotone in depth), with the states of their seeds;
- :func:`step_comparison`: the growth laws of :func:`infodiv.growth.fit_growth_laws` with the
  step law beside the smooth ones, on the seed means and per seed;
- :func:`pair_intervals`: the shared-minus-unshared differences of Table 1 with the t interval
  over their per-seed differences;
- :func:`gap_influence`: the gap regression (does the diversity gap explain the accuracy gap?)
  over the pairs whose two models both solve the task, with Pearson r, Spearman ρ, an exact
  permutation p (every ordering of up to 8 pairs) and each pair's leave-one-out influence,
  :math:`r - r_{(-i)}`: a correlation that one pair carries is said to rest on it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

from infodiv.growth import ALL_LAWS, fit_growth_laws

from .depth_saturation import THRESHOLD

__all__ = ["STATES", "PAIR_SETS", "model_state", "t_interval", "depth_curve", "collapses",
           "step_comparison", "pair_intervals", "gap_influence", "derive", "refresh"]

#: what a model did with the task (:func:`model_state`)
STATES = ("solves", "partial", "chance", "plateau")
#: exact permutation p up to this many pairs (8! = 40320 orderings), Monte Carlo above
EXACT_PAIRS = 8


def model_state(record: dict, threshold: float = THRESHOLD) -> str:
    """One of :data:`STATES` for a ``summary.json`` model record (module docstring)."""
    if (record.get("training") or {}).get("on_plateau"):
        return "plateau"
    if record.get("at_chance"):
        return "chance"
    return "solves" if record["accuracy"] >= threshold else "partial"


def t_interval(values, level: float = 0.95) -> dict:
    """Mean of ``values`` with Student's t interval (module docstring); ``ci95`` is None with a
    ``ci95_reason`` for fewer than 2 values."""
    v = np.asarray(values, np.float64)
    out = {"mean": float(v.mean()), "n": int(v.size), "method": "Student t over seeds"}
    if v.size < 2:
        return {**out, "ci95": None, "ci95_reason": f"{v.size} seed: no spread to estimate"}
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return {**out, "sd": float(v.std(ddof=1)), "ci95": [out["mean"] - half, out["mean"] + half],
            "range": [float(v.min()), float(v.max())]}


def _unshared(records):
    by = {}
    for r in records:
        if not r["shared"]:
            by.setdefault(int(r["depth"]), []).append(r)
    return {d: sorted(rs, key=lambda r: r["seed"]) for d, rs in sorted(by.items())}


def depth_curve(records, threshold: float = THRESHOLD) -> list[dict]:
    """Per unshared depth: seeds, their accuracies and states, the median, and the mean with its
    t interval (:func:`t_interval`)."""
    rows = []
    for d, rs in _unshared(records).items():
        acc = [float(r["accuracy"]) for r in rs]
        states = [model_state(r, threshold) for r in rs]
        rows.append({"depth": d, "seeds": [int(r["seed"]) for r in rs], "accuracy": acc,
                     "states": states, "median": float(np.median(acc)),
                     "t": t_interval(acc),
                     "counts": {s: states.count(s) for s in STATES if s in states}})
    return rows


def collapses(curve, threshold: float = THRESHOLD) -> list[dict]:
    """The depths past the first one whose seed median reaches ``threshold`` whose own median is
    below it again: the curve is not monotone there (module docstring)."""
    first = next((row["depth"] for row in curve if row["median"] >= threshold), None)
    if first is None:
        return []
    return [{"depth": row["depth"], "median": row["median"], "saturated_at": first,
             "counts": row["counts"]}
            for row in curve if row["depth"] > first and row["median"] < threshold]


def _accuracy(r) -> float:
    return r["accuracy"]


def _mixed_accuracy(r) -> float:
    return r["mixed"]["accuracy"]


def step_comparison(records, value=_accuracy) -> dict | None:
    """Every law of :data:`infodiv.growth.ALL_LAWS` (the step included) fitted to the seed mean
    of ``value(record)`` (default the held-out accuracy) across the unshared depths that every
    seed has, and per seed; None below 4 such depths (a 3-parameter law needs n − p − 1 > 0
    for AICc)."""
    groups = _unshared(records)
    seeds = sorted(set.intersection(*({int(r["seed"]) for r in rs}
                                      for rs in groups.values()))) if groups else []
    depths = [d for d, rs in groups.items() if len(rs) >= len(seeds)]
    if len(depths) < 4 or not seeds:
        return None
    acc = np.asarray([[next(value(r) for r in groups[d] if r["seed"] == s) for d in depths]
                      for s in seeds], np.float64)                        # [S, D]
    fits = fit_growth_laws(acc.mean(axis=0), k=np.asarray(depths, np.float64), laws=ALL_LAWS)
    per_seed = {int(s): fit_growth_laws(acc[i], k=np.asarray(depths, np.float64), laws=ALL_LAWS)
                for i, s in enumerate(seeds)}
    return {"depths": depths, "seeds": seeds, "seed_mean": fits,
            "winner": fits["best_aicc"],
            "winner_per_seed": {s: f["best_aicc"] for s, f in per_seed.items()},
            "per_seed": per_seed}


def pair_intervals(table1_rows) -> list[dict]:
    """Per Table 1 row: the shared-minus-unshared accuracy difference's t interval over its
    per-seed differences, beside the seed-and-example bootstrap interval stored with it."""
    out = []
    for row in table1_rows:
        diffs = [p["difference"] for p in row["accuracy"]["per_seed"]]
        out.append({"shared_depth": row["shared_depth"], "compare": row["compare"],
                    "unshared_depth": row["unshared_depth"], "seeds": row["seeds"],
                    "differences": diffs, "t": t_interval(diffs),
                    "bootstrap_ci95": row["accuracy"]["ci95"]})
    return out


def _pearson(x, y) -> float | None:
    if np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def _rows_r(xs, y) -> np.ndarray:
    """Pearson r of every row of ``xs`` [R, n] with ``y`` [n] at once."""
    xc = xs - xs.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    return (xc @ yc) / np.sqrt((xc ** 2).sum(axis=1) * (yc ** 2).sum())


def _permutation_p(x, y, r: float, random_state: int = 0) -> tuple[float, str]:
    """Two-sided p of |r| under shuffled pairings: exact over every ordering of up to
    :data:`EXACT_PAIRS` pairs, else 9999 random ones (+1 in both counts)."""
    if len(x) <= EXACT_PAIRS:
        null = _rows_r(np.asarray(list(itertools.permutations(x))), y)
        return float(np.mean(np.abs(null) >= abs(r) - 1e-12)), "exact"
    rng = np.random.default_rng(random_state)
    null = _rows_r(np.stack([rng.permutation(x) for _ in range(9999)]), y)
    return float((1 + np.sum(np.abs(null) >= abs(r))) / 10000), "9999 random orderings"


def _twin_models(records, pair) -> tuple[dict, dict] | None:
    find = {(bool(r["shared"]), int(r["depth"]), int(r["seed"])): r for r in records}
    a = find.get((True, int(pair["shared_depth"]), int(pair["seed"])))
    b = find.get((False, int(pair["unshared_depth"]), int(pair["seed"])))
    return None if a is None or b is None else (a, b)


#: the pairs a gap regression is read over: both models solve the task, or both are above
#: chance (partial solutions included)
PAIR_SETS = {"solving": ("solves",), "above_chance": ("solves", "partial")}


def gap_influence(records, gap: dict, threshold: float = THRESHOLD,
                  which: str = "solving") -> dict:
    """The gap regression's pairs (``gap["pairs"]``, as :func:`infodiv.experiments.across.
    gap_regression` stores them) restricted to those whose two models both have a state of
    ``PAIR_SETS[which]`` (:func:`model_state`), with r, ρ, the permutation p and every pair's
    leave-one-out influence; ``r`` is None with a reason below 3 such pairs."""
    keep = []
    for p in gap.get("pairs", []):
        twins = _twin_models(records, p)
        if twins and all(model_state(m, threshold) in PAIR_SETS[which] for m in twins):
            keep.append(p)
    out = {"diversity": gap.get("diversity"), "pairs": which, "n_pairs": len(keep),
           "threshold": threshold}
    if len(keep) < 3:
        return {**out, "r": None, "r_reason": f"{len(keep)} pairs whose two models both solve "
                                               "the task; a correlation needs 3"}
    x = np.asarray([p["diversity_gap"] for p in keep])
    y = np.asarray([p["accuracy_gap"] for p in keep])
    r = _pearson(x, y)
    if r is None:
        return {**out, "r": None, "r_reason": "one of the gaps does not vary across the pairs"}
    p_value, how = _permutation_p(x, y, r)
    loo = []
    for i, p in enumerate(keep):
        rest = np.arange(len(keep)) != i
        r_i = _pearson(x[rest], y[rest]) if rest.sum() >= 3 else None
        loo.append({"shared_depth": p["shared_depth"], "compare": p["compare"],
                    "unshared_depth": p["unshared_depth"], "seed": p["seed"],
                    "r_without": r_i, "influence": None if r_i is None else r - r_i})
    top = max((e for e in loo if e["influence"] is not None),
              key=lambda e: abs(e["influence"]), default=None)
    rho_without = None
    if top is not None:
        rest = [i for i, e in enumerate(loo) if e is not top]
        rho_without = float(stats.spearmanr(x[rest], y[rest])[0])
    return {**out, "r": r, "spearman": float(stats.spearmanr(x, y)[0]), "p_permutation": p_value,
            "permutation": how, "leave_one_out": loo, "most_influential": top,
            "spearman_without_most_influential": rho_without}


def derive(records, hops_summary: dict, threshold: float = THRESHOLD) -> dict:
    """Everything of this module for one difficulty: states, the depth curve and its collapses,
    the step comparison, Table 1's t intervals and the solving pairs' gap influence on both
    diversities (from ``hops_summary["table1"]["gap_regression"]``)."""
    curve = depth_curve(records, threshold)
    t1 = hops_summary.get("table1") or {}
    gaps = t1.get("gap_regression") or {}
    return {"threshold": threshold,
            "states": {r["model"]: model_state(r, threshold) for r in records},
            "curve": curve, "collapses": collapses(curve, threshold),
            "growth": step_comparison(records),
            "growth_mixed": (step_comparison(records, _mixed_accuracy)
                             if records and all("mixed" in r for r in records) else None),
            "pairs": pair_intervals(t1.get("rows", [])),
            "gap_influence": {which: {d: gap_influence(records, g, threshold, which)
                                      for d, g in gaps.items() if g.get("pairs")}
                              for which in PAIR_SETS}}


def refresh(summary: dict) -> dict:
    """``summary`` with every difficulty's ``seeds`` section recomputed by :func:`derive` from
    its own model records (what ``infodiv zoo depth-page`` does to a committed summary)."""
    for hops, d in summary["by_hops"].items():
        d["seeds"] = derive([r for r in summary["records"] if str(r["hops"]) == hops], d)
    return summary
