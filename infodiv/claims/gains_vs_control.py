"""Claim: gains diminish because of redundancy — the gain profile g(k) of the real members
falls faster than that of the same members made conditionally independent.

The raw slope of g(k) is negative as soon as f has a ceiling, with or without redundancy
(:mod:`infodiv.claims.diminishing_returns`); only its difference from the conditionally
independent control speaks to redundancy. Statistic: slope(real) − mean slope(control), the
OLS slopes of g(k) on k (:func:`infodiv.submodularity.gain_slope`) over the replicate's random
orders, the same orders for the real members and for each of
:data:`~infodiv.claims._control.CONTROL_DRAWS` within-class permutations (paired, so the
order noise cancels). Negative beyond its label null (with shuffled labels both profiles are
flat and the difference 0) is the finding. Matched case: planted redundancy.
"""

from __future__ import annotations

import numpy as np

from ._cases import MARGINS, scalar_claim
from ._chains import order_samples, orders
from ._control import control_fits, needs_members

__all__ = ["CLAIM", "slope_difference"]


def _slope(samples, sign) -> float:
    from ..submodularity import gain_slope

    return float(gain_slope(samples, sign, n_bootstrap=1)["slope"])


def slope_difference(rep) -> float:
    """slope of g(k) (real) minus the mean slope of the control draws, same orders."""
    perms = orders(rep)
    sign = rep.f.sign()
    control = [_slope(np.stack([f.order_values(p) for p in perms]), sign)
               for f in control_fits(rep)]
    return _slope(order_samples(rep), sign) - float(np.mean(control))


def quick(rep, rng, n_bootstrap) -> dict:
    """One fit, examples reweighted: the slope is linear in the per-example curves, so the
    difference's two-level bootstrap is :func:`infodiv.submodularity.gain_slope` of the
    per-example curves real − mean control (``[P, M+1, N]``, same orders, same examples)."""
    from ..curves import order_scores
    from ..submodularity import gain_slope

    perms = [rng.permutation(rep.run.n_members) for _ in range(rep.design.n_orders)]
    diff = np.stack([order_scores(rep.f, p) for p in perms])
    fits = control_fits(rep)
    for f in fits:
        diff -= np.stack([order_scores(f, p) for p in perms]) / len(fits)
    out = gain_slope(diff, rep.f.sign(), n_bootstrap=n_bootstrap, random_state=rng)
    return {"value": out["slope"], "ci": out["ci"]}


def _applies(run, design):
    reason = needs_members(run, design)
    if reason is None and run.n_members < 3:
        return f"needs M >= 3 members (a slope of g over k = 1..M), got {run.n_members}"
    return reason


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorem 7 (diminishing returns because of redundancy): the gain profile against "
               "the members' conditionally independent control",
    "statistic_name": "OLS slope of g(k) of the real members minus that of the conditionally "
                      "independent control (same random orders)",
    "sentence": "gains diminish faster than they would for the same members made conditionally "
                "independent: the extra diminishing is redundancy, not the ceiling",
    "conclusions": {
        "holds": "gains diminish faster than for the conditionally independent control: redundancy"
                 " adds to the diminishing",
        "opposite": "gains diminish more slowly than for the conditionally independent control",
        "absent": "gains diminish as fast as for the conditionally independent control: redundancy"
                  " adds nothing to the diminishing",
    },
}

CLAIM = scalar_claim(name="gains_vs_control", statistic=slope_difference, direction="less",
                     surrogate="planted_redundancy_ci", rule_name="slope difference",
                     quick=quick, applies=_applies, units="{units} per member",
                     group="control", short="gains vs control", default=False,
                     margin=MARGINS["gain_slope"], **WORDS)
