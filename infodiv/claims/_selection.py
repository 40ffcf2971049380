"""What the selection claims share within one replicate: the held-out greedy, depth-prefix
and best-of-random values (selected on one half, scored on the other:
:func:`infodiv.selection.subset_selection`), a fresh split per replicate (``rep.seed``).

Each comparison is one statistic, the held-out difference averaged over the budgets
k = 1..M−1 (:func:`infodiv.selection.budget_differences`), so there is no per-budget
multiplicity; greedy vs best-of-random and greedy vs the depth prefix are separate claims.
"""

from __future__ import annotations

import numpy as np

from ._cases import MARGINS, three_part

__all__ = ["budget_statistics", "quick", "concentrated", "applies", "selection_claim"]


def budget_statistics(rep) -> dict:
    """``{Δ name: value}`` on this replicate: per-example held-out scores averaged over all
    examples where the set function has them, else the halves' held-out values."""
    def compute():
        from ..selection import budget_differences, held_out_scores, subset_selection

        d = rep.design
        if rep.f.per_example:
            sel = held_out_scores(rep.run, objective=d.objective, n_random=d.n_random,
                                  random_state=rep.seed, **d.objective_kwargs)
            g, p, r = (sel[k].mean(axis=1) for k in ("greedy", "prefix", "best_random"))
        else:
            sel = subset_selection(rep.run, objective=d.objective, n_random=d.n_random,
                                   random_state=rep.seed, **d.objective_kwargs)
            g, p, r = (np.asarray(sel[k]) for k in ("greedy", "prefix", "best_random"))
        sign = 1.0 if sel["greater_is_better"] else -1.0
        return {k: float(v) for k, v in budget_differences(g, p, r, sign).items()}
    return rep.cached("selection", compute)


def quick(rep, rng, n_bootstrap) -> dict:
    """Selected once (split, greedy and random orders fixed), the held-out per-example
    differences Δ_i bootstrapped: ``{Δ name: {"value", "ci"}}``."""
    def compute():
        from estimators.resampling import bootstrap_means

        from ..selection import budget_differences, held_out_scores

        d = rep.design
        sc = held_out_scores(rep.run, objective=d.objective, n_random=d.n_random,
                             random_state=int(rng.integers(0, 2**31 - 1)),
                             **d.objective_kwargs)
        sign = 1.0 if sc["greater_is_better"] else -1.0
        diffs = budget_differences(sc["greedy"], sc["prefix"], sc["best_random"], sign)
        names = list(diffs)
        boot = bootstrap_means(np.column_stack([diffs[k] for k in names]), n_bootstrap,
                               random_state=rng)
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        return {k: {"value": float(diffs[k].mean()), "ci": (float(lo[j]), float(hi[j]))}
                for j, k in enumerate(names)}
    return rep.cached("selection_quick", compute)


def concentrated(run, design) -> dict:
    """The matched case's size: min(4, (M − 1) // 2) informative members (at least 1)."""
    return {"n_informative": max(1, min(4, (run.n_members - 1) // 2))}


def applies(run, design):
    return None if run.n_members >= 2 else (f"needs M >= 2 members for a budget average, got "
                                            f"M = {run.n_members}")


CONCENTRATED = ("a matched case where greedy must win (the run's strongest members kept and "
                "placed last in depth order, every other member permuted across examples; "
                "same n)")


def selection_claim(name: str, statistic: str, other: str, rule: str, short: str):
    """The claim "held-out greedy beats ``other``" on the budget-averaged ``statistic`` of
    :func:`infodiv.selection.budget_differences` (``rule``: the difference in words,
    ``short``: its table column)."""
    from ..inference.claim import Claim

    def difference(rep) -> float:
        return budget_statistics(rep)[statistic]

    def shortcut(rep, rng, n_bootstrap) -> dict:
        return quick(rep, rng, n_bootstrap)[statistic]

    return Claim(
        name=name, theorem=f"the paper's greedy layer selection: a chosen subset beats {other}",
        statistic_name=f"{rule}, averaged over budgets k = 1..M-1",
        statistic=difference, direction="greater", surrogate="concentrated_late",
        matched_case=CONCENTRATED,
        sentence=f"members chosen greedily predict held-out examples better than {other} of "
                 "the same size",
        rule=three_part(f"{rule} averaged over budgets k = 1..M-1", "greater"),
        quick=shortcut, surrogate_kwargs=concentrated, applies=applies, group="selection",
        short=short, margin=MARGINS["total_gain"],
        conclusions={"holds": f"greedily chosen members beat {other} on held-out examples",
                     "opposite": f"{other} beat the greedily chosen members on held-out "
                                 "examples",
                     "absent": f"greedily chosen members do about as well as {other}"})
