"""How the claims name their matched surrogates and state the three-part rule: one wording each,
shared by every claim that uses it."""

from __future__ import annotations

__all__ = ["MATCHED_CASES", "three_part"]

#: surrogate kind -> how a reader names the matched case built from the run
MATCHED_CASES = {
    "conditionally_independent": "a matched submodular case (members permuted independently "
                                 "within each class, same n)",
    "planted_redundancy": "a matched case with planted redundancy (the strongest members copied "
                          "with their noise onto others, same n)",
    "planted_synergy": "a matched case with a planted synergistic pair the objective can read "
                       "(same n)",
}


def three_part(statistic: str, direction: str) -> str:
    """The three-part rule of a scalar claim in words (``{alpha}`` left to fill):
    interval and null-corrected interval beyond 0 on the claim's side, label-null p below
    alpha in its direction."""
    side = "below" if direction == "less" else "above"
    return (f"{statistic}: 95% CI and null-corrected CI {side} 0, label-null p({direction}) "
            "< {alpha}")
