"""The diversity claim's regression: does a member's gain grow with its non-redundancy with
the set?

Regression of ρ_x(S) on the diversity of x from S (1 − R² of the linear prediction of U_x from
U_S, i.e. the fraction of x's variance that S does not explain), controlling for ρ_x(∅) and
|S|: its design over the pairs of the DR chains (:func:`diversity_design`) and its fit
(:func:`diversity_fit`). The claim that tests it, refitted on every resample against its label
null, is :mod:`infodiv.claims.diversity_effect`.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

__all__ = ["diversity_design", "diversity_fit", "chain_non_redundancies"]


def _coords(members, d: int) -> np.ndarray:
    """The covariance's coordinates of ``members`` (d per member, member-major)."""
    return (np.asarray(members, dtype=np.int64).reshape(-1, 1) * d + np.arange(d)).ravel()


def _non_redundancy(cov, d, x, s, singular: bool = False):
    """1 − R² of the linear prediction of U_x from U_S (trace form) from a joint covariance;
    ``singular``: Σ_SS is known not to be safely positive definite (solved by
    :func:`_pivoted_solve` without trying Cholesky first)."""
    dx = _coords([x], d)
    if len(s) == 0:
        return 1.0
    ds = _coords(s, d)
    sxx, sxs, sss = cov[np.ix_(dx, dx)], cov[np.ix_(dx, ds)], cov[np.ix_(ds, ds)]
    solve = _pivoted_solve if singular else _solve_psd
    return float(1.0 - np.trace(sxs @ solve(sss, sxs.T)) / np.trace(sxx))


def _solve_psd(a, b):
    """``a⁺ b`` for a covariance ``a``: Cholesky when ``a`` is well conditioned (the common
    case: ~7× cheaper than an SVD at 240 coordinates), else :func:`_pivoted_solve`, which is
    what a singular set of members needs."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", linalg.LinAlgWarning)
        try:
            return linalg.solve(a, b, assume_a="pos", check_finite=False)
        except (linalg.LinAlgError, linalg.LinAlgWarning):
            return _pivoted_solve(a, b)


def _pivoted_solve(a, b):
    """A solution of ``a v = b`` for a singular covariance ``a`` ``[k, k]`` and ``b`` in its
    range, by the rank-revealing Cholesky factorisation (LAPACK ``dpstrf``, its default
    tolerance k·eps·max diag): Pᵀ a P = L Lᵀ with L's first r columns nonzero, L₁ its leading
    r × r block. For b = a c (b in the range of a: here Σ_Sx = X_Sᵀ X_x / (n − 1) lies in
    the range of Σ_SS = X_Sᵀ X_S / (n − 1)), v = P [L₁⁻ᵀ L₁⁻¹ (Pᵀ b)₁..ᵣ; 0] solves a v = b,
    and bᵀ v = ‖L₁⁻¹ (Pᵀ b)₁..ᵣ‖² = bᵀ a⁺ b: the explained trace the minimum-norm
    least-squares solution gives, for about a tenth of its cost at 1000 coordinates (the
    pivoted factorisation stops at the rank)."""
    chol, piv, rank, _ = lapack.dpstrf(a, lower=1)
    p = piv - 1
    l1 = chol[:rank, :rank]
    w, _ = lapack.dtrtrs(l1, b[p[:rank]], lower=1)
    v, _ = lapack.dtrtrs(l1, w, lower=1, trans=1)
    out = np.zeros_like(b, dtype=np.float64)
    out[p[:rank]] = v
    return out


def _chain_non_redundancy(cov, d, x, a, b) -> tuple:
    """x's non-redundancy with A and with B for a nested chain A ⊂ B from one factorisation.

    With the coordinates of B ordered A first, the Cholesky factor L of Σ_BB holds that of
    Σ_AA as its leading block, so w = L⁻¹ Σ_Bx gives both explained traces: tr(Σ_xB Σ_BB⁻¹
    Σ_Bx) = ‖w‖² and tr(Σ_xA Σ_AA⁻¹ Σ_Ax) = ‖w_A‖² (the rows of A: forward substitution reads
    only the leading block). Where Σ_BB is not safely positive definite (LAPACK's reciprocal
    condition number below machine epsilon, as in :func:`_solve_psd`) each set is solved on its
    own by :func:`_non_redundancy` (B by the pivoted factorisation at once).
    """
    a = [int(m) for m in a]
    seen = set(a)
    order = a + [int(m) for m in b if int(m) not in seen]
    if len(order) != len(b) or not a:
        return (_non_redundancy(cov, d, x, a) if a else None), _non_redundancy(cov, d, x, b)
    ds, dx = _coords(order, d), _coords([x], d)
    sss = cov[ds[:, None], ds]
    chol, info = lapack.dpotrf(sss, lower=1, clean=1)
    if info == 0:
        rcond, info = lapack.dpocon(chol, np.abs(sss).sum(axis=0).max(), uplo="L")
    if info != 0 or not rcond >= np.finfo(np.float64).eps:
        return _non_redundancy(cov, d, x, a), _non_redundancy(cov, d, x, b, singular=True)
    w, info = lapack.dtrtrs(chol, cov[ds[:, None], dx], lower=1)   # L w = Σ_Bx
    tr = np.trace(cov[dx[:, None], dx])
    return (float(1.0 - (w[:len(a) * d] ** 2).sum() / tr), float(1.0 - (w ** 2).sum() / tr))


def chain_non_redundancies(triples, cov, d) -> list:
    """``(x's non-redundancy with A, with B)`` of every triple (``{"A", "B", "x"}``) from the
    joint covariance ``cov`` of the members' ``d`` coordinates each (no label enters)."""
    return [_chain_non_redundancy(cov, d, t["x"], t["A"], t["B"]) for t in triples]


def diversity_design(triples, singles, cov, d, non_redundancy=None) -> dict:
    """The regression's pairs and design: every (S, x) of the triples with S ≠ ∅.

    Returns ``index`` ``[P, 2]`` (triple, 0 for A / 1 for B), ``diversity`` ``[P]`` (x's
    non-redundancy with S) and ``controls`` ``[P, 3]`` ([1, ρ_x(∅), |S|]).
    ``non_redundancy``: :func:`chain_non_redundancies` of the triples when already known
    (``cov`` is then not read).
    """
    if non_redundancy is None:
        non_redundancy = chain_non_redundancies(triples, cov, d)
    index, rows = [], []
    for i, (t, nr) in enumerate(zip(triples, non_redundancy)):
        for col, key in enumerate(("A", "B")):
            if len(t[key]):
                index.append((i, col))
                rows.append((nr[col], singles[t["x"]], len(t[key])))
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    return {"index": np.asarray(index, dtype=np.int64).reshape(-1, 2), "diversity": arr[:, 0],
            "controls": np.column_stack([np.ones(len(arr)), arr[:, 1:]])}


def diversity_fit(gain, diversity, controls) -> dict | None:
    """β and the partial correlation r of gain and diversity given the controls.

    ``gain`` ``[P]`` or ``[B, P]`` (one regression per row, same design). With r_d and r_g the
    residuals of diversity and gain on the controls, β = r_d·r_g / (r_d·r_d) and
    r = r_d·r_g / (‖r_d‖ ‖r_g‖) = β ‖r_d‖ / ‖r_g‖ (same sign). β is in gain units per unit
    of non-redundancy, so its spread depends on the design's spread of diversity; r does not
    (under the null r ≈ N(0, 1/P) whatever the design), which is why the verdict tests r.
    ``None`` when diversity is collinear with the controls.
    """
    resid_div = diversity - controls @ np.linalg.lstsq(controls, diversity, rcond=None)[0]
    denom = resid_div @ resid_div
    if denom <= 0:
        return None
    c = resid_div / denom               # β = c · gain (Frisch–Waugh–Lovell)
    gain = np.asarray(gain, dtype=np.float64)
    resid_gain = gain - (controls @ np.linalg.lstsq(controls, gain.T, rcond=None)[0]).T
    beta = gain @ c
    with np.errstate(divide="ignore", invalid="ignore"):
        partial_r = beta * np.sqrt(denom) / np.linalg.norm(resid_gain, axis=-1)
    return {"beta": beta, "partial_r": partial_r, "resid_div": resid_div, "denom": denom,
            "resid_gain": resid_gain}
