"""The verdict of an estimator against a known truth: *trust*, *usable with caution* or *do
not use*, by a measured rule stated in words by :func:`legend`.

Used by every table of ``infodiv validate``: the ground-truth suite (no label: the floor is in
bits) and ``--like`` (:mod:`estimators.matched`: the floor is a share of ``H(Y)``, intervals
are checked for coverage, ``I(U;Y)`` is capped by ``H(Y)`` and judged on permuted labels too).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["tolerance", "verdict", "legend", "VERDICTS", "TRUST_REL", "FLOOR_REL",
           "CAUTION_FACTOR", "NOMINAL", "COVER_ALPHA"]

#: trust: RMSE <= TRUST_REL |truth|, at least FLOOR_REL H(Y) (FLOOR_REL bits without a label)
TRUST_REL, FLOOR_REL = 0.10, 0.05
#: usable with caution: RMSE <= CAUTION_FACTOR times the trust tolerance
CAUTION_FACTOR = 2.5
#: an interval of level NOMINAL under-covers when P(at most k covers) < COVER_ALPHA
NOMINAL, COVER_ALPHA = 0.95, 0.05
VERDICTS = ("trust", "usable with caution", "do not use")


def tolerance(true_bits: float, h_y: float | None = None) -> float:
    """The trust tolerance: ``max(TRUST_REL |truth|, FLOOR_REL H(Y))`` (``H(Y)`` = 1 bit when
    the quantity is not about a label)."""
    return max(TRUST_REL * abs(true_bits), FLOOR_REL * (1.0 if h_y is None else h_y))


def verdict(estimates, true_bits: float, *, h_y=None, covered=None, refused=None,
            cap=None, null=None):
    """``(verdict, reason)`` of the rule in :func:`legend` for one method and quantity;
    ``cap``: the largest possible value (``H(Y)`` for ``I(U;Y)``); ``null``: estimates on
    label-permuted members, whose truth is 0, judged by the same rule (the worse verdict
    wins)."""
    if refused:
        return "do not use", f"refused: {refused}"
    values = np.asarray(estimates, dtype=np.float64)
    if cap is not None and values.mean() > cap:
        return "do not use", f"mean estimate {values.mean():.3g} > H(Y) = {cap:.3g}: impossible"
    found = _error_verdict(values, true_bits, h_y, covered)
    if null is not None and len(null):
        at_null = _error_verdict(np.asarray(null, dtype=np.float64), 0.0, h_y, None)
        if VERDICTS.index(at_null[0]) > VERDICTS.index(found[0]):
            return at_null[0], (f"reads {np.mean(null):.3g} on label-permuted members "
                                f"(truth 0): {at_null[1]}")
    return found


def _error_verdict(values, true_bits, h_y, covered):
    err = values - true_bits
    rmse, tol = float(np.sqrt(np.mean(err ** 2))), tolerance(true_bits, h_y)
    if rmse > CAUTION_FACTOR * tol:
        return "do not use", f"rmse {rmse:.3g} > {CAUTION_FACTOR * tol:.3g}"
    if rmse > tol:
        return "usable with caution", f"rmse {rmse:.3g} > {tol:.3g}"
    if covered is not None and len(covered):
        k, reps = int(np.sum(covered)), len(covered)
        p = float(stats.binom.cdf(k, reps, NOMINAL))
        if p < COVER_ALPHA:
            return "usable with caution", (f"interval held the truth {k}/{reps} (p = {p:.2g} "
                                           f"for a {100 * NOMINAL:g}% interval)")
    return "trust", f"rmse {rmse:.3g} <= {tol:.3g}"


def legend(h_y: float | None = None) -> str:
    """The verdict rule in words (with the bits it means at ``h_y``)."""
    floor = FLOOR_REL * (1.0 if h_y is None else h_y)
    least = (f"{100 * FLOOR_REL:g}% of H(Y) = {floor:.3f} bits" if h_y is not None
             else f"{floor:.3f} bits")
    caution = CAUTION_FACTOR * floor
    return (f"verdict: 'trust' = root-mean-square error over the replicates at most the larger "
            f"of {100 * TRUST_REL:g}% of |truth| and {least}, and, where the method gives an "
            f"interval, that interval held the truth no less often than a {100 * NOMINAL:g}% "
            f"interval would (one-sided binomial test at {100 * COVER_ALPHA:g}%); 'usable with "
            f"caution' = error at most {CAUTION_FACTOR:g} times that (the larger of "
            f"{100 * CAUTION_FACTOR * TRUST_REL:g}% of |truth| and {caution:.3f} bits), or an "
            f"interval that held the truth too rarely; 'do not use' = further off, an I(U;Y) "
            f"above H(Y) on average (impossible), or the method refused these data; I(U;Y) is "
            f"also judged on one draw with the labels permuted (truth 0), the worse verdict "
            f"counting")
