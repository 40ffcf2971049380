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
  and I(U_S;Y) along the prefix and greedy orders (``estimators.information_decomposition``),
  with the Eq. 12 bounds; Theorem 7's premise compares TC(U_S|Y) with TC(U_S).
- Fits of the random-order mean curve f(k), k = 1..M: linear a·k + b, logarithmic a·log k + b,
  saturating power law f_∞ − a·k^(−α); compared by AICc (least squares, Gaussian errors) and by
  extrapolation (fit k ≤ M/2, RMSE on k > M/2).
- Diversity claim: regression of ρ_x(S) on the diversity of x from S (1 − R² of the linear
  prediction of U_x from U_S, i.e. the fraction of x's variance that S does not explain),
  controlling for ρ_x(∅) and |S|; Freedman–Lane permutation test of the diversity coefficient.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .curves import LayerCurves, layer_curves
from .gaussian import member_variables
from .parallel import chunk_sizes, parallel_map, spawn_generators
from .setfunctions import SetFunction, as_set_function, error_bounds, label_entropy

__all__ = ["submodularity_report", "dr_tests", "benjamini_hochberg", "gain_slope",
           "submodularity_ratio", "curvature", "fit_growth_laws", "diversity_regression",
           "information_terms", "SubmodularityReport"]


# ---------------------------------------------------------------------------- statistics
def benjamini_hochberg(p, alpha: float = 0.05) -> np.ndarray:
    """Boolean mask of hypotheses rejected by the Benjamini–Hochberg step-up procedure."""
    p = np.asarray(p, dtype=np.float64)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p)
    passed = p[order] <= alpha * np.arange(1, m + 1) / m
    reject = np.zeros(m, dtype=bool)
    if passed.any():
        reject[order[: np.flatnonzero(passed).max() + 1]] = True
    return reject


def _bootstrap_means(task, rng):
    d, n_rep = task
    n = d.shape[0]
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_rep).astype(np.float64)
    return counts @ d / n


def bootstrap_means(d: np.ndarray, n_bootstrap: int, *, random_state=0, n_jobs=1,
                    chunk: int = 250) -> np.ndarray:
    """Paired bootstrap of column means of ``d`` ``[n, T]``: ``[n_bootstrap, T]``.

    Every replicate resamples the n examples once (multinomial counts) for all columns.
    """
    tasks = [(d, s) for s in chunk_sizes(n_bootstrap, chunk)]
    return np.concatenate(parallel_map(_bootstrap_means, tasks, random_state=random_state,
                                       n_jobs=n_jobs))


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
def _slope_with_ci(g, first, n_bootstrap, rng):
    k = np.arange(first, g.shape[1] + 1, dtype=np.float64)
    kc = (k - k.mean()) / ((k - k.mean()) ** 2).sum()
    sub = g[:, first - 1:]
    slope = float(sub.mean(axis=0) @ kc)
    idx = rng.integers(0, g.shape[0], size=(n_bootstrap, g.shape[0]))
    boot = np.stack([sub[i].mean(axis=0) @ kc for i in idx])
    return {"slope": slope, "ci": [float(np.percentile(boot, 2.5)),
                                   float(np.percentile(boot, 97.5))],
            "p_nonnegative": float((1 + (boot >= 0).sum()) / (n_bootstrap + 1))}


def gain_slope(samples: np.ndarray, sign: float = 1.0, *, n_bootstrap: int = 1000,
               random_state=0) -> dict:
    """OLS slope of g(k) = mean_π sign·Δf(π_{1..k}) on k, with a bootstrap CI over orders.

    ``samples`` ``[P, M+1]`` are f along P random orders. ``from_k2`` repeats the fit without
    g(1): with calibrated readouts the first member carries the jump from the prior to any
    fitted readout, which alone can make the slope negative.
    """
    g = sign * np.diff(np.asarray(samples, dtype=np.float64), axis=1)  # [P, M]
    nan = {"slope": float("nan"), "ci": [float("nan")] * 2, "p_nonnegative": float("nan")}
    if g.shape[1] < 2:
        return {**nan, "from_k2": nan, "gain": g.mean(axis=0)}
    rng = np.random.default_rng(random_state)
    out = _slope_with_ci(g, 1, n_bootstrap, rng)
    out["from_k2"] = _slope_with_ci(g, 2, n_bootstrap, rng) if g.shape[1] >= 3 else nan
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


# ---------------------------------------------------------------------------- growth laws
def _aicc(rss, n, p):
    if n - p - 1 <= 0 or rss <= 0:
        return float("nan")
    return float(n * np.log(rss / n) + 2 * p + 2 * p * (p + 1) / (n - p - 1))


def _fit(model, k, y):
    from scipy.optimize import curve_fit

    if model == "linear":
        coef = np.polyfit(k, y, 1)
        return coef, lambda kk: np.polyval(coef, kk), 2
    if model == "log":
        coef = np.polyfit(np.log(k), y, 1)
        return coef, lambda kk: np.polyval(coef, np.log(kk)), 2

    def power(kk, f_inf, a, alpha):
        return f_inf - a * kk ** (-alpha)

    span = float(y[-1] - y[0]) or 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # f(∞) − f(1) = a: the start has the sign of the curve's rise
        coef, _ = curve_fit(power, k, y, p0=[y[-1], span, 0.5],
                            bounds=([-np.inf, -np.inf, 1e-3], [np.inf, np.inf, 10.0]),
                            maxfev=20000)
    return coef, lambda kk: power(kk, *coef), 3


def fit_growth_laws(values) -> dict:
    """Fit f(k), k = 1..M (``values[k]``, values[0] = f(∅) is not used), three laws.

    Returns per model: parameters, RSS, AICc on all k, and held-out RMSE of the fit on
    k ≤ M/2 when predicting k > M/2; ``best_aicc`` and ``best_extrapolation`` name the winners.
    """
    y = np.asarray(values, dtype=np.float64)[1:]
    k = np.arange(1, len(y) + 1, dtype=np.float64)
    half = len(y) // 2
    out = {}
    for model in ("linear", "log", "power"):
        try:
            coef, pred, p = _fit(model, k, y)
            rss = float(((pred(k) - y) ** 2).sum())
            entry = {"params": np.asarray(coef).tolist(), "rss": rss,
                     "aicc": _aicc(rss, len(y), p)}
            if half >= p + 1 and len(y) - half >= 1:
                _, pred_h, _ = _fit(model, k[:half], y[:half])
                entry["extrapolation_rmse"] = float(np.sqrt(np.mean((pred_h(k[half:])
                                                                     - y[half:]) ** 2)))
            else:
                entry["extrapolation_rmse"] = float("nan")
        except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
            entry = {"error": str(exc), "aicc": float("nan"), "extrapolation_rmse": float("nan")}
        out[model] = entry

    def best(key):
        vals = {m: e[key] for m, e in out.items() if np.isfinite(e[key])}
        return min(vals, key=vals.get) if vals else None

    out["best_aicc"], out["best_extrapolation"] = best("aicc"), best("extrapolation_rmse")
    return out


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
    rng = np.random.default_rng(random_state)
    null = np.array([rng.permutation(resid_div) @ resid_gain / denom
                     for _ in range(n_permutations)])
    p_two = float((1 + (np.abs(null) >= abs(beta)).sum()) / (n_permutations + 1))
    p_pos = float((1 + (null >= beta).sum()) / (n_permutations + 1))
    partial_r = float(resid_div @ resid_gain / np.sqrt(denom * (resid_gain @ resid_gain)))
    return {"n_pairs": len(rows), "beta_diversity": beta, "partial_r": partial_r,
            "p_two_sided": p_two, "p_positive": p_pos, "n_permutations": n_permutations,
            "mean_diversity": float(div.mean())}


# ---------------------------------------------------------------------------- Theorems 5-7
def information_terms(contrib, order, sizes, *, method="gaussian", centre=True,
                      random_state=0) -> dict:
    """Eq. 13 terms of U_{order[:k]} for k in ``sizes`` (``estimators.information_decomposition``)
    with the Eq. 12 bounds and monotonicity counts (Theorems 5 and 6)."""
    from estimators import information_decomposition

    x = member_variables(contrib.u, centre=centre)
    h_y = label_entropy(contrib.labels)
    keys = ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity",
            "residual")
    series = {k: [] for k in keys}
    sizes = [int(s) for s in sizes if s >= 1]
    for s in sizes:
        dec = information_decomposition(x[:, np.asarray(order[:s]), :], contrib.labels,
                                        method=method, random_state=random_state)
        for k in keys:
            series[k].append(getattr(dec, k))
    out = {"sizes": sizes, "method": method, "h_y": h_y, **{k: np.asarray(v)
                                                            for k, v in series.items()}}
    lo, hi = error_bounds(out["joint"], h_y, contrib.n_options)
    out["bound_lower"], out["bound_upper"] = lo, hi
    mono = {}
    for k, direction in (("relevancy", 1), ("redundancy", 1), ("conditional_redundancy", 1),
                         ("joint", 1), ("diversity", 0), ("bound_lower", -1),
                         ("bound_upper", -1)):
        steps = np.diff(out[k])
        entry = {"n_steps": int(steps.size), "n_increases": int((steps > 0).sum()),
                 "n_decreases": int((steps < 0).sum())}
        if direction:
            wrong = -direction * steps
            entry.update(expected="non-decreasing" if direction > 0 else "non-increasing",
                         n_against=int((wrong > 0).sum()),
                         max_against=float(wrong.max(initial=0.0)))
        else:
            entry["expected"] = "no monotonicity claimed (Theorem 5: diversity can fall)"
        mono[k] = entry
    out["monotonicity"] = mono
    out["premise_tc_given_y_over_tc"] = (out["conditional_redundancy"]
                                         / np.where(out["redundancy"] != 0, out["redundancy"],
                                                    np.nan))
    return out


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
        return _jsonable(self.__dict__)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


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
    is_contrib = hasattr(contrib_or_f, "u") and hasattr(contrib_or_f, "labels")
    if is_contrib:
        x = member_variables(contrib_or_f.u)
        cov = np.cov(x.reshape(x.shape[0], -1), rowvar=False)
        diversity = diversity_regression(dr["triples"], curv["singleton_gains"], cov,
                                         x.shape[2], random_state=seeds[4])
        if info_method is not None:
            m = f.n_members
            sizes = info_sizes or sorted(set(np.unique(np.linspace(1, m, min(m, 12)).astype(int))))
            for name, order in (("prefix", np.arange(m)), ("greedy", greedy_order)):
                try:
                    info[name] = information_terms(contrib_or_f, order, sizes,
                                                   method=info_method, random_state=seeds[5])
                except ValueError as exc:
                    notes.append(f"information terms along {name} unavailable: {exc}")
    else:
        notes.append("callable set function: no member variables, so no diversity regression "
                     "and no Theorem 5-7 information terms")
    return SubmodularityReport(f.name, f.n_members, dr, slope, ratio, curv, fits, diversity,
                               info, notes)
