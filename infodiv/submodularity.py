"""Diagnostics that can confirm or refute diminishing returns (paper Theorems 5–8).

All gains are utility gains ρ_x(S) = sign·(f(S ∪ {x}) − f(S)) (sign = −1 for losses), so
submodularity of the utility reads ρ_x(A) ≥ ρ_x(B) for A ⊆ B, x ∉ B.

- Nested-set diminishing-returns (DR) tests: chains A ⊆ B are prefixes of uniformly random
  permutations π (A = π_{1..a}, B = π_{1..b}, a < b) and x = π_c with c ≥ b. The per-example
  difference d_i = ρ_x(A)_i − ρ_x(B)_i is averaged; a paired bootstrap over examples (the same
  resampled examples for all four sets, ≥ 1000 replicates) gives a CI and the one-sided p-value
  p = (1 + #{boot mean ≥ 0}) / (B + 1) for "violation" (E d < 0). Benjamini–Hochberg at level
  ``alpha`` over all triples controls the false discovery rate of declared violations.
- Gain profile slope: OLS slope of g(k) (random-order increments) on k with a bootstrap CI over
  permutations; negative slope = diminishing returns on average.
- Submodularity ratio, ratio-of-sums form (Das & Kempe 2011):
  γ(L, A) = Σ_{x∈A} ρ_x(L) / ρ_A(L), evaluated along the greedy path (L = greedy prefix,
  A = the next greedy elements and random sets outside L); γ ≥ 1 for submodular f.
- Curvature: greedy-path curvature c_t = 1 − ρ_{g_t}(S_{t−1}) / ρ_{g_t}(∅) and total curvature
  c = 1 − min_j ρ_j(V∖{j}) / ρ_j(∅) (Conforti & Cornuéjols 1984).
- Theorems 5 and 6: relevancy, redundancy TC(U_S), conditional redundancy TC(U_S|Y), diversity
  and I(U_S;Y) along the prefix and greedy orders, with the Eq. 12 bounds; Theorem 7's premise
  compares TC(U_S|Y) with TC(U_S) (:func:`infodiv.information.order_terms`).
- Fits of the random-order mean curve f(k) (:func:`infodiv.growth.fit_growth_laws`).
- Diversity claim: regression of ρ_x(S) on the diversity of x from S (1 − R² of the linear
  prediction of U_x from U_S, i.e. the fraction of x's variance that S does not explain),
  controlling for ρ_x(∅) and |S|; Freedman–Lane permutation test of the diversity coefficient.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import false_discovery_control

from estimators.resampling import (
    bootstrap_means,
    chunk_sizes,
    parallel_map,
    permutation_test,
    spawn_generators,
)

from .curves import LayerCurves, layer_curves
from .growth import fit_growth_laws
from .information import member_variables, order_terms
from .setfunctions import SetFunction, as_set_function
from .setfunctions.registry import is_run

__all__ = ["submodularity_report", "dr_tests", "benjamini_hochberg", "gain_slope",
           "submodularity_ratio", "curvature", "fit_growth_laws", "diversity_regression",
           "SubmodularityReport"]


# ---------------------------------------------------------------------------- statistics
def benjamini_hochberg(p, alpha: float = 0.05) -> np.ndarray:
    """Boolean mask of hypotheses rejected by the Benjamini–Hochberg step-up procedure.

    Rejects the k smallest p-values for the largest k with ``p_(k) ≤ alpha·k/m``
    (:func:`scipy.stats.false_discovery_control` on the finite p-values). A NaN p-value (an
    undefined test) is never rejected but still counts in m, so it cannot make the procedure
    less conservative: BH on the m_f finite values at level ``alpha·m_f/m``.
    """
    p = np.asarray(p, dtype=np.float64)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    finite = np.isfinite(p)
    reject = np.zeros(p.shape, dtype=bool)
    if finite.any():
        level = alpha * finite.sum() / p.size
        reject[finite] = false_discovery_control(p[finite], method="bh") <= level
    return reject


# ---------------------------------------------------------------------------- DR tests
def _sample_triple(m, rng):
    perm = rng.permutation(m)
    a = int(rng.integers(0, m - 1))
    b = int(rng.integers(a + 1, m))
    c = int(rng.integers(b, m))
    return perm[:a], perm[:b], int(perm[c])


def _dr_chunk(task, rng):
    f, n_triples = task
    sign = f.sign()
    rows, triples = [], []
    for _ in range(n_triples):
        a_set, b_set, x = _sample_triple(f.n_members, rng)
        fa, fax = f.scores(a_set), f.scores(np.append(a_set, x))
        fb, fbx = f.scores(b_set), f.scores(np.append(b_set, x))
        rows.append(sign * ((fax - fa) - (fbx - fb)))
        triples.append({"A": a_set.tolist(), "B": b_set.tolist(), "x": x,
                        "gain_A": float(sign * np.mean(fax - fa)),
                        "gain_B": float(sign * np.mean(fbx - fb))})
    return np.stack(rows, axis=1), triples


def dr_tests(f: SetFunction, *, n_triples: int = 200, n_bootstrap: int = 1000,
             alpha: float = 0.05, random_state=0, n_jobs=1) -> dict:
    """Nested-set diminishing-returns tests (module docstring).

    Returns
    -------
    dict with ``violation_rate`` (mean d < 0), ``significant_violation_rate`` (BH-rejected),
    ``mean_difference`` and its bootstrap ``mean_difference_ci`` (average over triples),
    per-triple ``differences``, ``ci_low``, ``ci_high``, ``p_values``, ``significant`` and the
    sampled ``triples``.
    """
    if f.n_members < 2:
        raise ValueError(f"DR tests need at least 2 members, got {f.n_members}")
    if n_bootstrap < 100:
        raise ValueError(f"n_bootstrap must be >= 100 for percentile CIs, got {n_bootstrap}")
    seeds = spawn_generators(random_state, 2)
    tasks = [(f, s) for s in chunk_sizes(n_triples, 25)]
    out = parallel_map(_dr_chunk, tasks, random_state=seeds[0], n_jobs=n_jobs,
                       progress=f"DR triples {f.name}")
    d = np.concatenate([o[0] for o in out], axis=1)  # [n_examples, T]
    triples = [t for o in out for t in o[1]]
    means = d.mean(axis=0)
    scale = max(1.0, float(np.abs(d).max(initial=0.0)))
    violated = means < -1e-12 * scale
    result = {"n_triples": len(triples), "n_examples": d.shape[0], "alpha": alpha,
              "differences": means, "triples": triples,
              "violation_rate": float(violated.mean()),
              "mean_difference": float(means.mean())}
    if not f.per_example or d.shape[0] < 2:
        result.update(n_bootstrap=0, significant_violation_rate=None, mean_difference_ci=None,
                      note="no per-example scores: point differences only, no bootstrap")
        return result
    boot = bootstrap_means(d, n_bootstrap, random_state=seeds[1], n_jobs=n_jobs)
    p = (1.0 + (boot >= 0).sum(axis=0)) / (n_bootstrap + 1.0)
    sig = benjamini_hochberg(p, alpha) & violated
    avg = boot.mean(axis=1)
    result.update(n_bootstrap=n_bootstrap, p_values=p, significant=sig,
                  ci_low=np.percentile(boot, 2.5, axis=0),
                  ci_high=np.percentile(boot, 97.5, axis=0),
                  significant_violation_rate=float(sig.mean()),
                  any_significant=bool(sig.any()),
                  mean_difference_ci=[float(np.percentile(avg, 2.5)),
                                      float(np.percentile(avg, 97.5))])
    return result


# ---------------------------------------------------------------------------- gain profile
def _slope_weights(m: int, first: int) -> np.ndarray:
    """OLS weights w with slope = Σ_k w_k g(k) over k = first..m (zero before ``first``)."""
    k = np.arange(first, m + 1, dtype=np.float64)
    w = np.zeros(m)
    w[first - 1:] = (k - k.mean()) / ((k - k.mean()) ** 2).sum()
    return w


def _slope_summary(per_order: np.ndarray, boot: np.ndarray) -> dict:
    return {"slope": float(per_order.mean()),
            "ci": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
            "p_nonnegative": float((1 + (boot >= 0).sum()) / (len(boot) + 1))}


def gain_slope(samples: np.ndarray, sign: float = 1.0, *, n_bootstrap: int = 1000,
               random_state=0) -> dict:
    """OLS slope of g(k) = mean_π sign·Δf(π_{1..k}) on k, with a bootstrap CI over orders.

    ``samples`` ``[P, M+1]`` are f along P random orders. The slope is linear in g, so it is
    the mean over orders of each order's own slope, and its bootstrap resamples the orders
    (:func:`estimators.resampling.bootstrap_means`, paired for both fits). ``from_k2``
    repeats the fit without g(1): with calibrated readouts the first member carries the jump
    from the prior to any fitted readout, which alone can make the slope negative.
    """
    g = sign * np.diff(np.asarray(samples, dtype=np.float64), axis=1)  # [P, M]
    m = g.shape[1]
    nan = {"slope": float("nan"), "ci": [float("nan")] * 2, "p_nonnegative": float("nan")}
    if m < 2:
        return {**nan, "from_k2": nan, "gain": g.mean(axis=0)}
    firsts = (1, 2) if m >= 3 else (1,)
    per_order = g @ np.stack([_slope_weights(m, f) for f in firsts], axis=1)  # [P, fits]
    boot = bootstrap_means(per_order, n_bootstrap, random_state=random_state)
    out = _slope_summary(per_order[:, 0], boot[:, 0])
    out["from_k2"] = _slope_summary(per_order[:, 1], boot[:, 1]) if m >= 3 else nan
    out["gain"] = g.mean(axis=0)
    return out


# ---------------------------------------------------------------------------- ratio, curvature
def submodularity_ratio(f: SetFunction, order, *, sizes=None, block: int = 5,
                        n_random: int = 5, random_state=0) -> dict:
    """Das & Kempe (2011) ratio-of-sums γ(L, A) = Σ_{x∈A} ρ_x(L) / ρ_A(L) along a greedy path.

    For each L = order[:t] (t in ``sizes``), A is the next ``block`` greedy elements and
    ``n_random`` random ``block``-sets outside L. Pairs with ρ_A(L) ≤ 0 are undefined (counted).
    """
    sign = f.sign()
    m = f.n_members
    order = np.asarray(order)
    sizes = range(0, m - 1, max(1, (m - 1) // 10)) if sizes is None else sizes
    rng = np.random.default_rng(random_state)
    rows = []
    for t in sizes:
        t = int(t)
        rest = order[t:]
        if len(rest) < 2:
            continue
        k = min(block, len(rest))
        state = f.start(order[:t])
        base = f.state_value(state)
        sets = [("greedy", rest[:k])] + [("random", rng.choice(rest, k, replace=False))
                                         for _ in range(n_random)]
        for kind, a_set in sets:
            singles = sign * (np.asarray(f.added_values(state, a_set)) - base)
            joint = sign * (f.value(np.concatenate([order[:t], a_set])) - base)
            ratio = float(singles.sum() / joint) if joint > 0 else float("nan")
            rows.append({"size": t, "kind": kind, "ratio": ratio,
                         "sum_singles": float(singles.sum()), "joint_gain": float(joint)})
    ratios = np.array([r["ratio"] for r in rows], dtype=np.float64)
    ok = np.isfinite(ratios)
    return {"rows": rows, "min": float(ratios[ok].min()) if ok.any() else float("nan"),
            "median": float(np.median(ratios[ok])) if ok.any() else float("nan"),
            "fraction_below_1": float((ratios[ok] < 1).mean()) if ok.any() else float("nan"),
            "n_undefined": int((~ok).sum())}


def curvature(f: SetFunction, greedy_order, greedy_values) -> dict:
    """Greedy-path curvature c_t and total curvature (module docstring).

    Both lie in [0, 1] for monotone submodular f; for non-monotone objectives (raw readouts,
    estimates with noise) values outside [0, 1] say that the premise fails, not how strongly.
    """
    sign = f.sign()
    m = f.n_members
    empty = f.start(())
    base = f.state_value(empty)
    singles = sign * (np.asarray(f.added_values(empty, list(range(m)))) - base)
    full = f.start(list(range(m)))
    top = f.state_value(full)
    last = sign * (top - np.asarray(f.removed_values(full, list(range(m)))))
    steps = sign * np.diff(np.asarray(greedy_values))
    single_of_step = singles[np.asarray(greedy_order)]
    pos = single_of_step > 0
    path = np.full(m, np.nan)
    path[pos] = 1.0 - steps[pos] / single_of_step[pos]
    ok = singles > 0
    total = float(1.0 - np.min(last[ok] / singles[ok])) if ok.any() else float("nan")
    return {"greedy_path": path, "total": total, "singleton_gains": singles,
            "last_gains": last}


# ---------------------------------------------------------------------------- diversity claim
def _non_redundancy(cov, d, x, s):
    """1 − R² of the linear prediction of U_x from U_S (trace form) from a joint covariance."""
    dx = np.arange(x * d, (x + 1) * d)
    if len(s) == 0:
        return 1.0
    ds = (np.asarray(s)[:, None] * d + np.arange(d)).ravel()
    sxx, sxs, sss = cov[np.ix_(dx, dx)], cov[np.ix_(dx, ds)], cov[np.ix_(ds, ds)]
    explained = sxs @ np.linalg.lstsq(sss, sxs.T, rcond=None)[0]
    return float(1.0 - np.trace(explained) / np.trace(sxx))


def diversity_regression(triples, singles, cov, d, *, n_permutations: int = 1000,
                         random_state=0) -> dict:
    """Does ρ_x(S) grow with x's non-redundancy with S, given ρ_x(∅) and |S|?

    Uses every (S, x) of the DR triples with S ≠ ∅. OLS of gain on [1, diversity, ρ_x(∅), |S|];
    Freedman–Lane permutation test of the diversity coefficient (permuting the residuals of
    diversity on the controls). Pairs share members and orders, so the permutation p-value
    treats them as exchangeable — an approximation, stated in the report.
    """
    rows = []
    for t in triples:
        for key, gkey in (("A", "gain_A"), ("B", "gain_B")):
            if len(t[key]):
                rows.append((t[gkey], _non_redundancy(cov, d, t["x"], t[key]),
                             singles[t["x"]], len(t[key])))
    if len(rows) < 8:
        return {"n_pairs": len(rows), "note": "too few pairs"}
    arr = np.asarray(rows)
    gain, div, controls = arr[:, 0], arr[:, 1], np.column_stack([np.ones(len(arr)), arr[:, 2:]])
    resid_div = div - controls @ np.linalg.lstsq(controls, div, rcond=None)[0]
    resid_gain = gain - controls @ np.linalg.lstsq(controls, gain, rcond=None)[0]
    denom = resid_div @ resid_div
    if denom <= 0:
        return {"n_pairs": len(rows), "note": "diversity is collinear with the controls"}
    beta = float(resid_div @ resid_gain / denom)
    null = permutation_test(lambda dv, gn: dv @ gn / denom, resid_div, resid_gain,
                            n_permutations=n_permutations, permute=0,
                            random_state=random_state, n_jobs=1).null_distribution
    p_two = float((1 + (np.abs(null) >= abs(beta)).sum()) / (n_permutations + 1))
    p_pos = float((1 + (null >= beta).sum()) / (n_permutations + 1))
    partial_r = float(resid_div @ resid_gain / np.sqrt(denom * (resid_gain @ resid_gain)))
    return {"n_pairs": len(rows), "beta_diversity": beta, "partial_r": partial_r,
            "p_two_sided": p_two, "p_positive": p_pos, "n_permutations": n_permutations,
            "mean_diversity": float(div.mean())}


@dataclass
class SubmodularityReport:
    """Everything :func:`submodularity_report` measured (``to_dict`` for JSON)."""

    objective: str
    n_members: int
    dr: dict
    gain_slope: dict
    ratio: dict
    curvature: dict
    fits: dict
    diversity: dict | None = None
    information: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        from .reports.serialize import jsonable

        return jsonable(self.__dict__)


def submodularity_report(contrib_or_f, *, objective=None, n_members=None, random_state=0,
                         n_triples=200, n_bootstrap=1000, alpha=0.05, n_permutations=200,
                         curves: LayerCurves | None = None, info_method="gaussian",
                         info_sizes=None, n_jobs=1, **objective_kwargs) -> SubmodularityReport:
    """Diminishing-returns diagnostics of a set function (module docstring).

    Parameters
    ----------
    contrib_or_f : Contributions, SetFunction or callable (with ``n_members``)
    objective : str
        Set function name for a Contributions (:data:`infodiv.setfunctions.OBJECTIVES`).
    n_triples, n_bootstrap, alpha : DR tests (≥ 1000 bootstrap replicates by default).
    n_permutations : random orders for g(k) and the growth-law fits (reused from ``curves``
        when given, which must contain "random" and "greedy").
    info_method : estimator for the Theorem 5–7 terms (Contributions only; None skips them).
    info_sizes : set sizes at which those terms are computed (default ≈ 12 points).
    """
    f = as_set_function(contrib_or_f, objective=objective, n_members=n_members,
                        **objective_kwargs)
    seeds = spawn_generators(random_state, 6)
    notes = []
    if curves is None or "random" not in curves or "greedy" not in curves:
        curves = layer_curves(f, orders=("prefix", "greedy", "random"),
                              n_permutations=n_permutations, random_state=seeds[0],
                              n_jobs=n_jobs)
    rand = curves["random"]
    samples = rand.samples
    if samples is None:
        raise ValueError("curves['random'] lacks its per-order samples; recompute the curves "
                         "in this session")
    greedy = curves["greedy"]
    greedy_order, greedy_in = greedy.order, greedy.extra["values_in_sample"]
    dr = dr_tests(f, n_triples=n_triples, n_bootstrap=n_bootstrap, alpha=alpha,
                  random_state=seeds[1], n_jobs=n_jobs)
    slope = gain_slope(samples, f.sign(), n_bootstrap=n_bootstrap, random_state=seeds[2])
    ratio = submodularity_ratio(f, greedy_order, random_state=seeds[3])
    curv = curvature(f, greedy_order, greedy_in)
    fits = fit_growth_laws(rand.values)
    diversity, info = None, {}
    if is_run(contrib_or_f):
        x = member_variables(contrib_or_f.u)
        cov = np.cov(x.reshape(x.shape[0], -1), rowvar=False)
        diversity = diversity_regression(dr["triples"], curv["singleton_gains"], cov,
                                         x.shape[2], random_state=seeds[4])
        if info_method is not None:
            m = f.n_members
            sizes = info_sizes or sorted(set(np.unique(np.linspace(1, m, min(m, 12)).astype(int))))
            for name, order in (("prefix", np.arange(m)), ("greedy", greedy_order)):
                try:
                    info[name] = order_terms(x, contrib_or_f.labels, order, sizes,
                                             n_classes=contrib_or_f.n_options,
                                             method=info_method, random_state=seeds[5])
                except ValueError as exc:
                    notes.append(f"information terms along {name} unavailable: {exc}")
    else:
        notes.append("callable set function: no member variables, so no diversity regression "
                     "and no Theorem 5-7 information terms")
    return SubmodularityReport(f.name, f.n_members, dr, slope, ratio, curv, fits, diversity,
                               info, notes)
