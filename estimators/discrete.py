"""Entropy, MI, CMI and total correlation of discrete (integer) data from empirical counts.

Backend of ``method="binned"`` (after :func:`estimators.binned.transform`) and of every call whose
inputs are all integer arrays. Each variable is an ``(n, d)`` int64 array; a multi-column variable
is one discrete variable whose symbols are its rows. All values are in nats.

Every quantity is a signed sum of joint entropies computed with ONE entropy estimator,

* ``I(X;Y) = H(X) + H(Y) - H(X,Y)``
* ``I(X;Y|Z) = H(X,Z) + H(Y,Z) - H(X,Y,Z) - H(Z)``
* ``TC(X_1..X_m) = sum_i H(X_i) - H(X_1..X_m)``

so with ``estimator="plugin"`` they are exactly the information measures of the empirical
distribution (what :mod:`dit` computes from the empirical pmf), and identities such as
``TC(U) - TC(U|Y) = sum_i I(U_i;Y) - I(U;Y)`` hold to rounding.

Entropy estimators (``estimator=``):

``"plugin"``
    ``H = -sum_k p_k log p_k`` with ``p_k = n_k / n`` (maximum likelihood).
``"miller_madow"``
    ``H_plugin + (K - 1) / (2 n)`` with ``K`` the number of occupied cells (Miller 1955).
``"james_stein"``
    Plug-in entropy of the shrinkage pmf ``lambda t + (1 - lambda) p`` towards the uniform
    target ``t = 1 / K_all`` over ``K_all`` cells, with the data-driven intensity
    ``lambda = (1 - sum p_k^2) / ((n - 1) sum (t - p_k)^2)`` restricted to ``[0, 1]`` as in
    Hausser & Strimmer (2009), "Entropy inference and the James-Stein estimator", JMLR 10.
    ``K_all`` is the product of the observed marginal alphabet sizes of the columns.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_cells

__all__ = [
    "ESTIMATORS",
    "joint_codes",
    "entropy_from_counts",
    "entropy",
    "mutual_information",
    "mixed_mutual_information",
    "conditional_mutual_information",
    "total_correlation",
]

ESTIMATORS = ("plugin", "miller_madow", "james_stein")


def _column_codes(col: np.ndarray) -> tuple[np.ndarray, int]:
    values, inverse = np.unique(col, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(values)


def joint_codes(*arrays: np.ndarray) -> tuple[np.ndarray, int]:
    """Encode the rows of the column-stacked integer arrays as codes ``0..K-1``.

    Returns the codes and ``K_all``, the product of the per-column alphabet sizes (the number of
    cells of the product alphabet, used as the James-Stein target size).
    """
    cols = np.concatenate([np.asarray(a).reshape(len(a), -1) for a in arrays], axis=1)
    codes = np.zeros(len(cols), dtype=np.int64)
    radix = 1
    n_cells = 1.0
    for j in range(cols.shape[1]):
        c, size = _column_codes(cols[:, j])
        n_cells *= size
        if radix * size >= 2**62:  # re-compress before the mixed-radix code overflows
            codes, radix = _column_codes(codes)
        codes = codes * size + c
        radix *= size
    codes, _ = _column_codes(codes)
    return codes, int(n_cells) if n_cells < 2**62 else n_cells


def entropy_from_counts(counts, *, estimator: str = "plugin", n_cells=None) -> float:
    """Entropy in nats of a pmf given by cell counts, with the chosen ``estimator``.

    ``n_cells`` (``>= len(counts)``) is the size of the full alphabet including empty cells;
    it only matters for ``"james_stein"`` and defaults to the number of occupied cells.
    """
    counts = np.asarray(counts, dtype=np.float64)
    counts = counts[counts > 0]
    n = counts.sum()
    p = counts / n
    if estimator == "plugin":
        return float(-np.sum(p * np.log(p)))
    if estimator == "miller_madow":
        return float(-np.sum(p * np.log(p)) + (len(p) - 1) / (2.0 * n))
    if estimator == "james_stein":
        k_all = len(p) if n_cells is None else float(n_cells)
        if k_all < len(p):
            raise ValueError(f"n_cells={n_cells} is smaller than the {len(p)} occupied cells")
        target = 1.0 / k_all
        # squared distance to the target, empty cells included
        dist = np.sum((target - p) ** 2) + (k_all - len(p)) * target**2
        if n <= 1 or dist == 0:
            lam = 1.0
        else:
            lam = float(np.clip((1.0 - np.sum(p**2)) / ((n - 1.0) * dist), 0.0, 1.0))
        shrunk = lam * target + (1.0 - lam) * p
        h = -np.sum(shrunk * np.log(shrunk))
        n_empty = k_all - len(p)
        if lam > 0 and n_empty > 0:
            q = lam * target
            h += -n_empty * q * np.log(q)
        return float(h)
    raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")


def _h(*arrays: np.ndarray, estimator: str) -> float:
    codes, n_cells = joint_codes(*arrays)
    return entropy_from_counts(np.bincount(codes), estimator=estimator, n_cells=n_cells)


def entropy(x: np.ndarray, *, estimator: str = "plugin") -> float:
    """Entropy ``H(X)`` in nats of the integer variable ``x`` (``(n, d)``)."""
    return _h(x, estimator=estimator)


def mutual_information(x: np.ndarray, y: np.ndarray, *, estimator: str = "plugin") -> float:
    """``I(X;Y) = H(X) + H(Y) - H(X,Y)`` in nats."""
    check_cells(joint_codes(x, y)[0], 2, "mutual information", "x and y")
    return (_h(x, estimator=estimator) + _h(y, estimator=estimator)
            - _h(x, y, estimator=estimator))


def mixed_mutual_information(x: np.ndarray, labels: np.ndarray, *,
                             estimator: str = "plugin") -> float:
    """``I(X;Y)`` with ``Y`` given as 1-D labels (here simply a second discrete variable)."""
    return mutual_information(x, labels.reshape(-1, 1), estimator=estimator)


def conditional_mutual_information(x: np.ndarray, y: np.ndarray, z: np.ndarray, *,
                                   estimator: str = "plugin") -> float:
    """``I(X;Y|Z) = H(X,Z) + H(Y,Z) - H(X,Y,Z) - H(Z)`` in nats."""
    check_cells(joint_codes(x, y, z)[0], 3, "conditional mutual information", "x, y and z")
    return (_h(x, z, estimator=estimator) + _h(y, z, estimator=estimator)
            - _h(x, y, z, estimator=estimator) - _h(z, estimator=estimator))


def total_correlation(blocks: list[np.ndarray], *, estimator: str = "plugin") -> float:
    """``TC = sum_i H(X_i) - H(X_1, ..., X_m)`` in nats (one variable per block)."""
    check_cells(joint_codes(*blocks)[0], len(blocks), "total correlation", "variables")
    marginals = sum(_h(b, estimator=estimator) for b in blocks)
    return marginals - _h(*blocks, estimator=estimator)
