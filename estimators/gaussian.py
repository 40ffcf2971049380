"""Gaussian (log-determinant) estimators with the analytic small-sample bias correction.

Backend of ``method="gaussian"`` and, after the rank-to-normal transform of
:mod:`estimators.copula`, of ``method="copula"``. Inputs are float64 ``(n, d)`` arrays (labels
int64 1-D); values are in nats.

For a Gaussian vector of dimension ``d``, ``H = (d log(2 pi e) + log det Sigma) / 2``, and every
other quantity is a signed sum of such entropies, i.e. of log-determinants of principal blocks
of one covariance matrix:

* ``I(X;Y) = (L(X) + L(Y) - L(X,Y)) / 2``
* ``I(X;Y|Z) = (L(X,Z) + L(Y,Z) - L(X,Y,Z) - L(Z)) / 2``
* ``TC(X_1..X_m) = (sum_i L(X_i) - L(X_1..X_m)) / 2``

with ``L(.) = log det`` of the covariance of those coordinates.

Bias correction (``bias_correction=True``, the default). For ``n`` samples of a ``d``-dimensional
Gaussian, the unbiased sample covariance ``S`` satisfies ``(n - 1) S ~ Wishart_d(Sigma, n - 1)``,
hence (e.g. Muirhead 1982, Thm 3.2.15; Misra, Singh & Demchuk 2005, "Estimation of the entropy of
a multivariate normal distribution", J. Multivar. Anal. 92; implemented once in
:func:`estimators.logdet.logdet_bias`)::

    E[log det S] = log det Sigma + sum_{i=1}^{d} psi((n - i) / 2) + d log(2 / (n - 1)).

Every log-determinant above is replaced by the unbiased estimate
``log det S - sum_i psi((n - i)/2) - d log(2/(n - 1))`` of ``log det Sigma``, consistently in
entropy, MI, CMI and TC (each with its own ``d`` and, within a class, its own ``n``). This removes
the dominant ``-d(d+1)/(2n)``-type bias that makes the naive plug-in TC over 60+ variables
overshoot. It needs ``n > d``.

Constant or duplicated columns make ``S`` singular. Each function therefore standardises the
columns and adds seeded Gaussian jitter of relative size ``JITTER = 1e-6``
(:func:`estimators.validation.jitter`; smaller noise would drown in the rounding of ``S``), so
such inputs give finite but very large dependence (the true value is infinite); the jitter
changes ordinary estimates by about 1e-12 relative. Entropy adds back ``sum log std`` of the
columns. Exact or near linear dependence between the variables and magnitudes beyond about
1e±154 warn with the numbers (:mod:`estimators._checks`).
"""

from __future__ import annotations

import numpy as np

from estimators._checks import check_dependence, check_scale
from estimators.logdet import block_logdets, logdet, logdet_bias
from estimators.validation import jitter, log_scale

__all__ = [
    "logdet_bias",
    "entropy",
    "mutual_information",
    "mixed_mutual_information",
    "conditional_mutual_information",
    "total_correlation",
]

_LOG_2PI_E = np.log(2.0 * np.pi * np.e)
JITTER = 1e-6


def _prepare(x: np.ndarray, rng) -> np.ndarray:
    """Standardised, jittered copy (the jitter breaks exact singularity; :func:`_cov` centres)."""
    return jitter(x, rng, noise=JITTER)


def _cov(z: np.ndarray) -> np.ndarray:
    zc = z - z.mean(axis=0)
    return zc.T @ zc / (len(z) - 1)


def _logdet(cov: np.ndarray, n: int, bias_correction: bool) -> float:
    """(Bias-corrected) log-determinant of an unbiased (ddof=1) covariance from n samples."""
    return logdet(cov, n, ddof=1, bias_correction=bias_correction,
                  hint="the Gaussian estimator cannot be used on these data")


def _block_logdets(cov: np.ndarray, sizes: list[int], n: int, bias_correction: bool) -> float:
    return block_logdets(cov, sizes, n, ddof=1, bias_correction=bias_correction)


def entropy(x: np.ndarray, *, rng, bias_correction: bool = True) -> float:
    """Gaussian differential entropy ``(d log(2 pi e) + log det Sigma) / 2`` in nats."""
    check_scale([x], ["x"], rescale=False)
    n, d = x.shape
    z = _prepare(x, rng)
    return 0.5 * (d * _LOG_2PI_E + _logdet(_cov(z), n, bias_correction)) + log_scale(x)


def _joint_logdet(arrays: list[np.ndarray], rng, bias_correction: bool):
    """Standardise the column-stacked arrays once; return a function L(list of array indices)."""
    sizes = [a.shape[1] for a in arrays]
    z = _prepare(np.concatenate(arrays, axis=1), rng)
    cov = _cov(z)
    n = len(z)
    edges = np.cumsum([0, *sizes])

    def L(which: list[int]) -> float:
        cols = np.concatenate([np.arange(edges[i], edges[i + 1]) for i in which])
        return _logdet(cov[np.ix_(cols, cols)], n, bias_correction)

    return L


def mutual_information(x: np.ndarray, y: np.ndarray, *, rng, bias_correction: bool = True
                       ) -> float:
    """``I(X;Y) = (L(X) + L(Y) - L(X,Y)) / 2`` in nats."""
    x, y = check_scale([x, y], ["x", "y"])
    check_dependence([x, y], ["x", "y"], "mutual information")
    L = _joint_logdet([x, y], rng, bias_correction)
    return 0.5 * (L([0]) + L([1]) - L([0, 1]))


def conditional_mutual_information(x: np.ndarray, y: np.ndarray, z: np.ndarray, *, rng,
                                   bias_correction: bool = True) -> float:
    """``I(X;Y|Z) = (L(X,Z) + L(Y,Z) - L(X,Y,Z) - L(Z)) / 2`` in nats."""
    x, y, z = check_scale([x, y, z], ["x", "y", "z"])
    check_dependence([z, x, y], ["z", "x", "y"], "conditional mutual information")
    L = _joint_logdet([x, y, z], rng, bias_correction)
    return 0.5 * (L([0, 2]) + L([1, 2]) - L([0, 1, 2]) - L([2]))


def mixed_mutual_information(x: np.ndarray, labels: np.ndarray, *, rng,
                             bias_correction: bool = True) -> float:
    """``I(X;Y) = H(X) - sum_y p(y) H(X | Y=y)`` with Gaussian entropies, in nats.

    ``X`` is modelled as Gaussian overall and within each class (so for a Gaussian mixture this
    is an approximation, exact only when the class-conditional covariances equal the pooled
    one). Each class needs more samples than dimensions.
    """
    n, d = x.shape
    (x,) = check_scale([x], ["x"])
    check_dependence([x], ["x"], "mutual information")
    z = _prepare(x, rng)
    value = 0.5 * _logdet(_cov(z), n, bias_correction)
    classes, sizes = np.unique(labels, return_counts=True)
    if (sizes <= d).any():
        c, size = classes[sizes <= d][0], sizes[sizes <= d][0]
        raise ValueError(f"labels: class {c} has {size} samples; the Gaussian estimator needs "
                         f"more samples than the {d} dimensions in every class")
    for c in classes:
        zc = z[labels == c]
        value -= len(zc) / n * 0.5 * _logdet(_cov(zc), len(zc), bias_correction)
    return value


def total_correlation(blocks: list[np.ndarray], *, rng, bias_correction: bool = True) -> float:
    """``TC = (sum_i L(X_i) - L(X_1..X_m)) / 2`` in nats, from one covariance matrix."""
    names = [f"variables[{i}]" for i in range(len(blocks))]
    blocks = check_scale(blocks, names)
    check_dependence(blocks, names, "total correlation")
    sizes = [b.shape[1] for b in blocks]
    z = _prepare(np.concatenate(blocks, axis=1), rng)
    n = len(z)
    cov = _cov(z)
    return 0.5 * (_block_logdets(cov, sizes, n, bias_correction)
                  - _logdet(cov, n, bias_correction))
