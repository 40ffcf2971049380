"""The conditionally independent control of one replicate, shared by the information claims.

Theorem 7's premise made true on the replicate's own rows: every member permuted
independently within each class (:func:`infodiv.inference.surrogates.conditionally_independent`:
each member's class-conditional distribution kept exactly, the members' dependence given Y
destroyed). :data:`CONTROL_DRAWS` draws from the replicate's stream, each with the design's set
function fitted on it like ``rep.f`` (same objective, same ``random_state``), computed once per
replicate and shared by the redundancy-cost and gains-vs-control claims.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONTROL_DRAWS", "control_runs", "control_fits", "needs_members"]

#: within-class permutation draws per replicate (their mean is the control's value)
CONTROL_DRAWS = 4


def control_runs(rep) -> list:
    """:data:`CONTROL_DRAWS` conditionally independent copies of ``rep.run``."""
    def compute():
        from ..inference.surrogates import conditionally_independent

        seeds = rep.rng.integers(0, 2**31 - 1, size=CONTROL_DRAWS)
        return [conditionally_independent(rep.run, random_state=int(s)) for s in seeds]
    return rep.cached("control_runs", compute)


def control_fits(rep) -> list:
    """The design's set function fitted on each of :func:`control_runs`."""
    def compute():
        from ..setfunctions import make_set_function

        d = rep.design
        return [make_set_function(r, d.objective, random_state=rep.seed, **d.objective_kwargs)
                for r in control_runs(rep)]
    return rep.cached("control_fits", compute)


def needs_members(run, design) -> str | None:
    """Why a control claim cannot be tested on ``run`` (None: it can): member arrays, M >= 2
    and at least 2 examples of every class (a within-class permutation must move rows)."""
    if not hasattr(run, "u"):
        return "needs member variables (a run, not a callable set function)"
    if run.n_members < 2:
        return f"needs M >= 2 members, got {run.n_members}"
    counts = np.unique(np.asarray(run.labels), return_counts=True)[1]
    if counts.min() < 2:
        return f"needs >= 2 examples of every class, got a class with {int(counts.min())}"
    return None
