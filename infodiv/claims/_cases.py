"""How the claims name their matched surrogates, size them on a run and state the three-part
rule: one wording and one setting each, shared by every claim that uses it."""

from __future__ import annotations

from ..inference.claim import Claim

__all__ = ["MATCHED_CASES", "SURROGATE_SETTINGS", "redundancy_copies",
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
