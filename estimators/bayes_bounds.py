"""Bounds on ``I(X;Y)`` for a discrete label from classification error rates (bits by default).

Upper side (an asymptotic bound, valid as ``n -> infinity``): with ``eta(x) = P(Y | X = x)``,
the Shannon entropy of every pmf is at least twice its Gini impurity in bits,
``H(p) >= 2 (1 - sum_c p_c^2)`` (binary: ``h(p) >= 4 p (1 - p)``, Topsoe 2001; checked on
random simplices in ``tests/estimators/test_usable_information.py``), so

    H(Y|X) = E[H(eta(X))] >= 2 E[1 - sum_c eta_c(X)^2] = 2 R_1NN,

where ``R_1NN`` is the asymptotic error of the 1-nearest-neighbour rule (Cover & Hart 1967,
IEEE Trans. Inf. Theory 13:21). Hence ``I(X;Y) <= H(Y) - 2 R_1NN``. This is the Hellman-Raviv
inequality ``H(Y|X) >= 2 P_e*`` (Hellman & Raviv 1970) with the Bayes error replaced by the
larger 1-NN risk; both sides are asymptotic statements. ``R_1NN`` is estimated by the
leave-one-out 1-NN error, the smaller of two metrics (standardised coordinates and marginal
normal scores: the asymptotic risk does not depend on the metric, the finite-sample excess does,
and an overestimate of ``R_1NN`` would make the bound too low), minus ``z`` standard errors.
Above :data:`NN_MAX_DIMS` coordinates the finite-sample excess dominates and the upper side
is ``H(Y)``.

Lower side (Fano 1961): for any classifier with error ``e`` (of the Bayes rule or worse, so
``e >= P_e*``) and ``e <= (K - 1) / K``,
``I(X;Y) >= H(Y) - h(e) - e log2(K - 1)``; :func:`fano_lower_bound` takes the held-out error
of a cross-fitted classifier plus ``z`` standard errors.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from sklearn.neighbors import NearestNeighbors

from estimators.validation import check_base

__all__ = ["nn_error", "gini_upper_bound", "fano_lower_bound", "binary_entropy",
           "NN_MAX_DIMS"]

#: the 1-NN bound is used up to this many coordinates; above, the finite-sample 1-NN error is
#: far above its limit (members suite, n = 2000: the bound held the truth at 8 and 32
#: coordinates and fell below it at 122 and 244), and the upper side is ``H(Y)`` itself
NN_MAX_DIMS = 32


def _normal_scores(x: np.ndarray) -> np.ndarray:
    ranks = stats.rankdata(x, axis=0)
    return stats.norm.ppf(ranks / (len(x) + 1))


def _standardize(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def nn_error(x, labels) -> float:
    """Leave-one-out 1-NN error, the smaller over standardised and normal-score coordinates.

    Ties in distance go to the first neighbour scikit-learn returns; exact duplicate rows are
    each other's neighbours (their labels decide).
    """
    x = np.asarray(x, dtype=np.float64).reshape(len(labels), -1)
    errors = []
    for z in (_standardize(x), _normal_scores(x)):
        idx = NearestNeighbors(n_neighbors=2).fit(z).kneighbors(z, return_distance=False)
        self_first = idx[:, 0] == np.arange(len(z))
        nearest = np.where(self_first, idx[:, 1], idx[:, 0])
        errors.append(float(np.mean(labels[nearest] != labels)))
    return min(errors)


def binary_entropy(p) -> np.ndarray:
    """``h(p)`` in nats (0 at 0 and 1)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    return stats.entropy(np.stack([p, 1.0 - p]), axis=0)


def gini_upper_bound(x, labels, h_y: float, *, z: float = 1.96, base=2) -> float:
    """``H(Y) - 2 (R - z se)`` in units of ``base`` (``h_y`` in the same units), capped at
    ``H(Y)``; ``R`` = :func:`nn_error`, ``se = sqrt(R (1 - R) / n)``. Asymptotic (module
    docstring)."""
    r = nn_error(x, labels)
    r_low = max(r - z * np.sqrt(r * (1.0 - r) / len(labels)), 0.0)
    bits_to_base = np.log(2.0) / np.log(check_base(base))
    return float(min(h_y, h_y - 2.0 * r_low * bits_to_base))


def fano_lower_bound(error: float, n: int, n_classes: int, h_y: float, *, z: float = 1.96,
                     base=2) -> float:
    """Fano: ``H(Y) - h(e) - e log(K - 1)`` with ``e`` the held-out error plus ``z`` standard
    errors (units of ``base``); 0 where ``e >= (K - 1) / K`` (no information guaranteed)."""
    e = min(error + z * np.sqrt(max(error * (1.0 - error), 1.0 / n) / n), 1.0)
    if e >= (n_classes - 1) / n_classes:
        return 0.0
    lost = binary_entropy(e) + e * np.log(max(n_classes - 1, 1))
    return float(max(h_y - lost / np.log(check_base(base)), 0.0))
