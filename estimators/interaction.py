"""Interaction information and the relevancy / redundancy / diversity decomposition.

McGill (1954) interaction information of a set ``T`` of variables,
``I(T) = -sum_{W subset T} (-1)^{|T| - |W|} H(W)``, equals dit's ``interaction_information``:
two fair bits and their parity (XOR) give +1 bit, three copies of one fair bit give -1 bit. With
this sign, ``TC(S) = sum_{T subset S, |T| >= 2} I(T)``, and Moebius inversion gives

    I(T) = sum_{W subset T, |W| >= 2} (-1)^{|T| - |W|} TC(W),

which is how it is computed here, reusing the total-correlation estimator of any method (and,
with ``given``, the conditional TC, which gives the conditional interaction information).

:func:`information_decomposition` returns the terms of DESIGN section 2.5 (Theorem 4 of the
paper): ``I(U;Y) = relevancy + diversity`` with relevancy ``sum_i I(U_i;Y)``, redundancy
``TC(U)``, conditional redundancy ``TC(U|Y)`` and diversity ``TC(U|Y) - TC(U)``. Each term is
estimated on its own; the residual ``joint - relevancy - diversity`` is 0 to rounding for plug-in
estimates of discrete data and is a consistency check otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
from tqdm.auto import tqdm

from estimators.api import _mi, _setup_variables, _tc, _tc_and_conditional
from estimators.validation import check_labels, to_base, unit_name

__all__ = ["interaction_information", "information_decomposition", "InformationDecomposition"]


def _moebius(tc_of, m: int) -> float:
    """``sum_{W subset {0..m-1}, |W| >= 2} (-1)^{m - |W|} TC(W)``."""
    return sum((-1) ** (m - size) * tc_of(subset)
               for size in range(2, m + 1) for subset in combinations(range(m), size))


def interaction_information(variables, *, given=None, method="knn", k=3, base=2,
                            random_state=0, **options) -> float:
    """McGill interaction information ``I(U_1; ...; U_m)`` (conditional on ``given`` if set).

    Computed as ``sum_{W, |W| >= 2} (-1)^{m - |W|} TC(W [| given])`` over the subsets of the
    ``m >= 2`` variables (``2^m - m - 1`` total-correlation estimates). For two variables it is
    the mutual information. Parameters as in :func:`estimators.api.total_correlation`.
    """
    est, blocks, given = _setup_variables(variables, given, method, k, random_state, options)
    if len(blocks) < 2:
        raise ValueError(f"interaction information needs at least 2 variables, got {len(blocks)}")
    value = _moebius(lambda s: _tc(est, [blocks[i] for i in s], given), len(blocks))
    return to_base(value, base)


@dataclass(frozen=True)
class InformationDecomposition:
    """Relevancy / redundancy / diversity decomposition of ``I(U;Y)`` (units of ``base``).

    ``diversity = conditional_redundancy - redundancy`` and
    ``residual = joint - relevancy - diversity``. ``redundancy_orders[k]`` is the sum of the
    interaction information over all subsets of size ``k`` (so the orders sum to the redundancy
    when ``max_order`` is the number of variables), likewise ``conditional_redundancy_orders``.
    """

    joint: float
    relevancy: float
    redundancy: float
    conditional_redundancy: float
    diversity: float
    residual: float
    relevancies: tuple
    redundancy_orders: dict | None
    conditional_redundancy_orders: dict | None
    method: str
    base: float | str
    n_samples: int
    n_variables: int

    def to_dict(self) -> dict:
        """Plain-Python copy (JSON-serialisable)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    def table(self) -> str:
        """The terms as an aligned text table."""
        unit = unit_name(self.base)
        rows = [("I(U;Y)  joint", self.joint), ("relevancy  sum I(U_i;Y)", self.relevancy),
                ("redundancy  TC(U)", self.redundancy),
                ("conditional redundancy  TC(U|Y)", self.conditional_redundancy),
                ("diversity  TC(U|Y) - TC(U)", self.diversity),
                ("residual  joint - relevancy - diversity", self.residual)]
        for name, orders in (("redundancy", self.redundancy_orders),
                             ("conditional redundancy", self.conditional_redundancy_orders)):
            for order, value in (orders or {}).items():
                rows.append((f"  {name}, order {order}", value))
        width = max(len(r[0]) for r in rows)
        head = (f"InformationDecomposition(method={self.method!r}, n_samples={self.n_samples}, "
                f"n_variables={self.n_variables}, unit={unit})")
        return "\n".join([head] + [f"  {name:<{width}}  {value: .6f}" for name, value in rows])

    def __repr__(self) -> str:
        return self.table()


def _order_parts(tc_of, m: int, max_order: int, desc: str) -> dict:
    """Order-k parts ``sum_{|T|=k} I(T) = sum_{j=2}^{k} (-1)^{k-j} C(m-j, k-j) S_j`` where
    ``S_j = sum_{|W|=j} TC(W)``."""
    total = sum(comb(m, j) for j in range(2, max_order + 1))
    sums = {}
    with tqdm(total=total, desc=desc, disable=total < 200, leave=False) as bar:
        for j in range(2, max_order + 1):
            s = 0.0
            for subset in combinations(range(m), j):
                s += tc_of(subset)
                bar.update()
            sums[j] = s
    return {order: sum((-1) ** (order - j) * comb(m - j, order - j) * sums[j]
                       for j in range(2, order + 1))
            for order in range(2, max_order + 1)}


def information_decomposition(variables, labels, *, method="knn", k=3, base=2,
                              random_state=0, max_order=None, **options
                              ) -> InformationDecomposition:
    """Estimate ``I(U;Y)``, relevancy, redundancy, conditional redundancy, diversity, residual.

    Parameters
    ----------
    variables : list of (n, d_i) arrays, or an (n, M, d) array
        The members ``U_1..U_M`` (one variable each).
    labels : 1-D integer array
        The target ``Y``.
    max_order : int or None
        If set (``2 <= max_order <= M``), also the order-k parts of redundancy and conditional
        redundancy for ``k = 2..max_order`` (needs TC of every subset of size <= max_order).
    method, k, base, random_state, **options
        As in :func:`estimators.api.total_correlation`.
    """
    labels = check_labels(labels)
    est, blocks, y = _setup_variables(variables, labels, method, k, random_state, options)
    m = len(blocks)
    if max_order is not None and not (2 <= int(max_order) <= m):
        raise ValueError(f"max_order must be between 2 and the number of variables {m}, "
                         f"got {max_order}")
    joint = _mi(est, np.concatenate(blocks, axis=1), y)
    if m == 1:   # U = U_1: R = I(U_1;Y) is I(U;Y) itself and TC(U) = TC(U|Y) = 0, so D = 0
        relevancies, redundancy, conditional = (joint,), 0.0, 0.0
    else:
        relevancies = tuple(_mi(est, b, y) for b in blocks)
        redundancy, conditional = _tc_and_conditional(est, blocks, y)
    orders = c_orders = None
    if max_order is not None:
        orders = _order_parts(lambda s: _tc(est, [blocks[i] for i in s]), m, int(max_order),
                              "redundancy orders")
        c_orders = _order_parts(lambda s: _tc(est, [blocks[i] for i in s], y), m,
                                int(max_order), "conditional redundancy orders")
    conv = lambda v: float(to_base(v, base))  # noqa: E731
    relevancy = sum(relevancies)
    diversity = conditional - redundancy
    return InformationDecomposition(
        joint=conv(joint), relevancy=conv(relevancy), redundancy=conv(redundancy),
        conditional_redundancy=conv(conditional), diversity=conv(diversity),
        residual=conv(joint - relevancy - diversity),
        relevancies=tuple(conv(v) for v in relevancies),
        redundancy_orders=None if orders is None else {o: conv(v) for o, v in orders.items()},
        conditional_redundancy_orders=(None if c_orders is None
                                       else {o: conv(v) for o, v in c_orders.items()}),
        method=method, base=base, n_samples=len(y), n_variables=m)
