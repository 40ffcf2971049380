"""How the claims name their matched surrogates, size them on a run and state the three-part
rule: one wording and one setting each, shared by every claim that uses it."""

from __future__ import annotations

from ..inference.claim import Claim
from ..inference.outcome import Margin

__all__ = ["MARGINS", "MATCHED_CASES", "SURROGATE_SETTINGS", "redundancy_copies",
           "redundancy_half", "synergy_style", "three_part", "matched_claim",
           "scalar_claim"]

#: surrogate kind -> how a reader names the matched case built from the run
MATCHED_CASES = {
    "conditionally_independent": "a matched submodular case (members permuted independently "
                                 "within each class, same n)",
    "planted_redundancy": "a matched case with planted redundancy (the strongest members copied "
                          "with their noise onto others, same n)",
    "planted_redundancy_ci": "a matched case with planted redundancy on the conditionally "
                             "independent members (within-class permuted, then half of them "
                             "replaced by noisy copies of the strongest, same n)",
    "planted_synergy": "a matched case with a planted synergistic pair the objective can read "
                       "(same n)",
}


#: the smallest effects worth detecting (δ), one rule per kind of statistic, fixed before any
#: run was looked at (``docs/claims.md``); Δ = sign·(f(all) − f(∅)) is what all M members
#: add to the objective together, so Δ/M is the mean gain of one member
MARGINS = {
    "gain_slope": Margin(0.25, "gain_slope",
                         "a slope of g(k) that lowers the gain by less than a quarter of the mean "
                         "gain per member from the first member to the last bends the curve f(k) "
                         "away from its chord by less than M/(32(M − 1)) of its total gain "
                         "(about 1/32; the bend of a linear g(k) is |slope|·M²/8 at k = M/2): "
                         "no reader of a layer-addition curve would call that diminishing"),
    "total_gain": Margin(0.05, "total_gain",
                         "a difference below a twentieth of what all members achieve together "
                         "moves the ensemble's end point by less than the paper's figures can "
                         "show, and it is the scale on which a set is compared with a set"),
    "mean_gain": Margin(0.25, "mean_gain",
                        "a difference below a quarter of what one member adds on average "
                        "changes no choice of members: it is smaller than the gain of any "
                        "member worth keeping"),
    "correlation": Margin(0.1, "absolute",
                          "a (partial) correlation below 0.1 explains under 1% of the variance: "
                          "Cohen's (1988) smallest effect worth naming"),
    "squared_correlation": Margin(0.01, "absolute",
                                  "an excess mean squared correlation below 0.01 is a "
                                  "within-class correlation below 0.1 between members: Cohen's "
                                  "(1988) smallest effect worth naming, on the r² scale"),
}


def redundancy_copies(run, design) -> dict:
    """Planted redundancy on ``run``: min(4, M // 2) members copied (at least 1)."""
    return {"n_copies": max(1, min(4, run.n_members // 2))}


def redundancy_half(run, design) -> dict:
    """Planted redundancy over the conditionally independent members: M // 2 members copied
    (at least 1), each with a twentieth of its source's within-class noise added.

    Near-exact copies, because a summed readout sees a copy of a member in the set as that
    member weighted twice: the gain profile moves only through the noise the copy repeats.
    Measured on SmolLM2-135M / SST-2 blocks (B = K = 50, 10 surrogates): gains-vs-control
    power 0.5 at noise 0.05 against 0.3 at 0.25 (usable information of the readout)."""
    return {"n_copies": max(1, run.n_members // 2), "noise": 0.05}


def synergy_style(run, design) -> dict:
    """A planted synergistic pair in the style the design's objective can read
    (:func:`infodiv.inference.surrogates.planted_style`)."""
    from ..inference.surrogates import planted_style

    return {"style": planted_style(design.objective)}


#: surrogate kind -> its settings on a run (``Claim.surrogate_kwargs``), for the kinds that
#: take any
SURROGATE_SETTINGS = {"planted_redundancy": redundancy_copies, "planted_synergy": synergy_style,
                      "planted_redundancy_ci": redundancy_half}


def three_part(statistic: str, direction: str) -> str:
    """The three-part rule of a scalar claim in words (``{alpha}`` left to fill):
    interval and null-corrected interval beyond 0 on the claim's side, label-null p below
    alpha in its direction."""
    side = "below" if direction == "less" else "above"
    return (f"{statistic}: 95% CI and null-corrected CI {side} 0, label-null p({direction}) "
            "< {alpha}")


def matched_claim(*, surrogate: str, **fields) -> Claim:
    """The :class:`~infodiv.inference.claim.Claim` of ``fields`` matched to the shared case
    ``surrogate``: its name for a reader (:data:`MATCHED_CASES`) and its settings on a run
    (:data:`SURROGATE_SETTINGS`) filled in."""
    return Claim(surrogate=surrogate, matched_case=MATCHED_CASES[surrogate],
                 surrogate_kwargs=SURROGATE_SETTINGS.get(surrogate), **fields)


def scalar_claim(*, rule_name: str, direction: str, **fields) -> Claim:
    """:func:`matched_claim` of a scalar statistic decided by the three-part rule, stated in
    words as :func:`three_part` of ``rule_name`` (the statistic's short name) on the side
    ``direction``."""
    return matched_claim(direction=direction, rule=three_part(rule_name, direction), **fields)
