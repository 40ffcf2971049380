"""The (S, x) pairs of a replicate's DR chains whose gain ρ_x(S) is regressed on a per-pair
measure given ρ_x(∅) and |S| (:func:`infodiv.diversity.diversity_fit`): their gains, the
partial correlation r and its power shortcut, shared by the diversity-effect and marginal-gain
claims. A pair is ``(i, col)``: chain i's set A (col 0) or B (col 1), and its x.
"""

from __future__ import annotations

import numpy as np

from ._chains import chain_values

__all__ = ["MIN_PAIRS", "pair_gains", "pairs_partial_r", "pairs_quick"]

#: fewest pairs for a regression on [1, measure, ρ_x(∅), |S|]
MIN_PAIRS = 8


def pair_gains(rep, index) -> np.ndarray:
    """ρ_x(S) = f(S ∪ {x}) − f(S) (utility units) of the pairs ``index`` from the chains' set
    values."""
    s = chain_values(rep)
    return np.array([s[i, 2 * col + 1] - s[i, 2 * col] for i, col in index], dtype=np.float64)


def pairs_partial_r(rep, index, measure, controls) -> float:
    """Partial r of the gains of the pairs ``index`` and ``measure`` given ``controls`` (NaN
    with fewer than :data:`MIN_PAIRS` pairs or a collinear design)."""
    from ..diversity import diversity_fit

    if len(index) < MIN_PAIRS:
        return float("nan")
    fit = diversity_fit(pair_gains(rep, index), measure, controls)
    return float("nan") if fit is None else float(fit["partial_r"])


def pairs_quick(rep, rng, n_bootstrap, index, measure, controls) -> dict | None:
    """One fit, examples reweighted: with ``measure`` and ``controls`` fixed, β = c·ḡ is linear
    in the pairs' example-mean gains (Frisch–Waugh–Lovell), so each replicate's r follows from
    the reweighted per-example gains; percentile interval (None where
    :func:`pairs_partial_r` is NaN)."""
    from estimators.resampling import bootstrap_means

    from ..diversity import diversity_fit

    if len(index) < MIN_PAIRS:
        return None
    sets = []
    for i, col in index:
        s, x = rep.chains[i][col], rep.chains[i][2]
        sets += [s, np.append(s, x)]
    sc = rep.f.sign() * np.asarray(rep.f.set_scores(sets), dtype=np.float64)
    g = (sc[1::2] - sc[0::2]).T                              # [n, P] per-example pair gains
    point = diversity_fit(g.mean(axis=0), measure, controls)
    if point is None:
        return None
    boot = diversity_fit(bootstrap_means(g, n_bootstrap, random_state=rng), measure, controls)
    lo, hi = np.nanpercentile(boot["partial_r"], [2.5, 97.5])
    return {"value": float(point["partial_r"]), "ci": (float(lo), float(hi))}
