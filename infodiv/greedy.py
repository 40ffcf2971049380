"""Greedy search over the members of a set function: forward selection (naive or lazy) and
backward elimination.

Each step scores every remaining candidate through the set function's incremental interface
(``added_values`` / ``removed_values`` on a state) and keeps the best by utility
(sign·f, sign = −1 for losses). Lazy forward greedy (Minoux 1978) is exact only for
submodular f: a re-evaluated gain above its stale bound is an observed diminishing-returns
violation, and the search is redone naively. The curves of these orders, cross-fitted, are
:func:`infodiv.curves.layer_curves`'s.
"""

from __future__ import annotations

import numpy as np

from .setfunctions import SetFunction

__all__ = ["greedy_forward", "greedy_backward"]


def greedy_forward(f: SetFunction, *, lazy: bool = False, progress: bool = False):
    """Greedy forward selection: at each step add the member with the largest utility gain.

    Parameters
    ----------
    lazy : bool
        Lazy greedy (Minoux 1978): re-evaluate only the candidate whose stale gain bound is
        the largest. Exact only for submodular f. Every re-evaluated gain is compared with its
        stale bound; a fresh gain larger than the bound is an observed diminishing-returns
        violation, and the search is then redone naively (``info["lazy_rejected"]``).

    Returns
    -------
    order : int array ``[M]``; values : ``[M+1]`` in-sample f of each prefix; info : dict
    """
    if lazy:
        result = _lazy_greedy(f)
        if result is not None:
            return result
        order, values, info = greedy_forward(f, lazy=False, progress=progress)
        info.update(lazy_requested=True, lazy_rejected=True)
        return order, values, info
    state = f.start(())
    empty = f.state_value(state)
    order, values = _greedy_steps(f, state, f.added_values, f.add, f"greedy {f.name}", progress)
    return order, np.asarray([empty, *values]), {"lazy_requested": False}


def _greedy_steps(f: SetFunction, state, values_of, apply, desc: str, progress: bool):
    """Shared loop of greedy forward and backward search.

    At each of the M steps, ``values_of(state, remaining)`` scores every remaining candidate,
    the best one (by ``f.sign()``) is picked and ``apply(state, j)`` updates the state. Returns
    the picked members in order and the value after each pick.
    """
    sign = f.sign()
    remaining = list(range(f.n_members))
    picked, values = [], []
    steps = range(f.n_members)
    if progress:
        from tqdm.auto import tqdm
        steps = tqdm(steps, desc=desc, leave=False, disable=None)
    for _ in steps:
        vals = np.asarray(values_of(state, remaining))
        pos = int(np.argmax(sign * vals))
        j = remaining.pop(pos)
        picked.append(j)
        state = apply(state, j)
        values.append(float(vals[pos]))
    return np.asarray(picked), values


def _lazy_greedy(f: SetFunction, tol: float = 1e-12):
    sign = f.sign()
    m = f.n_members
    state = f.start(())
    base = f.state_value(state)
    values = [base]
    bounds = sign * (np.asarray(f.added_values(state, list(range(m)))) - base)
    fresh = np.ones(m, dtype=bool)
    remaining = np.ones(m, dtype=bool)
    order, n_evals = [], m
    for _ in range(m):
        while True:
            cand = np.flatnonzero(remaining)
            j = int(cand[np.argmax(bounds[cand])])
            if fresh[j]:
                break
            val = float(f.added_values(state, [j])[0])
            n_evals += 1
            gain = sign * (val - values[-1])
            if gain > bounds[j] + tol * max(1.0, abs(bounds[j])):
                return None  # an observed DR violation: stale bounds are not upper bounds
            bounds[j], fresh[j] = gain, True
        order.append(j)
        remaining[j] = False
        values.append(values[-1] + sign * bounds[j])
        state = f.add(state, j)
        fresh[:] = False
    values[-1] = f.state_value(state)
    return np.asarray(order), np.asarray(values), {"lazy_requested": True,
                                                   "lazy_rejected": False,
                                                   "lazy_evaluations": n_evals}


def greedy_backward(f: SetFunction, *, progress: bool = False):
    """Greedy backward elimination: repeatedly remove the member whose removal hurts least.

    Returns
    -------
    order : int array ``[M]``; the reverse of the removal sequence, so ``order[:k]`` is the
        size-k set that survives; values : ``[M+1]``, ``values[k]`` = f(order[:k]).
    """
    state = f.start(list(range(f.n_members)))
    full = f.state_value(state)
    removed, values = _greedy_steps(f, state, f.removed_values, f.remove,
                                    f"backward {f.name}", progress)
    # values[i] is f after i + 1 removals, i.e. of the set of size M − i − 1
    return removed[::-1], np.asarray([*values[::-1], full]), {}
