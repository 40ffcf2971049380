"""Diminishing-returns statistics of a set function (paper Theorems 5–8), without refitting.

All gains are utility gains ρ_x(S) = sign·(f(S ∪ {x}) − f(S)) (sign = −1 for losses), so
submodularity of the utility reads ρ_x(A) ≥ ρ_x(B) for A ⊆ B, x ∉ B.

- Nested chains: A ⊆ B are prefixes of a uniformly random permutation π (A = π_{1..a},
  B = π_{1..b}, a < b) and x = π_c with c ≥ b (:func:`sample_triple`); the per-example
  differences d_i = ρ_x(A)_i − ρ_x(B)_i of given chains (:func:`dr_example_differences`).
- Gain profile slope: OLS slope of g(k) (random-order increments) on k (:func:`gain_slope`).
  Its ``ci`` is the two-level example bootstrap with the fit of f kept (examples outer, orders
  inner: Davison & Hinkley 1997, §3.8) when f is given per example; the orders-only spread is
  the Monte-Carlo error of the order average (``ci_mc``); negative slope = diminishing returns
  on average.
- Benjamini–Hochberg step-up over many tests (:func:`benjamini_hochberg`).
- The submodularity ratio (Das & Kempe 2011) and the greedy-path and total curvature
  (Conforti & Cornuéjols 1984) are :mod:`infodiv.curvature`'s, re-exported here.

The claims that test diminishing returns, with everything refitted on every resample, a label
null and their power, are :mod:`infodiv.claims` through
:func:`infodiv.inference.engine.evaluate`; they use these statistics, and this module never
imports the inference.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import false_discovery_control

from estimators.resampling import bootstrap_means, spawn_generators

from .curvature import curvature, submodularity_ratio
from .setfunctions import SetFunction

__all__ = ["benjamini_hochberg", "gain_slope", "submodularity_ratio", "curvature",
           "dr_example_differences", "resampled_column_means", "MC_LABEL", "EXAMPLES_LABEL",
           "sample_triple"]

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


# ---------------------------------------------------------------------------- DR chains
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
