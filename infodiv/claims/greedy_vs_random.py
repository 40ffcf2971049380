"""Claim: greedy forward selection beats the best of the random orders on held-out examples.

Statistic: the held-out difference sign·(f(greedy_k) − f(other_k)) averaged over the budgets
k = 1..M−1 (:mod:`infodiv.claims._selection`); positive beyond its null is the finding; its
matched case keeps the run's strongest members, placed last in depth order, and makes every
other member label-independent (greedy must win).
"""

from __future__ import annotations

from ._selection import selection_claim

__all__ = ["CLAIM"]

CLAIM = selection_claim("greedy_beats_random", "greedy_minus_best_random_mean",
                        "the best of the random orders", "held-out greedy - best-of-random",
                        "greedy > best random")
