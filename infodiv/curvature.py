"""How far a set function is from submodular along its greedy path: the submodularity ratio
and the curvature (paper Theorems 5–8; the curves report, :mod:`infodiv.reports.curves`,
prints both as point values).

All gains are utility gains ρ_x(S) = sign·(f(S ∪ {x}) − f(S)) (sign = −1 for losses).

- Submodularity ratio, ratio-of-sums form (Das & Kempe 2011):
  γ(L, A) = Σ_{x∈A} ρ_x(L) / ρ_A(L), evaluated along the greedy path (L = greedy prefix,
  A = the next greedy elements and random sets outside L); γ ≥ 1 for submodular f.
- Curvature: greedy-path curvature c_t = 1 − ρ_{g_t}(S_{t−1}) / ρ_{g_t}(∅) and total curvature
  c = 1 − min_j ρ_j(V∖{j}) / ρ_j(∅) (Conforti & Cornuéjols 1984).
"""

from __future__ import annotations

import numpy as np

from .setfunctions import SetFunction

__all__ = ["submodularity_ratio", "curvature"]


def submodularity_ratio(f: SetFunction, order, *, sizes=None, block: int = 5,
                        n_random: int = 5, random_state=0) -> dict:
    """Das & Kempe (2011) ratio-of-sums γ(L, A) = Σ_{x∈A} ρ_x(L) / ρ_A(L) along a greedy path.

    For each L = order[:t] (t in ``sizes``), A is the next ``block`` greedy elements and
    ``n_random`` random ``block``-sets outside L. Pairs with ρ_A(L) ≤ 0 are undefined (counted).
    """
    sign = f.sign()
    m = f.n_members
    order = np.asarray(order)
    sizes = range(0, m - 1, max(1, (m - 1) // 10)) if sizes is None else sizes
    rng = np.random.default_rng(random_state)
    rows = []
    for t in sizes:
        t = int(t)
        rest = order[t:]
        if len(rest) < 2:
            continue
        k = min(block, len(rest))
        state = f.start(order[:t])
        base = f.state_value(state)
        sets = [("greedy", rest[:k])] + [("random", rng.choice(rest, k, replace=False))
                                         for _ in range(n_random)]
        for kind, a_set in sets:
            singles = sign * (np.asarray(f.added_values(state, a_set)) - base)
            joint = sign * (f.value(np.concatenate([order[:t], a_set])) - base)
            ratio = float(singles.sum() / joint) if joint > 0 else float("nan")
            rows.append({"size": t, "kind": kind, "ratio": ratio,
                         "sum_singles": float(singles.sum()), "joint_gain": float(joint)})
    ratios = np.array([r["ratio"] for r in rows], dtype=np.float64)
    ok = np.isfinite(ratios)
    return {"rows": rows, "min": float(ratios[ok].min()) if ok.any() else float("nan"),
            "median": float(np.median(ratios[ok])) if ok.any() else float("nan"),
            "fraction_below_1": float((ratios[ok] < 1).mean()) if ok.any() else float("nan"),
            "n_undefined": int((~ok).sum())}


def curvature(f: SetFunction, greedy_order, greedy_values) -> dict:
    """Greedy-path curvature c_t and total curvature (module docstring).

    Both lie in [0, 1] for monotone submodular f; for non-monotone objectives (raw readouts,
    estimates with noise) values outside [0, 1] say that the premise fails, not how strongly.
    """
    sign = f.sign()
    m = f.n_members
    empty = f.start(())
    base = f.state_value(empty)
    singles = sign * (np.asarray(f.added_values(empty, list(range(m)))) - base)
    full = f.start(list(range(m)))
    top = f.state_value(full)
    last = sign * (top - np.asarray(f.removed_values(full, list(range(m)))))
    steps = sign * np.diff(np.asarray(greedy_values))
    single_of_step = singles[np.asarray(greedy_order)]
    pos = single_of_step > 0
    path = np.full(m, np.nan)
    path[pos] = 1.0 - steps[pos] / single_of_step[pos]
    ok = singles > 0
    total = float(1.0 - np.min(last[ok] / singles[ok])) if ok.any() else float("nan")
    return {"greedy_path": path, "total": total, "singleton_gains": singles,
            "last_gains": last}
