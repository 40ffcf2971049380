"""Claim: a member's marginal gain shrinks with its measured redundancy with the set.

For pairs (S, x) of the design's DR chains (S ≠ ∅, at most :data:`MAX_PAIRS`), the gain
ρ_x(S) = f(S ∪ {x}) − f(S) of the design's set function is set against x's redundancy with S,

    red(x, S) = I(x;Y) − I(x;Y | U_S) = Î(x) + Î(S) − Î(S ∪ {x})      (chain rule),

each Î(T) the cross-fitted usable information of the summed logits Σ_{m∈T} u_m about Y
(:func:`estimators.relevancy.probe_informations`, the closed-form LDA probe, two stratified
folds: a cheap member of the valid family, a lower-side estimate at most H(Y)), refitted on
every replicate. The statistic is the partial correlation r of gain and redundancy given
ρ_x(∅) and |S| (:func:`infodiv.diversity.diversity_fit`); negative beyond its label null (with
shuffled labels both sides are noise and r sits at its null) is the finding: more redundancy,
smaller gain. With an information objective f the population relation is the chain rule itself
(ρ_x(S) = I(x;Y) − red), so a detection there says that the redundancy is measurable and varies
between pairs; with accuracy it links the readout's gains to the information redundancy.
Matched case: planted redundancy (the strongest members copied with their noise onto others:
pairs whose partner is in S carry high redundancy and low gain,
:func:`infodiv.inference.surrogates.planted_redundancy`).
"""

from __future__ import annotations

import numpy as np

from ._cases import MARGINS, scalar_claim
from ._chains import singleton_gains
from ._control import needs_members
from ._pairs import pairs_partial_r, pairs_quick

__all__ = ["CLAIM", "MAX_PAIRS", "pairs_of", "redundancies", "partial_r"]

#: (S, x) pairs per replicate (each costs two probe fits)
MAX_PAIRS = 60


def pairs_of(rep) -> list:
    """``(chain index, 0 for A / 1 for B, S, x)`` of the first :data:`MAX_PAIRS` pairs with
    S ≠ ∅ of the replicate's chains."""
    out = []
    for i, (a_set, b_set, x) in enumerate(rep.chains):
        for col, s in enumerate((a_set, b_set)):
            if len(s) and len(out) < MAX_PAIRS:
                out.append((i, col, np.asarray(s, dtype=np.int64), int(x)))
    return out


def redundancies(rep) -> np.ndarray:
    """red(x, S) (bits) of every pair of :func:`pairs_of` (module docstring)."""
    def compute():
        from estimators.relevancy import probe_informations

        pairs = pairs_of(rep)
        u = np.asarray(rep.run.u, dtype=np.float64)
        xs = sorted({x for *_, x in pairs})
        sets = [u[:, s].sum(axis=1) for *_, s, _ in pairs]
        sets += [u[:, np.append(s, x)].sum(axis=1) for *_, s, x in pairs]
        feats = np.stack([u[:, x] for x in xs] + sets)
        values, _ = probe_informations(feats, rep.run.labels, random_state=rep.seed)
        single = dict(zip(xs, values[:len(xs)]))
        p = len(pairs)
        with_s, with_sx = values[len(xs):len(xs) + p], values[len(xs) + p:]
        return np.array([single[x] for *_, x in pairs]) + with_s - with_sx
    return rep.cached("marginal_gain_redundancies", compute)


def _design(rep):
    """The pairs ``(i, col)``, their redundancies and controls [1, ρ_x(∅), |S|]."""
    pairs = pairs_of(rep)
    singles = singleton_gains(rep)
    controls = np.column_stack([np.ones(len(pairs)), [singles[x] for *_, x in pairs],
                                [len(s) for _, _, s, _ in pairs]])
    return [(i, col) for i, col, _, _ in pairs], redundancies(rep), controls


def partial_r(rep) -> float:
    """Partial r of ρ_x(S) and red(x, S) given ρ_x(∅) and |S| (NaN with fewer than 8 pairs
    or a collinear design)."""
    return pairs_partial_r(rep, *_design(rep))


def quick(rep, rng, n_bootstrap) -> dict | None:
    """One fit, examples reweighted: with the redundancies and controls fixed, the percentile
    interval of r from the reweighted per-example gains, as the diversity effect
    (:func:`infodiv.claims._pairs.pairs_quick`)."""
    return pairs_quick(rep, rng, n_bootstrap, *_design(rep))


def _applies(run, design):
    """Member arrays with two examples of every class (two folds), M >= 3, DR chains."""
    reason = needs_members(run, design)
    if reason is None and run.n_members < 3:
        reason = f"needs M >= 3 members, got {run.n_members}"
    return reason or (None if design.n_triples else "no DR chains (n_triples = 0)")


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorem 7 (diminishing returns because of redundancy): a member's marginal gain "
               "against its measured redundancy with the set, I(x;Y) - I(x;Y|U_S)",
    "statistic_name": "partial r of rho_x(S) and x's redundancy with S (usable-information chain "
                      "rule, LDA probe on summed logits) given rho_x(empty) and |S|",
    "sentence": "a member gains less where it is more redundant with the set (its information "
                "about the label already held by the set)",
    "conclusions": {
        "holds": "a member gains less where it is more redundant with the set",
        "opposite": "a member gains more where it is more redundant with the set",
        "absent": "a member's gain does not depend on its redundancy with the set",
    },
}

CLAIM = scalar_claim(name="marginal_gain_redundancy", statistic=partial_r, direction="less",
                     surrogate="planted_redundancy", rule_name="partial r", quick=quick,
                     applies=_applies, units="dimensionless (partial correlation)",
                     group="control", short="marginal gain vs redundancy", default=False,
                     margin=MARGINS["correlation"], **WORDS)
