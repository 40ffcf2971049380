"""Verdicts on diminishing returns that survive their label-permutation null, and their power.

One set of decision rules (:func:`decide`) serves the real run and every surrogate of the
power analysis, so the detection rate printed beside a verdict is the rate of that verdict's
own rule. A verdict is "detected" only when the statistic's example-resampled 95% interval
excludes 0 **and** the null-corrected interval (the interval shifted by the label-permutation
null mean) excludes 0 **and** the permutation p is below ``alpha``:

- ``diminishing_returns``: the g(k) slope is negative — CI upper < 0, CI upper − m₀ < 0 and
  p_less = (1 + #{null ≤ obs}) / (1 + K) < α;
- ``dr_mean_difference_positive``: the mean nested-chain difference ρ_x(A) − ρ_x(B) is
  positive — the mirror rule with p_greater;
- ``violations``: some chain violates diminishing returns beyond its null — per triple the
  null-corrected difference d_t − m₀_t with the example-bootstrap standard error, one-sided
  p_t = Φ((d_t − m₀_t) / se_t), Benjamini–Hochberg over the triples at α, and d_t < 0.

A surrogate of the power analysis is judged against the real run's own null (same examples,
same n, same members' marginals): rerunning K permutations per surrogate would cost K
pipelines each. :func:`verdict_docs` writes each verdict with its power so that a negative
one reads "not detected; a matched submodular case is detected with probability p".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ._api import benjamini_hochberg
from ._text import interval

__all__ = ["TESTS", "MATCHED", "NullReference", "decide", "verdict_docs", "verdict_text",
           "stats_from_bootstrap", "is_calibrated"]

#: verdict -> (surrogate kind that has the effect, how a reader should name that case)
MATCHED = {
    "diminishing_returns": ("conditionally_independent",
                            "a matched submodular case (members permuted independently within "
                            "each class, same n)"),
    "dr_mean_difference_positive": ("conditionally_independent",
                                    "a matched submodular case (members permuted independently "
                                    "within each class, same n)"),
    "violations": ("planted_synergy", "a matched case with planted XOR synergy (same n)"),
}
TESTS = tuple(MATCHED)


def _rules(alpha) -> dict:
    return {
        "diminishing_returns": f"g(k) slope: 95% CI and null-corrected CI below 0, label-null "
                               f"p(less) < {alpha}",
        "dr_mean_difference_positive": f"mean rho_x(A) - rho_x(B): 95% CI and null-corrected "
                                       f"CI above 0, label-null p(greater) < {alpha}",
        "violations": f"some triple's null-corrected difference BH-significant < 0 at {alpha}",
    }


@dataclass
class NullReference:
    """The label-permutation null distributions a verdict is judged against."""

    slope: np.ndarray | None            # [K] null g(k) slopes
    dr_mean: np.ndarray | None          # [K] null mean DR differences
    triples_mean: np.ndarray | None     # [T] null mean of each triple's difference

    @classmethod
    def from_null(cls, null) -> NullReference:
        """From a :class:`~infodiv.inference.nulls.NullResult` of a ``CurvePipeline``."""
        if null is None:
            return cls(None, None, None)

        def dist(name):
            return None if name not in null else np.asarray(null[name].distribution)

        tri = dist("dr_differences")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            tri_mean = None if tri is None else np.nanmean(tri, axis=0)
        return cls(dist("gain_slope"), dist("dr_mean_difference"), tri_mean)


def _p(value, null, side) -> float:
    null = np.asarray(null, dtype=np.float64)
    null = null[np.isfinite(null)]
    hits = (null <= value) if side == "less" else (null >= value)
    return float((1 + hits.sum()) / (1 + null.size))


def _one(stat, null, side, alpha) -> bool:
    if stat is None or null is None or not np.isfinite(stat["value"]):
        return False
    lo, hi = stat["ci"]
    m0 = float(np.nanmean(null))
    if side == "less":
        return bool(hi < 0 and hi - m0 < 0 and _p(stat["value"], null, "less") < alpha)
    return bool(lo > 0 and lo - m0 > 0 and _p(stat["value"], null, "greater") < alpha)


def corrected_violations(d, se, null_mean, alpha) -> np.ndarray:
    """Triples whose null-corrected difference is BH-significantly negative (module doc)."""
    d, se = np.asarray(d, dtype=np.float64), np.asarray(se, dtype=np.float64)
    excess = d - np.asarray(null_mean, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, norm.cdf(excess / np.where(se > 0, se, 1.0)), 1.0)
    p = np.where(np.isfinite(p), p, 1.0)
    return benjamini_hochberg(p, alpha) & (excess < 0) & (d < 0)


def decide(stats: dict, ref: NullReference, alpha: float = 0.05) -> dict:
    """``{test: bool}`` from ``stats`` = {"gain_slope": {value, ci}, "dr_mean_difference":
    {value, ci}, "dr_differences": {value [T], se [T]}} (missing ones: False)."""
    out = {"diminishing_returns": _one(stats.get("gain_slope"), ref.slope, "less", alpha),
           "dr_mean_difference_positive": _one(stats.get("dr_mean_difference"), ref.dr_mean,
                                               "greater", alpha),
           "violations": False}
    tri = stats.get("dr_differences")
    if tri is not None and ref.triples_mean is not None:
        out["violations"] = bool(corrected_violations(tri["value"], tri["se"], ref.triples_mean,
                                                      alpha).any())
    return out


def stats_from_bootstrap(boot) -> dict:
    """:func:`decide`'s input from a :class:`~infodiv.inference.bootstrap.BootstrapResult`."""
    out = {}
    for name in ("gain_slope", "dr_mean_difference"):
        if name in boot:
            out[name] = {"value": float(boot[name].value), "ci": boot[name].ci}
    if "dr_differences" in boot:
        out["dr_differences"] = {"value": np.asarray(boot["dr_differences"].value),
                                 "se": np.asarray(boot["dr_differences"].se)}
    return out


def is_calibrated(false_positive: dict | None, alpha: float = 0.05) -> bool:
    """False when the rule fires under shuffled labels more often than ``alpha`` allows.

    The rule is judged anti-conservative on this run when the Wilson 95% interval of its
    shuffled-label detection rate lies entirely above ``alpha`` (lower bound > ``alpha``): a
    verdict that its own null reproduces that often is not a finding. Without shuffled-label
    surrogates (power replicates 0) nothing is known and the rule counts as calibrated.
    """
    if not false_positive or false_positive.get("ci") is None:
        return True
    return not float(false_positive["ci"][0]) > alpha


def verdict_text(detected: bool, power: dict | None, false_positive: dict | None,
                 matched: str, alpha: float = 0.05) -> str:
    """"detected" / "not detected; <matched case> is detected with probability p ..."."""
    word = "detected" if detected else "not detected"
    if not power:
        return f"{word}; power not computed (power replicates 0)"
    text = (f"{word}; {matched} is detected with probability {power['rate']:.2f} "
            f"(Wilson 95% {interval(power['ci'], '.2f')}, {power['n']} surrogates)")
    if false_positive:
        text += f"; with shuffled labels it fires with probability {false_positive['rate']:.2f}"
        if not is_calibrated(false_positive, alpha):
            text += (f" (Wilson 95% {interval(false_positive['ci'], '.2f')} > {alpha}): "
                     f"the rule is not calibrated on this run, so this verdict is not a finding")
    return text


def verdict_docs(detected: dict, power: dict | None, alpha: float = 0.05) -> dict:
    """Each verdict with its rule, detection rate on the matched surrogate (``power``), rate
    under shuffled labels (``false_positive``), whether the rule is calibrated on this run
    (:func:`is_calibrated`), ``finding`` = detected and calibrated, and the sentence a report
    prints."""
    rules, out = _rules(alpha), {}
    for test in TESTS:
        kind, matched = MATCHED[test]
        pw = (power or {}).get(kind, {}).get(test)
        fp = (power or {}).get("shuffled_labels", {}).get(test)
        hit, calibrated = bool(detected.get(test, False)), is_calibrated(fp, alpha)
        out[test] = {"detected": hit, "calibrated": calibrated, "finding": hit and calibrated,
                     "rule": rules[test], "power": pw, "false_positive": fp,
                     "matched_case": matched,
                     "text": verdict_text(hit, pw, fp, matched, alpha)}
    return out
