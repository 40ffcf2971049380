"""Claim: some nested chain violates diminishing returns beyond its null (a triple whose gain
grows: ρ_x(A) < ρ_x(B) for A ⊂ B).

The statistic is the vector of chain differences d_t; the rule is the Westfall–Young
step-down minimum-z label-permutation test over the chains
(:func:`infodiv.inference.verdicts.violation_test`: family-wise error ≤ α by construction).
Its matched case is a planted synergistic pair the objective can read
(:func:`infodiv.inference.surrogates.planted_style`).
"""

from __future__ import annotations

import numpy as np

from ._cases import matched_claim
from ._chains import chain_differences, example_differences, needs_chains

__all__ = ["CLAIM", "decide"]


def differences(rep) -> np.ndarray:
    return chain_differences(rep)


def quick(rep, rng, n_bootstrap) -> dict:
    """One fit, examples reweighted: each chain's difference and its bootstrap se."""
    from estimators.resampling import bootstrap_means

    d = example_differences(rep)
    boot = bootstrap_means(d, n_bootstrap, random_state=rng)
    return {"value": d.mean(axis=0), "se": boot.std(axis=0, ddof=1)}


def decide(value, se, null, alpha) -> tuple[bool, dict]:
    """The step-down test; the record's estimate is the fraction of significant chains and its
    p the smallest family-wise adjusted p."""
    from ..inference.verdicts import violation_test

    vt = violation_test(value, se, null, alpha)
    sig = vt["significant"]
    return bool(sig.any()), {
        "estimate": float(sig.mean()), "p": float(np.min(vt["p_adjusted"])),
        "extra": {"n_triples": int(sig.size), "n_significant": int(sig.sum()),
                  "critical_z": vt["critical"], "min_z": float(np.min(vt["z"])),
                  "estimate_meaning": "fraction of chains significant (family-wise)"}}


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "submodularity (Theorems 5-7): no nested chain whose gain grows",
    "statistic_name": "per-chain rho_x(A) - rho_x(B) (estimate: fraction of chains significant)",
    "sentence": "some member adds more to a larger set than to a smaller one inside it: the "
                "objective is not submodular on this run",
    "conclusions": {
        "holds": "some nested chain gains more on the larger set: the objective is not submodular "
                 "here",
    },
}

CLAIM = matched_claim(
    name="violations",
    statistic=differences, direction="less", surrogate="planted_synergy",
    rule="some triple's null-corrected difference significantly < 0 by the step-down min-z "
         "label-permutation test over triples (family-wise error <= {alpha})",
    quick=quick, decide=decide, applies=needs_chains,
    units="fraction of chains",
    group="curve", short="violations", default=True, **WORDS)
