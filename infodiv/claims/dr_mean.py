"""Claim: the mean nested-chain difference ρ_x(A) − ρ_x(B) over A ⊂ B, x ∉ B is positive.

The chains are the design's fixed DR triples (prefixes of uniformly random orders); the
statistic is the mean of d_t = ρ_x(A) − ρ_x(B) (utility units). Positive beyond its null is
diminishing returns on nested sets; its matched case is the conditionally independent control.
"""

from __future__ import annotations

import numpy as np

from ._cases import MARGINS, scalar_claim
from ._chains import chain_differences, example_differences, needs_chains

__all__ = ["CLAIM", "mean_difference"]


def mean_difference(rep) -> float:
    """mean_t (ρ_x(A) − ρ_x(B)) over the fixed chains."""
    return float(chain_differences(rep).mean())


def quick(rep, rng, n_bootstrap) -> dict:
    """One fit, examples reweighted: percentile interval of the mean per-example difference."""
    from estimators.resampling import bootstrap_means

    d = example_differences(rep)
    boot = bootstrap_means(d, n_bootstrap, random_state=rng).mean(axis=1)
    return {"value": float(d.mean()), "ci": tuple(np.percentile(boot, [2.5, 97.5]))}


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "submodularity on nested sets: rho_x(A) >= rho_x(B) for A in B, x not in B",
    "statistic_name": "mean over the DR chains of rho_x(A) - rho_x(B)",
    "sentence": "a member adds more to a smaller set than to a larger one containing it, on "
                "average over nested chains",
    "conclusions": {
        "holds": "a member adds more to a smaller set than to a larger one containing it",
        "opposite": "a member adds more to a larger set than to a smaller one inside it, on "
                    "average",
        "absent": "a member adds about as much to a smaller set as to a larger one",
    },
}

CLAIM = scalar_claim(name="dr_mean_difference_positive", statistic=mean_difference,
                     direction="greater", surrogate="conditionally_independent",
                     rule_name="mean rho_x(A) - rho_x(B)", quick=quick, applies=needs_chains,
                     group="curve", short="nested sets", default=True,
                     margin=MARGINS["mean_gain"], **WORDS)
