"""Diagnostics that can confirm or refute diminishing returns (paper Theorems 5–8).

All gains are utility gains ρ_x(S) = sign·(f(S ∪ {x}) − f(S)) (sign = −1 for losses), so
submodularity of the utility reads ρ_x(A) ≥ ρ_x(B) for A ⊆ B, x ∉ B.

- Nested-set diminishing-returns (DR) tests: chains A ⊆ B are prefixes of uniformly random
  permutations π (A = π_{1..a}, B = π_{1..b}, a < b) and x = π_c with c ≥ b. The per-example
  difference d_i = ρ_x(A)_i − ρ_x(B)_i is averaged; a paired bootstrap over examples (the same
  resampled examples for all four sets, ≥ 1000 replicates) gives a CI and the one-sided p-value
  p = (1 + #{boot mean ≥ 0}) / (B + 1) for "violation" (E d < 0). Benjamini–Hochberg at level
  ``alpha`` over all triples controls the false discovery rate of declared violations. The CI of
  the mean difference is two-level: examples resampled (outer) and triples resampled inside
  each replicate; the triples-only spread is its Monte-Carlo error (``mean_difference_ci_mc``).
- Gain profile slope: OLS slope of g(k) (random-order increments) on k. Its ``ci`` is the
  two-level example bootstrap (examples outer, orders inner: Davison & Hinkley 1997, §3.8) when
  f is given per example; the orders-only spread is the Monte-Carlo error of the order average
  (``ci_mc``); negative slope = diminishing returns on average.
- The refitting two-level bootstrap and label-permutation null of those statistics
  (calibration, covariances and splits refitted on every resample; verdicts with power) are
  :mod:`infodiv.inference`'s; this module never imports it.
- Submodularity ratio (Das & Kempe 2011) and greedy-path and total curvature (Conforti &
  Cornuéjols 1984) along the greedy order (:mod:`infodiv.curvature`).
- Theorems 5 and 6: relevancy, redundancy TC(U_S), conditional redundancy TC(U_S|Y), diversity
  and I(U_S;Y) along the prefix and greedy orders, with the Eq. 12 bounds; Theorem 7's premise
  compares TC(U_S|Y) with TC(U_S) (:func:`infodiv.information.order_terms`).
- Fits of the random-order mean curve f(k) (:func:`infodiv.growth.fit_growth_laws`).
- Diversity claim: regression of ρ_x(S) on the diversity of x from S, controlling for ρ_x(∅)
  and |S| (:func:`infodiv.diversity.diversity_regression`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import false_discovery_control

from estimators.resampling import bootstrap_means, chunk_sizes, parallel_map, spawn_generators

from .curvature import curvature, submodularity_ratio
from .curves import LayerCurves, layer_curves, order_scores
from .diversity import diversity_regression
from .growth import fit_growth_laws
from .information import member_variables, order_terms
from .setfunctions import SetFunction, as_set_function
from .setfunctions.registry import is_run

__all__ = ["submodularity_report", "dr_tests", "benjamini_hochberg", "gain_slope",
           "submodularity_ratio", "curvature", "fit_growth_laws", "diversity_regression",
           "SubmodularityReport", "dr_example_differences", "resampled_column_means",
           "MC_LABEL", "EXAMPLES_LABEL", "sample_triple"]

MC_LABEL = "Monte-Carlo error (orders resampled, examples fixed)"
EXAMPLES_LABEL = "example bootstrap, two-level"


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
def sample_triple(m: int, rng):
    """One nested chain A ⊂ B and x ∉ B from a uniformly random order π of ``m`` members:
    A = π_{1..a}, B = π_{1..b}, x = π_c with a < b ≤ c (module docstring)."""
    perm = rng.permutation(m)
    a = int(rng.integers(0, m - 1))
    b = int(rng.integers(a + 1, m))
    c = int(rng.integers(b, m))
    return perm[:a], perm[:b], int(perm[c])


def dr_example_differences(f: SetFunction, triples) -> tuple[np.ndarray, np.ndarray]:
    """Per-example DR differences d_i = ρ_x(A)_i − ρ_x(B)_i ``[n, T]`` of the chains
    ``triples`` (A, B, x), and the utility gains ``[T, 2]`` (ρ_x(A), ρ_x(B)) averaged over
    examples."""
    sets = []
    for a_set, b_set, x in triples:
        a_set, b_set = np.asarray(a_set, dtype=np.int64), np.asarray(b_set, dtype=np.int64)
        sets += [a_set, np.append(a_set, x), b_set, np.append(b_set, x)]
    s = np.asarray(f.set_scores(sets), dtype=np.float64)   # batched where f batches
    s = f.sign() * s.reshape(len(triples), 4, -1)   # [T, (A, A+x, B, B+x), n]
    gain_a, gain_b = s[:, 1] - s[:, 0], s[:, 3] - s[:, 2]
    return (gain_a - gain_b).T, np.stack([gain_a.mean(axis=1), gain_b.mean(axis=1)], axis=1)


def _dr_chunk(task, rng):
    f, n_triples = task
    chains = [sample_triple(f.n_members, rng) for _ in range(n_triples)]
    d, gains = dr_example_differences(f, chains)
    triples = [{"A": a.tolist(), "B": b.tolist(), "x": x, "gain_A": g[0], "gain_B": g[1]}
               for (a, b, x), g in zip(chains, gains)]
    return d, triples


def resampled_column_means(replicates: np.ndarray, rng) -> np.ndarray:
    """Inner level of a two-level bootstrap: replicate b's mean over a resample (with
    replacement, multinomial counts) of the columns (orders or triples) of row b.

    ``replicates`` ``[B, P]`` (or ``[B, P, F]``) -> ``[B]`` (or ``[B, F]``). Applied to the
    example-bootstrap means of each column it gives examples outer, columns inner; applied to
    the same row B times it gives the columns-only (Monte-Carlo) spread.
    """
    r = np.asarray(replicates, dtype=np.float64)
    b, p = r.shape[:2]
    counts = rng.multinomial(p, np.full(p, 1.0 / p), size=b).astype(np.float64)
    return np.einsum("bp,bp...->b...", counts, r) / p


def _percentile_ci(x) -> list:
    return [float(np.percentile(x, 2.5)), float(np.percentile(x, 97.5))]


def dr_tests(f: SetFunction, *, n_triples: int = 200, n_bootstrap: int = 1000,
             alpha: float = 0.05, random_state=0, n_jobs=1) -> dict:
    """Nested-set diminishing-returns tests (module docstring).

    Returns
    -------
    dict with ``violation_rate`` (mean d < 0), ``significant_violation_rate`` (BH-rejected,
    per-triple example bootstrap), ``mean_difference`` and its two-level ``mean_difference_ci``
    (examples resampled, triples resampled inside; the fit of f is kept: the refitting version
    is :mod:`infodiv.inference`'s), ``mean_difference_ci_mc`` (triples
    only: Monte-Carlo error), per-triple ``differences``, ``ci_low``, ``ci_high``,
    ``p_values``, ``significant`` and the sampled ``triples``.
    """
    if f.n_members < 2:
        raise ValueError(f"DR tests need at least 2 members, got {f.n_members}")
    if n_bootstrap < 100:
        raise ValueError(f"n_bootstrap must be >= 100 for percentile CIs, got {n_bootstrap}")
    seeds = spawn_generators(random_state, 3)
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
    two_level = resampled_column_means(boot, seeds[2])
    triples_only = resampled_column_means(np.broadcast_to(means, boot.shape), seeds[2])
    result.update(n_bootstrap=n_bootstrap, p_values=p, significant=sig,
                  ci_low=np.percentile(boot, 2.5, axis=0),
                  ci_high=np.percentile(boot, 97.5, axis=0),
                  significant_violation_rate=float(sig.mean()),
                  any_significant=bool(sig.any()),
                  mean_difference_ci=_percentile_ci(two_level),
                  mean_difference_ci_label=EXAMPLES_LABEL + " (triples resampled inside)",
                  mean_difference_ci_mc=_percentile_ci(triples_only),
                  mean_difference_ci_mc_label=MC_LABEL.replace("orders", "triples"))
    return result


# ---------------------------------------------------------------------------- gain profile
def _slope_weights(m: int, first: int) -> np.ndarray:
    """OLS weights w with slope = Σ_k w_k g(k) over k = first..m (zero before ``first``)."""
    k = np.arange(first, m + 1, dtype=np.float64)
    w = np.zeros(m)
    w[first - 1:] = (k - k.mean()) / ((k - k.mean()) ** 2).sum()
    return w


def _slope_summary(per_order: np.ndarray, boot_mc: np.ndarray, boot) -> dict:
    out = {"slope": float(per_order.mean()),
           "ci": [float("nan")] * 2, "p_nonnegative": float("nan"),
           "ci_mc": _percentile_ci(boot_mc),
           "p_nonnegative_mc": float((1 + (boot_mc >= 0).sum()) / (len(boot_mc) + 1)),
           "ci_mc_label": MC_LABEL}
    if boot is None:
        out["ci_note"] = ("no per-example scores: no example-resampled interval (pass samples "
                          "[P, M+1, N], or run infodiv.inference on a run)")
    else:
        out.update(ci=_percentile_ci(boot), ci_label=EXAMPLES_LABEL + " (orders inside)",
                   p_nonnegative=float((1 + (boot >= 0).sum()) / (len(boot) + 1)))
    return out


def gain_slope(samples: np.ndarray, sign: float = 1.0, *, n_bootstrap: int = 1000,
               random_state=0) -> dict:
    """OLS slope of g(k) = mean_π sign·Δf(π_{1..k}) on k, with its example-resampled CI.

    ``samples`` are f along P random orders: ``[P, M+1, N]`` per example (the CI needs them)
    or ``[P, M+1]`` averaged over examples. The slope is linear in g, so it is the mean over
    orders (and examples) of each one's own slope s_{p,i} = Σ_k w_k g_{p,i}(k) with OLS weights
    w_k = (k − k̄)/Σ(k − k̄)². ``ci``: two-level bootstrap — the N examples resampled
    (paired over orders, :func:`estimators.resampling.bootstrap_means`), then the P orders
    resampled inside each replicate (:func:`resampled_column_means`); the fit of f is kept
    (the refitting interval is :mod:`infodiv.inference`'s). ``ci_mc``:
    orders resampled, examples fixed — the Monte-Carlo error of the order average, not an
    interval about the model. ``from_k2`` repeats the fit without g(1): with calibrated
    readouts the first member carries the jump from the prior to any fitted readout, which
    alone can make the slope negative.
    """
    s = np.asarray(samples, dtype=np.float64)
    if s.ndim not in (2, 3):
        raise ValueError(f"samples must be [P, M+1] or [P, M+1, N], got shape {s.shape}")
    g = sign * np.diff(s, axis=1)  # [P, M] or [P, M, N]
    m = g.shape[1]
    nan = {"slope": float("nan"), "ci": [float("nan")] * 2, "p_nonnegative": float("nan"),
           "ci_mc": [float("nan")] * 2, "p_nonnegative_mc": float("nan")}
    gain = g.mean(axis=0) if s.ndim == 2 else g.mean(axis=(0, 2))
    if m < 2:
        return {**nan, "from_k2": nan, "gain": gain}
    firsts = (1, 2) if m >= 3 else (1,)
    w = np.stack([_slope_weights(m, f) for f in firsts], axis=1)  # [M, fits]
    seeds = spawn_generators(random_state, 3)
    boot = None
    if s.ndim == 3:
        per_example = np.einsum("pmn,mf->npf", g, w)  # [N, P, fits]
        n, p, nf = per_example.shape
        per_order = per_example.mean(axis=0)
        ex = bootstrap_means(per_example.reshape(n, p * nf), n_bootstrap, random_state=seeds[1])
        boot = resampled_column_means(ex.reshape(-1, p, nf), seeds[2])  # [B, fits]
    else:
        per_order = g @ w  # [P, fits]
    boot_mc = bootstrap_means(per_order, n_bootstrap, random_state=seeds[0])
    out = _slope_summary(per_order[:, 0], boot_mc[:, 0], None if boot is None else boot[:, 0])
    out["from_k2"] = (_slope_summary(per_order[:, 1], boot_mc[:, 1],
                                     None if boot is None else boot[:, 1]) if m >= 3 else nan)
    out["gain"] = gain
    out["n_bootstrap"] = n_bootstrap
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
        from .reports.serialize import jsonable

        return jsonable(dict(self.__dict__))


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

    The intervals are the fixed-fit two-level example bootstrap of per-example set functions
    (none otherwise: ``ci`` is NaN with a ``ci_note``); the orders-only spread is in
    ``ci_mc``. The refitting inference (bootstrap with everything refitted, label null,
    verdicts with power) is the engine's (:func:`infodiv.inference.engine.evaluate`).
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
    if f.per_example and rand.perms is not None:  # per-example curves: example bootstrap
        samples = np.stack([order_scores(f, p) for p in rand.perms])
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
