"""Gaussian (and Gaussian-copula) information of subsets of equal-size blocks of variables.

For ``M`` blocks of ``d`` variables each (``x`` ``[n, M, d]``) and a discrete label ``Y``, the
Gaussian mutual information of a block subset S (dimension ``D = |S| d``) is

    I_G(X_S; Y) = 1/2 [log det Sigma_S - sum_y p(y) log det Sigma_{S|y}]        (nats)

with ``Sigma_S`` the covariance over all samples and ``Sigma_{S|y}`` the one within class y
(maximum-likelihood, ``ddof=0``). With ``bias_correction=True`` every log-determinant is
replaced by its unbiased version :func:`estimators.logdet.logdet` (Wishart moments), so
:meth:`GaussianBlockMI.value` equals :func:`estimators.mutual_information` with
``method="gaussian"`` (which standardises and jitters by 1e-6, the only difference) and, with
``copula=True``, ``method="copula"``: both use :func:`estimators.copula.normal_scores` with the
same seed on the pooled sample, and the normal scores of a column do not depend on the other
columns, so the values agree on tied data too.

Pointwise form: ``s_i = log N(x_i; mu_{y_i}, Sigma_{S|y_i}) - log N(x_i; mu, Sigma_S)``. With
in-sample ML parameters the sample mean of ``s_i`` equals the plug-in ``I_G`` exactly (the mean
squared Mahalanobis distance under an ML covariance is exactly D), so per-example scores exist
for paired bootstraps; the bias correction is a constant added to every sample.

The covariances are computed once; any subset is then a principal block, and greedy search
uses :class:`estimators.logdet.ForwardLogdet` / :class:`~estimators.logdet.BackwardLogdet`
(Schur-complement updates) through :meth:`GaussianBlockMI.forward` / :meth:`backward`.
:func:`pairwise_information` gives ``I(X_i; X_j)`` and ``I(X_i; X_j | Y)`` for all pairs at once.
"""

from __future__ import annotations

import numpy as np

from estimators.copula import normal_scores
from estimators.logdet import (
    BackwardLogdet,
    ForwardLogdet,
    cholesky_logdet,
    logdet_bias,
    pair_logdets,
    stacked_logdets,
)
from estimators.validation import check_array, check_base, check_labels, check_same_length, to_base

__all__ = ["GaussianBlockMI", "pairwise_information"]

_HINT = ("blocks with zero variance or exact linear dependence make log det undefined; pass a "
         "positive `ridge`")


def _check_blocks(x, labels, copula, random_state):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"x must be [n, M, d], got shape {x.shape}")
    n = x.shape[0]
    check_array(x.reshape(n, -1), "x", allow_discrete=False)
    y = check_labels(labels)
    check_same_length(x=x, labels=y)
    if copula:
        x = normal_scores(x, random_state)
    return x, y


class GaussianBlockMI:
    """Gaussian ``I(X_S; Y)`` over subsets S of M blocks of dimension d (module docstring).

    Parameters
    ----------
    x : array ``[n, M, d]``
    labels : int array ``[n]``
    copula : bool
        Rank-to-normal transform every column first (:func:`estimators.copula.normal_scores`,
        ties broken by ``random_state``): the Gaussian-copula estimate.
    bias_correction : bool
        Unbiased log-determinants (:func:`estimators.logdet.logdet_bias`, ``ddof=0``).
    ridge : float
        Adds ``ridge * mean(diag Sigma)`` to every covariance diagonal (0 by default; needed
        only when blocks have zero variance or are exactly collinear).
    base : float or "e"
        Logarithm base of the results (2: bits).
    random_state : int or Generator, default 0
        Tie order of the copula transform.
    """

    def __init__(self, x, labels, *, copula=False, bias_correction=True, ridge=0.0, base=2,
                 random_state=0):
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        x, y = _check_blocks(x, labels, copula, random_state)
        n, m, d = x.shape
        self.n, self.m, self.d = n, m, d
        self.classes, self.y = np.unique(y, return_inverse=True)
        self.counts = np.bincount(self.y)
        if len(self.counts) < 2:
            raise ValueError("labels hold a single class: I(X;Y) = 0 and is not estimable")
        self.p = self.counts / n
        self.flat = x.reshape(n, m * d)
        self.mu = self.flat.mean(axis=0)
        self.cov = np.cov(self.flat, rowvar=False, bias=True).reshape(m * d, m * d)
        self.mu_y, self.cov_y = [], []
        for c in range(len(self.counts)):
            xc = self.flat[self.y == c]
            self.mu_y.append(xc.mean(axis=0))
            self.cov_y.append(np.cov(xc, rowvar=False, bias=True).reshape(m * d, m * d))
        if ridge > 0:
            lam = ridge * float(np.mean(np.diag(self.cov)))
            self.cov = self.cov + lam * np.eye(m * d)
            self.cov_y = [c + lam * np.eye(m * d) for c in self.cov_y]
        self.bias_correction = bias_correction
        self.base = check_base(base)

    def dims(self, members) -> np.ndarray:
        """Column indices of the blocks ``members`` in the flattened ``[n, M d]`` array."""
        members = np.asarray(members, dtype=np.int64).ravel()
        return (members[:, None] * self.d + np.arange(self.d)).ravel()

    def correction(self, n_members: int) -> float:
        """Bias-correction constant of I_G for ``|S| = n_members`` (nats, added to the plug-in)."""
        if not self.bias_correction or n_members == 0:
            return 0.0
        dim = n_members * self.d
        return 0.5 * (-logdet_bias(dim, self.n, ddof=0)
                      + sum(p * logdet_bias(dim, int(c), ddof=0)
                            for p, c in zip(self.p, self.counts)))

    def values_from_logdets(self, lds, n_members) -> np.ndarray:
        """I_G (units of ``base``) from plain log-dets: pooled ``lds[0]``, classes ``lds[1:]``."""
        ld_within = sum(p * ld for p, ld in zip(self.p, lds[1:]))
        return to_base(0.5 * (np.asarray(lds[0]) - ld_within) + self.correction(n_members),
                       self.base)

    def values_of_sets(self, sets) -> np.ndarray:
        """``I_G(X_S; Y)`` of G block sets of one size ``[G]``: one stacked Cholesky
        factorisation per covariance (pooled, then each class) — the numbers of :meth:`value`.
        Raises ``np.linalg.LinAlgError`` when some set's block is not positive definite."""
        sets = np.atleast_2d(np.asarray(sets, dtype=np.int64))
        if sets.shape[1] == 0:
            return np.zeros(sets.shape[0])
        dims = np.stack([self.dims(m) for m in sets])
        lds = [stacked_logdets(c, dims) for c, _ in self._covariances()]
        return self.values_from_logdets(lds, sets.shape[1])

    def value(self, members) -> float:
        """``I_G(X_S; Y)`` for the block set S (units of ``base``)."""
        dims = self.dims(members)
        if dims.size == 0:
            return 0.0
        lds = [cholesky_logdet(c[np.ix_(dims, dims)], what, _HINT)[1]
               for c, what in self._covariances()]
        return float(self.values_from_logdets(lds, len(dims) // self.d))

    def _covariances(self):
        yield self.cov, "pooled covariance"
        for k, c in enumerate(self.cov_y):
            yield c, f"class-{self.classes[k]} covariance"

    def pointwise(self, members) -> np.ndarray:
        """Per-sample ``log N(x|mu_y, Sigma_y) - log N(x|mu, Sigma)`` (+ correction);
        their mean is :meth:`value`."""
        dims = self.dims(members)
        if dims.size == 0:
            return np.zeros(self.n)
        xs = self.flat[:, dims]
        lp, ldp = cholesky_logdet(self.cov[np.ix_(dims, dims)], "pooled covariance", _HINT)
        maha = (np.linalg.solve(lp, (xs - self.mu[dims]).T) ** 2).sum(axis=0)
        out = 0.5 * (ldp + maha)
        for c, cov in enumerate(self.cov_y):
            rows = self.y == c
            lc, ldc = cholesky_logdet(cov[np.ix_(dims, dims)], f"class-{c} covariance", _HINT)
            mc = np.linalg.solve(lc, (xs[rows] - self.mu_y[c][dims]).T) ** 2
            out[rows] -= 0.5 * (ldc + mc.sum(axis=0))
        return to_base(out + self.correction(len(dims) // self.d), self.base)

    def forward(self) -> list[ForwardLogdet]:
        """Fresh forward states (pooled first, then one per class) for the empty set."""
        return [ForwardLogdet(c, self.d) for c, _ in self._covariances()]

    def backward(self, members) -> list[BackwardLogdet]:
        """Backward states (pooled first, then one per class) for the set ``members``."""
        return [BackwardLogdet(c, self.d, members) for c, _ in self._covariances()]


def pairwise_information(x, labels, *, copula=False, bias_correction=True, base=2,
                         random_state=0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian ``I(X_i; X_j)`` and ``I(X_i; X_j | Y)`` for every pair of blocks of ``x``.

    ``I(X_i; X_j) = 1/2 [L(i) + L(j) - L(i, j)]`` with the bias-corrected log-determinants
    ``L`` of :func:`estimators.logdet.pair_logdets` (ML covariances, ``ddof=0``), all pairs from
    one covariance; the conditional version averages the within-class values with weights
    ``p(y)``. Returns two symmetric ``[M, M]`` arrays (diagonal NaN) in units of ``base``.
    """
    x, y = _check_blocks(x, labels, copula, random_state)
    n, m, d = x.shape
    flat = x.reshape(n, m * d)

    def pair_mi(rows):
        ld1, ld2 = pair_logdets(np.cov(flat[rows], rowvar=False, bias=True), d,
                                int(rows.sum()), ddof=0, bias_correction=bias_correction)
        mi = 0.5 * (ld1[:, None] + ld1[None, :] - ld2)
        np.fill_diagonal(mi, np.nan)
        return mi

    mi = pair_mi(np.ones(n, dtype=bool))
    cmi = np.zeros((m, m))
    for c in np.unique(y):
        rows = y == c
        cmi += rows.mean() * pair_mi(rows)
    return to_base(mi, base), to_base(cmi, base)
