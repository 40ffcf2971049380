"""Claim: the diversity effect — a member's gain grows with its non-redundancy with the set.

For every pair (S, x) of the design's DR chains with S ≠ ∅, regress the gain ρ_x(S) on x's
linear non-redundancy with S (1 − R² of U_x on U_S) given ρ_x(∅) and |S|
(:mod:`infodiv.diversity`). The statistic is the partial correlation r of gain and
non-redundancy (the sign of the coefficient β, with a null spread that does not depend on the
design, so a surrogate can be judged against the run's null); positive beyond its null is the
finding. Its matched case plants redundancy: the strongest members copied with noise onto
random others (β > 0 by construction).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ._cases import MARGINS, scalar_claim
from ._chains import chain_values, singleton_gains
from ._pairs import pairs_partial_r, pairs_quick

__all__ = ["CLAIM", "partial_r", "design_of"]


#: (digest of the rows' members, digest of the chains) -> the chains' non-redundancies, the
#: :data:`_KEPT` last used: they read no label, so the replicates on unchanged rows (every
#: label permutation and rerun, each objective) share one computation
_NON_REDUNDANCY: dict = {}
_KEPT = 16


def _digest(parts) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        part = np.ascontiguousarray(part)
        h.update(f"{part.dtype}{part.shape}".encode())
        h.update(part.reshape(-1).view(np.uint8))
    return h.digest()


def non_redundancy(rep, rows) -> list:
    """x's non-redundancy with A and with B of every chain (``rows``), from the covariance
    of the replicate's member variables (computed once per distinct rows and chains)."""
    from ..diversity import chain_non_redundancies
    from ..information import member_variables

    key = (_digest([rep.run.u]), _digest([p for a, b, x in rep.chains for p in (a, b, [x])]))
    nr = _NON_REDUNDANCY.pop(key, None)
    if nr is None:
        x = member_variables(rep.run.u)
        cov = np.cov(x.reshape(x.shape[0], -1), rowvar=False)
        nr = chain_non_redundancies(rows, cov, x.shape[2])
    _NON_REDUNDANCY[key] = nr                      # the last used go last
    while len(_NON_REDUNDANCY) > _KEPT:
        del _NON_REDUNDANCY[next(iter(_NON_REDUNDANCY))]
    return nr


def design_of(rep) -> dict:
    """The regression's pairs and design on this replicate (``diversity.diversity_design``):
    non-redundancies from the run's member covariance, ρ_x(∅) and |S| from its fit."""
    def compute():
        from ..diversity import diversity_design

        u = chain_values(rep)
        rows = [{"A": a, "B": b, "x": int(xx), "gain_A": float(g[1] - g[0]),
                 "gain_B": float(g[3] - g[2])} for (a, b, xx), g in zip(rep.chains, u)]
        return rows, diversity_design(rows, singleton_gains(rep), None, None,
                                      non_redundancy=non_redundancy(rep, rows))
    return rep.cached("diversity_design", compute)


def partial_r(rep) -> float:
    """Partial r of ρ_x(S) and x's non-redundancy with S given ρ_x(∅) and |S| (NaN when the
    regression is undefined: fewer than 8 pairs or a collinear design)."""
    design = design_of(rep)[1]
    return pairs_partial_r(rep, design["index"], design["diversity"], design["controls"])


def quick(rep, rng, n_bootstrap) -> dict | None:
    """One fit, examples reweighted: the percentile interval of r from the reweighted
    per-example pair gains, the design fixed (:func:`infodiv.claims._pairs.pairs_quick`)."""
    design = design_of(rep)[1]
    return pairs_quick(rep, rng, n_bootstrap, design["index"], design["diversity"],
                       design["controls"])


def _applies(run, design):
    if not hasattr(run, "u"):
        return "needs member variables (a run, not a callable set function)"
    return None if design.n_triples else "no DR chains (n_triples = 0)"


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "the paper's diversity claim (Theorem 4 reading): a member helps more where it is "
               "less redundant with the set",
    "statistic_name": "partial r of rho_x(S) and x's linear non-redundancy with S given "
                      "rho_x(empty) and |S|",
    "sentence": "a member's gain grows with how little of it the set already explains",
    "conclusions": {
        "holds": "a member gains more where the set explains less of it",
        "opposite": "a member gains less where the set explains less of it",
        "absent": "a member's gain does not depend on how much of it the set explains",
    },
}

CLAIM = scalar_claim(name="diversity_effect", statistic=partial_r, direction="greater",
                     surrogate="planted_redundancy", quick=quick, applies=_applies,
                     rule_name="diversity regression beta > 0, tested on its partial r (same "
                               "sign)",
                     units="dimensionless (partial correlation)",
                     group="curve", short="diversity effect", default=True,
                     margin=MARGINS["correlation"], **WORDS)
