"""What the curve claims share within one replicate: the random orders and the nested chains'
set values, computed once per :class:`~infodiv.inference.claim.Replicate`."""

from __future__ import annotations

import numpy as np

from ..curves import orders_values, set_values

__all__ = ["orders", "order_samples", "chain_values", "chain_differences",
           "singleton_gains", "example_differences", "needs_chains"]


def orders(rep) -> np.ndarray:
    """``design.n_orders`` random member orders ``[P, M]`` drawn from the replicate's stream
    (the inner level of the two-level bootstrap)."""
    m = rep.run.n_members
    return rep.cached("orders", lambda: np.stack([rep.rng.permutation(m)
                                                  for _ in range(rep.design.n_orders)]))


def order_samples(rep) -> np.ndarray:
    """f along each of :func:`orders` ``[P, M+1]``."""
    return rep.cached("order_samples", lambda: orders_values(rep.f, orders(rep)))


def _quadruples(chains) -> list:
    sets = []
    for a_set, b_set, x in chains:
        sets += [a_set, np.append(a_set, x), b_set, np.append(b_set, x)]
    return sets


def chain_values(rep) -> np.ndarray:
    """sign·f of (A, A+x, B, B+x) per chain ``[T, 4]`` (utility units)."""
    def compute():
        vals = set_values(rep.f, _quadruples(rep.chains))
        return rep.f.sign() * vals.reshape(len(rep.chains), 4)
    return rep.cached("chain_values", compute)


def chain_differences(rep) -> np.ndarray:
    """d_t = ρ_x(A) − ρ_x(B) per chain ``[T]``."""
    s = chain_values(rep)
    return (s[:, 1] - s[:, 0]) - (s[:, 3] - s[:, 2])


def singleton_gains(rep) -> np.ndarray:
    """ρ_j(∅) of every member ``[M]`` (utility units)."""
    def compute():
        m = rep.run.n_members
        vals = set_values(rep.f, [np.zeros(0, dtype=np.int64)]
                          + [np.array([j]) for j in range(m)])
        return rep.f.sign() * (vals[1:] - vals[0])
    return rep.cached("singleton_gains", compute)


def example_differences(rep) -> np.ndarray:
    """Per-example chain differences ``[n, T]`` on this fit (the power shortcut's terms:
    :func:`infodiv.submodularity.dr_example_differences`)."""
    from ..submodularity import dr_example_differences

    return rep.cached("example_differences",
                      lambda: dr_example_differences(rep.f, rep.chains)[0])


def needs_chains(run, design) -> str | None:
    """Why the chain claims cannot be tested on ``run`` (None: they can): M >= 2 members and
    at least one DR chain."""
    if run.n_members < 2:
        return f"needs M >= 2 members, got {run.n_members}"
    return None if design.n_triples else "no DR chains (n_triples = 0)"
