"""What a verdict concludes: the claim holds, the opposite holds, the effect is absent, or the
run cannot tell — never a bare "not detected".

A claim (:mod:`infodiv.claims`) states a direction and, where its statistic has an interval,
the smallest effect worth detecting, its margin δ (:class:`Margin`), fixed by a rule before any
run is looked at and stated in the claim's units (``docs/claims.md`` gives each claim's δ and
why). :func:`decide_outcome` turns the engine's numbers into one of:

- **holds**: the claim's three-part rule fires in the claim's direction (95% interval and
  null-corrected interval beyond 0, label-null p < α) and the rule is calibrated;
- **opposite**: the same rule fires in the other direction (e.g. "the members made
  conditionally independent do *worse*": dependence helps the ensemble), calibrated;
- **absent**: an equivalence statement — the effect in the claim's direction is smaller than
  δ with 95% confidence: the claim-side ends of the 95% interval and of the null-corrected
  interval both lie within δ of 0 (for a claim of direction "greater": high < δ; "less":
  low > −δ). Each end is a one-sided 97.5% bound, so this is the one-sided half of a two
  one-sided tests procedure (Schuirmann 1987) at level α/2, conservative at the record's α;
- **inconclusive**: none of these. The record then says how far the run is from concluding:
  the minimal detectable effect at this n (power 0.8 at two-sided level α, from the
  interval's normal-theory standard error se = (high − low) / (2 z_{1−α/2})),

      MDE = (z_{1−α/2} + z_{0.8}) · se,

  and the number of examples at which an effect of size δ would be detected with power 0.8,
  n₈₀ = ⌈n · (MDE / δ)²⌉ (se ∝ n^{−1/2}), beside the detection rate on the claim's matched
  case measured at this n. An n₈₀ at or below the run's own n is not reported: the interval
  is already narrow enough to detect δ, so more examples would not decide (the reason says
  what stops the conclusion, e.g. a label null that does not confirm the interval);
- **untestable**: the run's members carry no detectable information about the label, or the
  objective is the raw readout of a prompt that reads out below chance
  (:mod:`infodiv.inference.testability`): there is nothing for the claim to explain there;
- **report**: a claim that prints bounds and never detects (Theorem 8).

A rule that fires on shuffled labels beyond its level (:data:`CALIBRATION_RULE`) cannot
conclude in either direction: its verdict is *inconclusive* with that reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

__all__ = ["Margin", "OUTCOMES", "CALIBRATION_RULE", "POWER_TARGET", "decide_outcome",
           "min_detectable_effect", "n_for_power"]

#: the conclusions a verdict can reach, in the order a reader meets them
OUTCOMES = ("holds", "opposite", "absent", "inconclusive", "untestable", "report")

#: the calibration rule in the words every page and doc uses
CALIBRATION_RULE = ("a rule is calibrated unless the Wilson 95% interval of how often it fires "
                    "on shuffled labels lies entirely above its level α")

#: the power the n needed is computed for
POWER_TARGET = 0.8

_SCALES = ("absolute", "total_gain", "mean_gain", "gain_slope")


@dataclass(frozen=True)
class Margin:
    """The smallest effect a claim counts, δ, as a rule fixed before looking.

    Parameters
    ----------
    fraction : the multiple of the scale
    scale : ``"absolute"`` (δ = fraction, in the claim's units: correlations),
        ``"total_gain"`` (δ = fraction · Δ, Δ = sign·(f(all) − f(∅)) the members' total gain on
        the objective), ``"mean_gain"`` (δ = fraction · Δ / M: a share of the mean gain of one
        member) or ``"gain_slope"`` (δ = fraction ·
        Δ / (M (M − 1)): a slope of g(k) at which the gain falls by that share of the mean gain
        from the first member to the last)
    why : the justification, in words (``docs/claims.md``)
    """

    fraction: float
    scale: str
    why: str

    def __post_init__(self):
        if self.scale not in _SCALES:
            raise ValueError(f"scale must be one of {_SCALES}, got {self.scale!r}")
        if not self.fraction > 0:
            raise ValueError(f"fraction must be > 0, got {self.fraction}")

    def value(self, total_gain: float | None, n_members: int) -> float | None:
        """δ on a run whose members gain ``total_gain`` together; None where a relative margin
        has no positive gain (or too few members) to be a share of."""
        if self.scale == "absolute":
            return float(self.fraction)
        if total_gain is None or not total_gain > 0 or n_members < 2:
            return None
        if self.scale == "total_gain":
            return float(self.fraction * total_gain)
        per_member = total_gain / n_members
        if self.scale == "mean_gain":
            return float(self.fraction * per_member)
        return float(self.fraction * per_member / (n_members - 1))

    def words(self) -> str:
        """The rule in words: ``"0.1"`` / ``"1/4 of the mean gain per member"``."""
        share = {0.25: "1/4", 0.5: "1/2", 0.1: "1/10", 0.05: "1/20"}.get(
            self.fraction, f"{self.fraction:g}×")
        if self.scale == "absolute":
            return f"{self.fraction:g}"
        if self.scale == "total_gain":
            return f"{share} of the members' total gain (Δ)"
        if self.scale == "mean_gain":
            return f"{share} of the members' mean gain per member (Δ/M)"
        return f"{share} of the mean gain per member over M − 1 steps (Δ/(M(M − 1)))"

    def to_dict(self) -> dict:
        return {"fraction": self.fraction, "scale": self.scale, "rule": self.words(),
                "why": self.why}


def _z(alpha: float) -> float:
    return float(norm.ppf(1 - alpha / 2))


def min_detectable_effect(interval, alpha: float = 0.05,
                          power: float = POWER_TARGET) -> float | None:
    """(z_{1−α/2} + z_power) · se, se = (high − low) / (2 z_{1−α/2}) (module docstring)."""
    if interval is None:
        return None
    lo, hi = (float(v) for v in interval)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    se = (hi - lo) / (2 * _z(alpha))
    return float((_z(alpha) + norm.ppf(power)) * se)


def n_for_power(n: int, mde: float | None, delta: float | None) -> int | None:
    """⌈n · (MDE / δ)²⌉: the n at which an effect of δ is detected with the MDE's power."""
    if mde is None or delta is None or not delta > 0 or not n:
        return None
    return int(math.ceil(n * (mde / delta) ** 2))


def _beyond(interval, side: str) -> bool:
    lo, hi = interval
    return hi < 0 if side == "less" else lo > 0


def _within_margin(interval, side: str, delta: float) -> bool:
    lo, hi = interval
    return lo > -delta if side == "less" else hi < delta


def decide_outcome(*, direction: str, detected: bool, opposite: bool, calibrated: bool,
                   interval, corrected_interval, margin: float | None, n: int,
                   alpha: float = 0.05, untestable: str | None = None,
                   report_only: bool = False,
                   no_margin: str = "no margin on this run (the members gain nothing here)"
                   ) -> dict:
    """The conclusion of one verdict (module docstring).

    Parameters
    ----------
    direction : ``"less"`` / ``"greater"``: the claim's side of 0
    detected, opposite : the three-part rule fired on the claim's / the other side
    calibrated : the rule's shuffled-label rate passes :data:`CALIBRATION_RULE`
    interval, corrected_interval : ``[low, high]`` (None for a statistic without one)
    margin : δ in the claim's units (None: no equivalence test for this claim on this run)
    n : examples of the run
    untestable : why the run cannot test the claim on this objective (None: it can;
        :func:`infodiv.inference.testability.untestable_reason`)
    no_margin : why ``margin`` is None, in the reason of a miss (a record written before
        margins were recorded says so)

    Returns
    -------
    dict with ``outcome`` (one of :data:`OUTCOMES`), ``reason`` (one line, '' for holds and
    opposite), ``margin``, ``mde`` and ``n_needed`` (None where they do not apply).
    """
    out = {"outcome": "inconclusive", "reason": "", "margin": margin, "mde": None,
           "n_needed": None}
    if report_only:
        return {**out, "outcome": "report", "reason": "a report of bounds, not a test"}
    if untestable:
        return {**out, "outcome": "untestable", "reason": untestable}
    if not calibrated:
        return {**out, "reason": "its rule fires on shuffled labels beyond its level α = "
                                 f"{alpha:g}, so it cannot conclude either way"}
    if detected:
        return {**out, "outcome": "holds"}
    if opposite:
        return {**out, "outcome": "opposite"}
    if interval is None:
        return {**out, "reason": "not detected; its statistic has no interval, so no "
                                 "equivalence test (see the power on its matched case)"}
    ends = [interval] + ([corrected_interval] if corrected_interval is not None else [])
    if margin is not None and all(_within_margin(iv, direction, margin) for iv in ends):
        return {**out, "outcome": "absent"}
    mde = min_detectable_effect(interval, alpha)
    need = n_for_power(n, mde, margin)
    out.update(mde=mde, n_needed=need if need is not None and need > n else None)
    if margin is None:
        out["reason"] = f"not detected; {no_margin}"
    elif any(_beyond(iv, direction) for iv in ends) or \
            any(_beyond(iv, "greater" if direction == "less" else "less") for iv in ends):
        out["reason"] = "the interval excludes 0 but the label null does not confirm it"
    else:
        out["reason"] = "the interval covers 0 and reaches beyond the margin"
    return out
