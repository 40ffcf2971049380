"""The verdict record: what the engine says about one claim on one run, and what every report
reads (DESIGN.md 2.8, "one verdict record feeds every report").

A :class:`VerdictRecord` holds the claim and the theorem it tests, the statistic, its
estimate with its example-bootstrap interval (everything refitted) and Monte-Carlo error
(orders only), the label-permutation null (mean, 2.5–97.5% range, p), the null-corrected
value with its interval, the verdict (detected, calibrated, finding), the power on the
matched surrogate and the false-positive rate on shuffled labels with their Wilson intervals,
the flags, the sizes (B, K, n, M, Monte-Carlo reruns, surrogates) and the sentence a report
prints. Intervals are stored as ``[low, high]`` and every one contains its estimate
(:meth:`VerdictRecord.check`): the engine builds them so (``interval_method``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

__all__ = ["VerdictRecord", "contains"]


def contains(interval, value) -> bool:
    """Whether ``[low, high]`` contains ``value`` (True for a missing interval or value)."""
    if interval is None or value is None:
        return True
    lo, hi = interval
    if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi, value)):
        return True
    return lo <= value <= hi


@dataclass
class VerdictRecord:
    """One claim's verdict on one run (module docstring)."""

    claim: str
    theorem: str
    statistic: str
    objective: str
    direction: str
    estimate: float
    interval: list | None
    #: units of the estimate, its interval, null and corrected value
    units: str
    interval_method: str
    mc_error: float | None
    null_mean: float | None
    null_interval: list | None
    corrected: float | None
    corrected_interval: list | None
    p: float | None
    detected: bool
    calibrated: bool
    finding: bool
    rule: str
    matched_case: str
    #: detection rate on the matched surrogate: {"rate", "n_detected", "n", "ci" (Wilson)}
    power: dict | None = None
    #: the same on shuffled-label surrogates (the rule's false-positive rate)
    false_positive: dict | None = None
    flags: list = field(default_factory=list)
    n_bootstrap: int = 0
    n_permutations: int = 0
    n_examples: int = 0
    n_members: int = 0
    n_mc: int = 0
    #: resamples of each power surrogate's bootstrap; random member orders per replicate
    n_power_bootstrap: int = 0
    n_orders: int = 0
    alpha: float = 0.05
    sentence: str = ""
    extra: dict = field(default_factory=dict)
    #: the conclusion (:mod:`infodiv.inference.outcome`): holds, opposite, absent,
    #: inconclusive, untestable or report, with its one-line reason
    outcome: str = ""
    outcome_reason: str = ""
    #: the rule fired on the other side of 0, with its label-null p on that side
    opposite: bool = False
    p_opposite: float | None = None
    #: δ: {"value", "fraction", "scale", "rule", "why", "total_gain"} (None: no equivalence test)
    margin: dict | None = None
    #: minimal detectable effect at this n (power 0.8) and the n that detects δ with power 0.8
    mde: float | None = None
    n_needed: int | None = None

    @property
    def no_test(self) -> bool:
        """Not detected with power near 0 (its Wilson upper bound below 1/2): no test."""
        return not self.detected and self.power is not None and self.power["ci"][1] < 0.5

    def check(self) -> None:
        """Raise ValueError when an interval does not contain its estimate."""
        for name, iv, value in (("interval", self.interval, self.estimate),
                                ("corrected_interval", self.corrected_interval, self.corrected),
                                *((f"{k} interval", (d or {}).get("ci"), (d or {}).get("rate"))
                                  for k, d in (("power", self.power),
                                               ("false positive", self.false_positive)))):
            if not contains(iv, value):
                raise ValueError(f"{self.claim}: {name} {iv} does not contain {value}")

    def text(self) -> str:
        """The sentence a report prints: the conclusion with its reason, power beside it,
        calibration."""
        if self.extra.get("report_only"):
            return "a report, not a test (no verdict, no power)"
        out = self.outcome or ("detected" if self.detected else "not detected")
        if self.outcome == "absent":
            out += f" (smaller than δ = {self.margin['value']:.3g} {self.units})"
        elif self.outcome == "inconclusive":
            out += f" ({self.outcome_reason}" if self.outcome_reason else " ("
            if self.mde is not None:
                out += f"; detectable at this n: {self.mde:.3g} {self.units}"
            if self.n_needed is not None:
                out += (f"; n ≈ {self.n_needed} would detect δ = {self.margin['value']:.3g} "
                        "with power 0.8")
            out += ")"
        elif self.outcome_reason:
            out += f" ({self.outcome_reason})"
        if self.power is None:
            out += "; power not computed (power replicates 0)"
        else:
            pw = self.power
            out += (f"; {self.matched_case} is detected with probability "
                    f"{pw['rate']:.2f} (Wilson 95% [{pw['ci'][0]:.2f}, {pw['ci'][1]:.2f}], "
                    f"{pw['n']} surrogates)")
        fp = self.false_positive
        if fp is not None:
            out += f"; with shuffled labels it fires with probability {fp['rate']:.2f}"
            if not self.calibrated:
                out += (f" (Wilson 95% [{fp['ci'][0]:.2f}, {fp['ci'][1]:.2f}] > {self.alpha}): "
                        "the rule is not calibrated on this run")
        return out

    def to_dict(self) -> dict:
        out = asdict(self)
        out["text"] = self.text()
        return out

    @classmethod
    def from_dict(cls, doc: dict) -> VerdictRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in names})
