"""Claim: diminishing returns on average — the gain profile g(k) falls with k.

g(k) = mean over random orders π of sign·(f(π_{1..k}) − f(π_{1..k−1})); the statistic is its
OLS slope on k (k = 1..M), :func:`infodiv.submodularity.gain_slope`. A negative slope beyond
its label null is the finding; its matched case is the run's own conditionally independent
control (each member permuted within its class: Theorem 7's premise made true, so the gains
of I(U_S;Y) diminish by construction).
"""

from __future__ import annotations

from ._cases import MARGINS, scalar_claim
from ._chains import order_samples

__all__ = ["CLAIM", "slope"]


def slope(rep) -> float:
    """OLS slope of g(k) on k over the replicate's random orders."""
    from ..submodularity import gain_slope

    out = gain_slope(order_samples(rep), rep.f.sign(), n_bootstrap=1)
    return float(out["slope"])


def quick(rep, rng, n_bootstrap) -> dict:
    """One fit, fresh orders, per-example curves: the two-level example bootstrap of
    :func:`infodiv.submodularity.gain_slope` (examples reweighted, orders inside)."""
    from ..curves import orders_scores
    from ..submodularity import gain_slope

    perms = [rng.permutation(rep.run.n_members) for _ in range(rep.design.n_orders)]
    samples = orders_scores(rep.f, perms)
    out = gain_slope(samples, rep.f.sign(), n_bootstrap=n_bootstrap, random_state=rng)
    return {"value": out["slope"], "ci": out["ci"]}


def _applies(run, design):
    return None if run.n_members >= 2 else f"needs M >= 2 members, got {run.n_members}"


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorems 5-7 (submodularity of I(U_S;Y) under conditional independence): gains "
               "diminish as members are added",
    "statistic_name": "OLS slope of the random-order gain profile g(k) on k",
    "sentence": "adding a member helps less the more members are already there, on average",
    "conclusions": {
        "holds": "gains diminish as members are added",
        "opposite": "gains grow as members are added (increasing returns)",
        "absent": "gains neither fall nor rise with k beyond the margin: the curve is straight",
    },
}

CLAIM = scalar_claim(name="diminishing_returns", statistic=slope, direction="less",
                     surrogate="conditionally_independent", rule_name="g(k) slope", quick=quick,
                     applies=_applies, units="{units} per member",
                     group="curve", short="diminishing returns", default=True,
                     margin=MARGINS["gain_slope"], **WORDS)
