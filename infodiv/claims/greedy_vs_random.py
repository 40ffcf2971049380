"""Claim: greedy forward selection beats the best of the random orders on held-out examples.

Statistic: the held-out difference sign·(f(greedy_k) − f(other_k)) averaged over the budgets
k = 1..M−1 (:mod:`infodiv.claims._selection`); positive beyond its null is the finding; its
matched case keeps the run's strongest members, placed last in depth order, and makes every
other member label-independent (greedy must win).
"""

from __future__ import annotations

from ..inference.claim import Claim
from ._selection import CONCENTRATED, applies, budget_statistics, concentrated
from ._selection import quick as _quick

__all__ = ["CLAIM"]

STATISTIC = "greedy_minus_best_random_mean"


def difference(rep) -> float:
    return budget_statistics(rep)[STATISTIC]


def quick(rep, rng, n_bootstrap) -> dict:
    return _quick(rep, rng, n_bootstrap)[STATISTIC]


CLAIM = Claim(
    name="greedy_beats_random",
    theorem="the paper's greedy layer selection: a chosen subset beats the best of the "
            "random orders",
    statistic_name="held-out greedy - best-of-random, averaged over budgets k = 1..M-1",
    statistic=difference, direction="greater", surrogate="concentrated_late",
    matched_case=CONCENTRATED,
    sentence="members chosen greedily predict held-out examples better than the best of "
             "the random orders of the same size",
    rule="held-out greedy - best-of-random averaged over budgets k = 1..M-1: 95% CI and "
         "null-corrected CI above 0, label-null p(greater) < {alpha}",
    quick=quick, surrogate_kwargs=concentrated, applies=applies)
