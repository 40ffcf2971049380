"""Greedy subset selection experiments, selected on one split and scored on the other.

For every budget k = 1..M three selection rules are compared, each chosen on half A of the
examples and scored on half B (then the roles are swapped and the two held-out curves
averaged): greedy forward selection, the depth prefix (members 0..k−1) and best-of-random (the
best size-k prefix among ``n_random`` random orders, judged on A). Stability of the greedy
order: greedy is rerun on bootstrap resamples of the examples and compared with the full-data
order by Kendall's τ of the member ranks and by the Jaccard index of the first k members.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau

from estimators.resampling import bootstrap_indices, parallel_map

from .curves import (
    _cross_fit_split,
    greedy_forward,
    order_scores,
    order_values,
    orders_values,
    set_values,
)
from .setfunctions import SetFunction, as_set_function

__all__ = ["subset_selection", "held_out_scores", "greedy_stability", "jaccard",
           "budget_differences"]


def jaccard(a, b) -> float:
    a, b = set(np.asarray(a).tolist()), set(np.asarray(b).tolist())
    return len(a & b) / len(a | b) if a | b else 1.0


def _selections(f: SetFunction, n_random: int, random_state):
    """Per direction (selection half, scoring half): the scoring half's examples and set
    function, the greedy order and its in-sample curve chosen on the selection half, the
    random orders and, per budget k, the index of the best of them on the selection half."""
    sign, m = f.sign(), f.n_members
    rng = np.random.default_rng(random_state)
    a, b = _cross_fit_split(f, rng.integers(2**32))
    perms = np.stack([rng.permutation(m) for _ in range(n_random)])
    for sel, ev in ((a, b), (b, a)):
        f_sel = f.restrict(sel)
        order, in_sample, _ = greedy_forward(f_sel)
        sel_curves = orders_values(f_sel, perms)  # [R, M+1]
        yield ev, f.restrict(ev), order, in_sample, perms, np.argmax(sign * sel_curves, axis=0)


def _best_sets(perms, best) -> list:
    """The best-of-random set of every budget k = 0..M: the size-k prefix of order
    ``perms[best[k]]``."""
    return [perms[r, :k] for k, r in enumerate(best)]


def _restrictable(contrib_or_f, objective, n_members, objective_kwargs) -> SetFunction:
    f = as_set_function(contrib_or_f, objective=objective, n_members=n_members,
                        **objective_kwargs)
    if not f.can_restrict():
        raise ValueError(f"{f.name} cannot be restricted to example subsets; "
                         "selection needs a selection and a scoring split")
    return f


def subset_selection(contrib_or_f, *, objective=None, n_members=None, n_random: int = 50,
                     random_state=0, **objective_kwargs) -> dict:
    """Held-out value of greedy, prefix and best-of-random subsets for every budget.

    Returns ``greedy``, ``prefix``, ``best_random`` (``[M+1]`` held-out values averaged over the
    two directions) and the in-sample greedy curve for comparison.
    """
    f = _restrictable(contrib_or_f, objective, n_members, objective_kwargs)
    m = f.n_members
    out = {"greedy": [], "prefix": [], "best_random": [], "greedy_in_sample": []}
    for _, f_ev, order, in_sample, perms, best in _selections(f, n_random, random_state):
        out["greedy"].append(order_values(f_ev, order))
        out["greedy_in_sample"].append(in_sample)
        out["prefix"].append(order_values(f_ev, np.arange(m)))
        out["best_random"].append(set_values(f_ev, _best_sets(perms, best)))
    result = {k: np.mean(v, axis=0) for k, v in out.items()}
    result.update(objective=f.name, greater_is_better=f.greater_is_better, n_random=n_random)
    return result


def held_out_scores(contrib_or_f, *, objective=None, n_members=None, n_random: int = 50,
                    random_state=0, **objective_kwargs) -> dict:
    """Per-example held-out scores ``[M+1, N]`` of the greedy, prefix and best-of-random sets
    of :func:`subset_selection` (same seed: same split, orders and selections); example i is
    scored by the direction in which it was held out (row means over a half = that half's
    held-out values). Needs a per-example set function."""
    f = _restrictable(contrib_or_f, objective, n_members, objective_kwargs)
    if not f.per_example:
        raise ValueError(f"{f.name} has no per-example scores")
    m = f.n_members
    out = {k: np.empty((m + 1, f.n_examples)) for k in ("greedy", "prefix", "best_random")}
    for ev, f_ev, order, _, perms, best in _selections(f, n_random, random_state):
        out["greedy"][:, ev] = order_scores(f_ev, order)
        out["prefix"][:, ev] = order_scores(f_ev, np.arange(m))
        out["best_random"][:, ev] = f_ev.set_scores(_best_sets(perms, best))
    out.update(objective=f.name, greater_is_better=f.greater_is_better, n_random=n_random)
    return out


def _stability_task(task, rng):
    f, = task
    return greedy_forward(f.restrict(bootstrap_indices(f.n_examples, rng)))[0]


def greedy_stability(contrib_or_f, *, objective=None, n_members=None, n_bootstrap: int = 20,
                     k_values=None, random_state=0, n_jobs=1, **objective_kwargs) -> dict:
    """Kendall τ and top-k Jaccard of bootstrap greedy orders against the full-data order."""
    f: SetFunction = as_set_function(contrib_or_f, objective=objective, n_members=n_members,
                                     **objective_kwargs)
    if not f.can_restrict():
        raise ValueError(f"{f.name} cannot be restricted to example subsets")
    m = f.n_members
    k_values = sorted({1, 2, max(1, m // 4), max(1, m // 2)}) if k_values is None else k_values
    ref = greedy_forward(f)[0]
    orders = parallel_map(_stability_task, [(f,)] * n_bootstrap, random_state=random_state,
                          n_jobs=n_jobs, progress="greedy stability")
    ref_rank = np.argsort(ref)
    taus = np.array([kendalltau(ref_rank, np.argsort(o)).statistic for o in orders])
    jac = {int(k): [jaccard(ref[:k], o[:k]) for o in orders] for k in k_values}
    return {"reference_order": ref, "orders": np.stack(orders), "kendall_tau": taus,
            "kendall_tau_mean": float(np.nanmean(taus)),
            "jaccard": {k: float(np.mean(v)) for k, v in jac.items()},
            "n_bootstrap": n_bootstrap}


def budget_differences(greedy, prefix, best_random, sign: float) -> dict:
    """Δ (or Δ_i) of both comparisons from held-out values ``[M+1]`` or per-example scores
    ``[M+1, n]``: the budget average over k = 1..M−1 of sign·(greedy − other)."""
    g, p, r = (np.asarray(a, dtype=np.float64) for a in (greedy, prefix, best_random))
    if g.shape[0] < 3:
        raise ValueError(f"need M >= 2 members for a budget average, got M = {g.shape[0] - 1}")
    inner = slice(1, g.shape[0] - 1)
    return {"greedy_minus_best_random_mean": sign * (g[inner] - r[inner]).mean(axis=0),
            "greedy_minus_prefix_mean": sign * (g[inner] - p[inner]).mean(axis=0)}
