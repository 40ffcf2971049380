"""The paper's claims, one module each, and their registry (DESIGN.md 2.8).

A claim module defines ``CLAIM``, an :class:`infodiv.inference.claim.Claim`: the theorem it
tests, its statistic (a function of one replicate's fitted set function and run), the
direction that is a finding, its matched surrogate and its sentence.
:func:`infodiv.inference.engine.evaluate` turns claims into verdict records. Adding a claim
is one module here plus one row in :data:`CLAIMS` (``docs/claims.md``).
"""

from __future__ import annotations

from . import (
    diminishing_returns,
    diversity_effect,
    dr_mean,
    gains_vs_control,
    greedy_vs_prefix,
    greedy_vs_random,
    marginal_gain,
    premise,
    redundancy_cost,
    theorem8,
    violations,
)

__all__ = ["CLAIMS", "CURVE_CLAIMS", "SELECTION_CLAIMS", "get_claims"]

#: name -> Claim, in report order
CLAIMS = {m.CLAIM.name: m.CLAIM for m in (diminishing_returns, dr_mean, violations,
                                           diversity_effect, greedy_vs_random,
                                           greedy_vs_prefix)}
CLAIMS.update({m.CLAIM.name: m.CLAIM for m in (premise, redundancy_cost, gains_vs_control,
                                               marginal_gain, theorem8)})
#: the claims about the curves of one objective, and the held-out selection comparisons
CURVE_CLAIMS = ("diminishing_returns", "dr_mean_difference_positive", "violations",
                "diversity_effect")
SELECTION_CLAIMS = ("greedy_beats_random", "greedy_beats_prefix")


def get_claims(names) -> tuple:
    """The registered claims ``names`` (an unknown name: ValueError naming the choices)."""
    bad = [n for n in names if n not in CLAIMS]
    if bad:
        raise ValueError(f"unknown claims {bad}; choose from {list(CLAIMS)}")
    return tuple(CLAIMS[n] for n in names)
