"""Flags: conditions under which a printed number must not be read at face value.

A flag is data — a :class:`Flag` record with a machine-readable ``code``, the ``where`` it
applies (a report row), the offending ``value`` and the ``threshold`` it crossed, and a one-line
``message`` — so that a report prints it in the row itself and again in its final summary
(:func:`summary_lines`), and the JSON keeps it (:meth:`Flag.to_dict`).

Checks (DESIGN.md 2.8):

- ``information_exceeds_entropy``: an estimate I(U_S; Y) > H(Y), impossible for a discrete Y
  (the estimator is biased or overfitted at this dimension and n);
- ``bound_outside_unit_interval``: an Eq. 12 bound on P(error) outside [0, 1]: an upper bound
  below 0 (I > H(Y)) or above 1, or a lower bound above 1, says that the plugged-in I is off.
  A lower bound below 0 alone is only vacuous (it happens whenever H(Y) − I < 1) and is not
  flagged;
- ``in_sample_fallback``: a figure meant to be held-out that was computed in-sample;
- ``dimension_too_large``: an estimator run whose dimension D is at least half the smallest
  class count (``D ≥ n_min / 2``; Gaussian log-determinant bias and variance blow up as D → n);
- ``replicates_failed``: bootstrap or permutation replicates that raised and were left out;
- ``no_test``: a claim not detected while its matched surrogate is detected with power whose
  Wilson upper bound is below 1/2 (a "not detected" that could not have been a detection);
- ``not_calibrated``: a claim's rule fires on shuffled-label surrogates beyond its level;
- ``interval_widened``: a bootstrap interval extended to contain its estimate (the gap).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Flag", "check_information", "check_bounds", "check_in_sample", "check_dimension",
           "check_failures", "flags_from_curve_notes", "summary_lines", "FLAG_CODES"]

FLAG_CODES = ("information_exceeds_entropy", "bound_outside_unit_interval", "in_sample_fallback",
              "dimension_too_large", "replicates_failed", "no_test", "not_calibrated",
              "interval_widened")


@dataclass(frozen=True)
class Flag:
    """One flag (module docstring)."""

    code: str
    where: str
    message: str
    value: float | None = None
    threshold: float | None = None

    def __post_init__(self):
        if self.code not in FLAG_CODES:
            raise ValueError(f"unknown flag code {self.code!r}; choose from {FLAG_CODES}")

    def to_dict(self) -> dict:
        return asdict(self)

    def short(self) -> str:
        """The text printed inside a report row."""
        return f"[FLAG {self.code}]"


def check_information(mi, h_y, where: str) -> list[Flag]:
    """``information_exceeds_entropy`` for each estimate above H(Y) (bits)."""
    mi = np.atleast_1d(np.asarray(mi, dtype=np.float64))
    over = np.flatnonzero(mi > h_y)
    if not over.size:
        return []
    worst = float(mi[over].max())
    return [Flag("information_exceeds_entropy", where,
                 f"{where}: I = {worst:.3g} bits exceeds H(Y) = {h_y:.3g} bits at {over.size} "
                 f"of {mi.size} points; the estimate is biased at this dimension and n",
                 worst, float(h_y))]


def check_bounds(lower, upper, where: str) -> list[Flag]:
    """``bound_outside_unit_interval`` for Eq. 12 bounds outside [0, 1]."""
    lower = np.atleast_1d(np.asarray(lower, dtype=np.float64))
    upper = np.atleast_1d(np.asarray(upper, dtype=np.float64))
    both = np.concatenate([lower, upper])
    bad = np.concatenate([lower > 1, (upper < 0) | (upper > 1)])
    if not bad.any():
        return []
    worst = float(both[bad][np.argmax(np.abs(both[bad] - 0.5))])
    return [Flag("bound_outside_unit_interval", where,
                 f"{where}: {int(bad.sum())} of {both.size} Eq. 12 bounds lie outside [0, 1] "
                 f"(extreme {worst:.3g}); the plugged-in I is off", worst, None)]


def check_in_sample(held_out: bool, where: str, reason: str = "") -> list[Flag]:
    """``in_sample_fallback`` when a figure meant to be held-out was computed in-sample."""
    if held_out:
        return []
    why = f" ({reason})" if reason else ""
    return [Flag("in_sample_fallback", where,
                 f"{where}: held-out evaluation fell back to in-sample{why}; it is optimistic")]


def check_dimension(dim: int, labels, where: str) -> list[Flag]:
    """``dimension_too_large`` when ``dim ≥ (smallest class count) / 2``."""
    counts = np.bincount(np.asarray(labels))
    n_min = int(counts[counts > 0].min())
    if dim < n_min / 2:
        return []
    return [Flag("dimension_too_large", where,
                 f"{where}: dimension D = {dim} is at least half the smallest class count "
                 f"({n_min}); estimates at this D are dominated by estimator bias",
                 float(dim), n_min / 2)]


def check_failures(n_failed: int, n_total: int, where: str) -> list[Flag]:
    """``replicates_failed`` when some resampling replicates raised."""
    if not n_failed:
        return []
    return [Flag("replicates_failed", where,
                 f"{where}: {n_failed} of {n_total} replicates failed and were left out",
                 float(n_failed), None)]


def flags_from_curve_notes(notes, where: str) -> list[Flag]:
    """``in_sample_fallback`` for every curve note that reports an in-sample curve."""
    return [Flag("in_sample_fallback", where, f"{where}: {note}")
            for note in notes if "in-sample" in note]


def summary_lines(flags) -> list[str]:
    """The final-summary lines: a count per code, then every message."""
    flags = list(flags)
    if not flags:
        return ["Flags: none."]
    codes = {}
    for fl in flags:
        codes[fl.code] = codes.get(fl.code, 0) + 1
    head = ", ".join(f"{c} ×{k}" for c, k in codes.items())
    return [f"Flags ({len(flags)}): {head}"] + [f"- {fl.message}" for fl in flags]
