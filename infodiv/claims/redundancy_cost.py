"""Claim: redundancy costs the ensemble — f(all) of the real members falls short of the same
members made conditionally independent.

Statistic: the gap sign·(f̄_ci(all) − f(all)), f̄_ci the mean over
:data:`~infodiv.claims._control.CONTROL_DRAWS` within-class permutations of the members
(Theorem 7's premise made true on the replicate's own rows, each member's class-conditional
distribution kept) and f the design's set function, refitted on every replicate: the accuracy
of the calibrated summed readout (``accuracy_calibrated``) or usable information
(``mi_usable``, bits). Positive beyond its label null (with shuffled labels both sides sit at
chance and the gap at 0) is the finding: the members' dependence given Y costs accuracy or
information that independent members of the same quality would have. Its matched case plants
redundancy (the strongest members copied with their own within-class noise onto others), which
the control removes by construction (:func:`infodiv.inference.surrogates.planted_redundancy`).
"""

from __future__ import annotations

import numpy as np

from ._cases import MARGINS, scalar_claim
from ._control import control_fits, needs_members

__all__ = ["CLAIM", "gap"]


def gap(rep) -> float:
    """sign·(mean over control draws of f_ci(all) − f(all)) on this replicate."""
    everyone = np.arange(rep.run.n_members)
    real = rep.f.value(everyone)
    control = np.mean([f.value(everyone) for f in control_fits(rep)])
    return float(rep.f.sign() * (control - real))


def quick(rep, rng, n_bootstrap) -> dict:
    """One fit, examples reweighted: the per-example gap sign·(mean_d s_ci,d − s) of the
    full set's per-example scores (the control's rows are the same examples, labels kept)
    and the percentile interval of its bootstrap means."""
    from estimators.resampling import bootstrap_means

    everyone = np.arange(rep.run.n_members)
    control = np.mean([f.scores(everyone) for f in control_fits(rep)], axis=0)
    d = rep.f.sign() * (control - np.asarray(rep.f.scores(everyone), dtype=np.float64))
    boot = bootstrap_means(d[:, None], n_bootstrap, random_state=rng)[:, 0]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {"value": float(d.mean()), "ci": (float(lo), float(hi))}


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorem 7 (redundancy): f(all) against the members' conditionally independent "
               "control (each member permuted within its class)",
    "statistic_name": "f(all) of the conditionally independent control minus f(all) of the real "
                      "members (utility units; mean of several within-class permutations)",
    "sentence": "the members' dependence given the label costs the ensemble: the same members made "
                "conditionally independent reach more",
    "conclusions": {
        "holds": "the same members made conditionally independent reach more: their dependence "
                 "costs the ensemble",
        "opposite": "the same members made conditionally independent reach less: their dependence "
                    "helps the ensemble, against the paper's mechanism",
        "absent": "the members reach as much as their conditionally independent control",
    },
}

CLAIM = scalar_claim(name="redundancy_cost", statistic=gap, direction="greater",
                     surrogate="planted_redundancy_ci", rule_name="gap", quick=quick,
                     applies=needs_members,
                     group="control", short="redundancy cost", default=True,
                     margin=MARGINS["total_gain"], **WORDS)
