"""Gaussian log-determinants: the Wishart bias correction and incremental (Schur) updates.

The one home of every log-determinant in the toolkit. Gaussian entropies, mutual information,
total correlation and their class-conditional versions are signed sums of ``log det`` of
principal blocks of covariance matrices; :mod:`estimators.gaussian` (the ``method="gaussian"``
and ``"copula"`` backends), :mod:`estimators.blocks` (Gaussian information of member subsets)
and, through them, the greedy curves of ``infodiv`` all call the functions here.

Bias correction. For ``n`` draws of a ``d``-variate Gaussian, the scatter matrix
``A = sum_i (x_i - xbar)(x_i - xbar)^T`` is ``Wishart_d(Sigma, n - 1)``, hence (Muirhead 1982,
Thm 3.2.15; Misra, Singh & Demchuk 2005, J. Multivar. Anal. 92)::

    E[log det A] = log det Sigma + sum_{i=1}^{d} psi((n - i) / 2) + d log 2.

A covariance estimate ``S = A / (n - ddof)`` (``ddof=1``: unbiased, ``ddof=0``: maximum
likelihood) therefore has ``E[log det S] - log det Sigma = sum_i psi((n - i)/2) +
d log(2 / (n - ddof))`` (:func:`logdet_bias`), and subtracting it gives an unbiased estimate of
``log det Sigma`` whatever ``ddof`` is. It needs ``n > d``.

Incremental updates (greedy search over blocks of size ``d``). :class:`ForwardLogdet` keeps
``W = L_S^{-1} Sigma_{S,.}`` (``L_S`` the Cholesky factor of ``Sigma_S``) and the Schur
complements ``Sigma_{j|S} = Sigma_jj - W_j^T W_j`` of every block, so that

    log det Sigma_{S + j} = log det Sigma_S + log det Sigma_{j|S}

(Schur's determinant formula); adding ``j`` appends ``d`` rows ``R^{-1}(Sigma_{j,.} - W_j^T W)``
(``R = chol Sigma_{j|S}``) and downdates every complement: O(D M d^2) per step instead of one
Cholesky per candidate. :class:`BackwardLogdet` keeps the precision ``P = Sigma_S^{-1}``;
removing ``k`` uses ``log det Sigma_{S - k} = log det Sigma_S + log det P_kk`` and the rank-d
downdate ``P <- P - P_{.k} P_kk^{-1} P_{k.}``. All values are in nats.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import digamma

__all__ = ["logdet_bias", "cholesky_logdet", "stacked_logdets", "logdet", "block_logdets",
           "pair_logdets",
           "ForwardLogdet", "BackwardLogdet"]


def logdet_bias(d: int, n: int, *, ddof: int = 1) -> float:
    """``E[log det S] - log det Sigma`` for ``S = scatter / (n - ddof)`` of n Gaussian draws.

    Equals ``sum_{i=1}^{d} psi((n - i)/2) + d log(2/(n - ddof))`` (module docstring); requires
    ``n > d``. ``ddof=1`` is the unbiased sample covariance, ``ddof=0`` the maximum-likelihood
    one.
    """
    if n <= d:
        raise ValueError(
            f"the Gaussian estimator needs more samples than dimensions: n={n}, d={d}"
        )
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    i = np.arange(1, d + 1)
    return float(np.sum(digamma((n - i) / 2.0)) + d * np.log(2.0 / (n - ddof)))


def cholesky_logdet(a: np.ndarray, what: str = "covariance", hint: str = ""
                    ) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``a`` and ``log det a = 2 sum log diag L`` (no correction).

    Raises a ValueError naming ``what`` (and ``hint``) when ``a`` is not positive definite.
    """
    try:
        factor = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} of dimension {a.shape[0]} is not positive definite"
                         + (f"; {hint}" if hint else "")) from None
    return factor, 2.0 * float(np.sum(np.log(np.diagonal(factor))))


def stacked_logdets(cov: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Plain ``log det cov[d_g, d_g]`` of G principal submatrices at once ``[G]`` (no correction).

    ``dims`` is ``[G, k]``: row g indexes the k rows/columns of submatrix g. One stacked
    Cholesky factorisation, ``log det = 2 sum log diag L`` per submatrix. Raises
    ``np.linalg.LinAlgError`` when any submatrix is not positive definite (callers decide
    which one to report, e.g. by evaluating them one by one with :func:`cholesky_logdet`).
    """
    dims = np.asarray(dims, dtype=np.int64)
    if dims.ndim != 2:
        raise ValueError(f"dims must be [G, k], got {dims.ndim} dimension(s)")
    factor = np.linalg.cholesky(cov[dims[:, :, None], dims[:, None, :]])
    return 2.0 * np.log(np.diagonal(factor, axis1=1, axis2=2)).sum(axis=1)


def logdet(cov: np.ndarray, n: int, *, ddof: int = 1, bias_correction: bool = True,
           what: str = "sample covariance", hint: str = "") -> float:
    """(Bias-corrected) ``log det`` of a covariance estimated from ``n`` samples (nats).

    ``log det cov - logdet_bias(d, n, ddof)`` with ``bias_correction`` (module docstring),
    the plain Cholesky log-determinant otherwise.
    """
    d = cov.shape[0]
    if n <= d:
        logdet_bias(d, n)  # raises with the numbers
    value = cholesky_logdet(cov, f"{what} (n={n})", hint)[1]
    return value - logdet_bias(d, n, ddof=ddof) if bias_correction else value


def block_logdets(cov: np.ndarray, sizes, n: int, *, ddof: int = 1,
                  bias_correction: bool = True) -> float:
    """Sum of the (bias-corrected) log-determinants of the consecutive diagonal blocks."""
    sizes = [int(s) for s in sizes]
    if len(set(sizes)) == 1:  # vectorised path: all blocks of equal size
        d, m = sizes[0], len(sizes)
        if n <= d:
            logdet_bias(d, n)
        idx = np.arange(m * d).reshape(m, d)
        stack = cov[idx[:, :, None], idx[:, None, :]]
        try:
            chol = np.linalg.cholesky(stack)
        except np.linalg.LinAlgError:
            raise ValueError(f"a {d}x{d} block covariance is not positive definite (n={n})"
                             ) from None
        values = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum()
        correction = m * logdet_bias(d, n, ddof=ddof) if bias_correction else 0.0
        return float(values - correction)
    edges = np.cumsum([0, *sizes])
    return sum(logdet(cov[a:b, a:b], n, ddof=ddof, bias_correction=bias_correction)
               for a, b in zip(edges[:-1], edges[1:]))


def pair_logdets(cov: np.ndarray, d: int, n: int, *, ddof: int = 1,
                 bias_correction: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Log-determinants of every block ``[M]`` and every pair of blocks ``[M, M]`` at once.

    ``cov`` is ``[M d, M d]`` with block ``m`` in rows ``m d:(m + 1) d``. The pair ``(i, j)``
    uses the ``2d x 2d`` covariance of blocks i and j (its diagonal ``(i, i)`` is singular);
    singular matrices give ``-inf``. Bias-corrected with :func:`logdet_bias` unless told otherwise.
    """
    m = cov.shape[0] // d
    blocks = cov.reshape(m, d, m, d).transpose(0, 2, 1, 3)  # [M, M, d, d]
    diag = blocks[np.arange(m), np.arange(m)]
    sign1, ld1 = np.linalg.slogdet(diag)
    ld1 = np.where(sign1 > 0, ld1, -np.inf)
    top = np.concatenate([np.broadcast_to(diag[:, None], (m, m, d, d)), blocks], axis=3)
    bottom = np.concatenate([np.swapaxes(blocks, 2, 3),
                             np.broadcast_to(diag[None, :], (m, m, d, d))], axis=3)
    sign2, ld2 = np.linalg.slogdet(np.concatenate([top, bottom], axis=2))
    ld2 = np.where(sign2 > 0, ld2, -np.inf)
    if bias_correction:
        ld1 = ld1 - logdet_bias(d, n, ddof=ddof)
        ld2 = ld2 - logdet_bias(2 * d, n, ddof=ddof)
    return ld1, ld2


class ForwardLogdet:
    """Incremental ``log det Sigma_S`` (plain, nats) while blocks are added (Schur updates).

    Parameters
    ----------
    cov : ndarray ``[M d, M d]``
        Covariance of all blocks, block m occupying rows ``m d:(m + 1) d``.
    d : int
        Dimension of each block.
    """

    def __init__(self, cov: np.ndarray, d: int):
        self.cov = cov
        self.d = d
        self.m = cov.shape[0] // d
        self.w = np.zeros((0, cov.shape[0]))
        blocks = cov.reshape(self.m, d, self.m, d)
        self.schur = np.ascontiguousarray(blocks[np.arange(self.m), :, np.arange(self.m), :])
        self.logdet = 0.0

    def copy(self) -> ForwardLogdet:
        new = ForwardLogdet.__new__(ForwardLogdet)
        new.cov, new.d, new.m = self.cov, self.d, self.m
        new.w, new.schur, new.logdet = self.w.copy(), self.schur.copy(), self.logdet
        return new

    def candidate_logdets(self, candidates) -> np.ndarray:
        """``log det Sigma_{S + j}`` for each candidate block j (``-inf`` if singular)."""
        sign, ld = np.linalg.slogdet(self.schur[np.asarray(candidates)])
        return self.logdet + np.where(sign > 0, ld, -np.inf)

    def add(self, j: int) -> None:
        d = self.d
        blk = slice(j * d, (j + 1) * d)
        r, ld = cholesky_logdet(self.schur[j], f"conditional covariance of block {j}",
                                "blocks with zero variance or exact linear dependence make "
                                "log det undefined")
        rows = self.cov[blk, :] - self.w[:, blk].T @ self.w
        rows = np.linalg.inv(r) @ rows  # r is d x d: an explicit inverse is cheapest
        self.w = np.vstack([self.w, rows])
        r3 = rows.reshape(d, self.m, d)
        self.schur -= np.einsum("amk,aml->mkl", r3, r3)
        self.logdet += ld


class BackwardLogdet:
    """Incremental ``log det Sigma_S`` (plain, nats) while blocks are removed (precision
    downdates), starting from the set ``members``."""

    def __init__(self, cov: np.ndarray, d: int, members):
        self.d = d
        self.members = list(members)
        dims = (np.asarray(self.members)[:, None] * d + np.arange(d)).ravel()
        sub = cov[np.ix_(dims, dims)]
        _, self.logdet = cholesky_logdet(sub, "covariance of the full block set")
        self.prec = cho_solve(cho_factor(sub, lower=True), np.eye(len(dims)))

    def copy(self) -> BackwardLogdet:
        new = BackwardLogdet.__new__(BackwardLogdet)
        new.d, new.members = self.d, list(self.members)
        new.prec, new.logdet = self.prec.copy(), self.logdet
        return new

    def _block(self, j):
        pos = self.members.index(j)
        return slice(pos * self.d, (pos + 1) * self.d)

    def candidate_logdets(self, candidates) -> np.ndarray:
        """``log det Sigma_{S - j}`` for each candidate block j in S."""
        blocks = np.stack([self.prec[self._block(j), self._block(j)] for j in candidates])
        sign, ld = np.linalg.slogdet(blocks)
        return self.logdet + np.where(sign > 0, ld, np.inf)

    def remove(self, j: int) -> None:
        b = self._block(j)
        pkk = self.prec[b, b]
        keep = np.ones(self.prec.shape[0], dtype=bool)
        keep[b] = False
        pk = self.prec[keep][:, b]
        self.logdet += float(np.linalg.slogdet(pkk)[1])
        self.prec = self.prec[np.ix_(keep, keep)] - pk @ np.linalg.solve(pkk, pk.T)
        self.members.remove(j)
