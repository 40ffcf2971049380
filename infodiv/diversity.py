"""The diversity claim: does a member's gain grow with its non-redundancy with the set?

Regression of ρ_x(S) on the diversity of x from S (1 − R² of the linear prediction of U_x from
U_S, i.e. the fraction of x's variance that S does not explain), controlling for ρ_x(∅) and
|S|; Freedman–Lane permutation test of the diversity coefficient (Freedman & Lane 1983).
Re-exported by :mod:`infodiv.submodularity`.
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import permutation_test

__all__ = ["diversity_regression"]


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
