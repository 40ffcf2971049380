"""Gaussian (and Gaussian-copula) I(U_S; Y) for member sets, with incremental log-determinants.

For a member set S with stacked variables U_S (dimension D = |S|·d) and a discrete label Y,

    I_G(U_S; Y) = ½ [log det Σ_S − Σ_y p(y) log det Σ_{S|y}]        (nats)

where Σ_S is the covariance of U_S over all examples and Σ_{S|y} the covariance within class y
(maximum-likelihood, ddof = 0). With ``bias_correction=True`` each log-determinant of a
D-dimensional ML covariance from n samples is reduced by its expectation offset under
Gaussianity, b(D, n) = Σ_{i=1}^{D} ψ((n − i)/2) + D·log(2/n) (Wishart moments; the correction
of Ince et al. 2017, "gcmi", for a covariance with an estimated mean).

Pointwise form: s_i = log N(u_i; μ_{y_i}, Σ_{S|y_i}) − log N(u_i; μ, Σ_S). With in-sample ML
parameters the sample mean of s_i equals the plug-in I_G exactly (the mean squared Mahalanobis
distance under an ML covariance is exactly D), so per-example scores exist for paired
bootstraps; the bias correction is a constant added to every example.

Greedy search needs log det Σ_{S∪{j}} for every candidate j. :class:`ForwardLogdet` keeps
W = L_S^{-1} Σ_{S,·} (L_S the Cholesky factor of Σ_S) and the Schur complements
Σ_{j|S} = Σ_jj − W_jᵀ W_j of every candidate, so that

    log det Σ_{S∪{j}} = log det Σ_S + log det Σ_{j|S},

and adding j appends d rows R^{-1}(Σ_{j,·} − W_jᵀ W) (R = chol Σ_{j|S}) and downdates every
Schur complement: O(D·M·d²) per step instead of a Cholesky per candidate.
:class:`BackwardLogdet` keeps the precision P = Σ_S^{-1}; removing k uses
log det Σ_{S∖k} = log det Σ_S + log det P_kk and the rank-d downdate
P ← P − P_{·k} P_kk^{-1} P_{k·}.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import digamma, ndtri
from scipy.stats import rankdata

from estimators.validation import check_array, check_labels, check_same_length

__all__ = ["helmert_basis", "member_variables", "copula_transform", "logdet_bias",
           "GaussianMI", "ForwardLogdet", "BackwardLogdet"]


def helmert_basis(n_options: int) -> np.ndarray:
    """Orthonormal basis ``[C, C−1]`` of the sum-zero subspace of R^C.

    Projecting option logits on it removes the shift softmax ignores without leaving a
    singular (rank C−1) covariance.
    """
    if n_options < 2:
        raise ValueError(f"need at least 2 options to centre, got {n_options}")
    c = n_options
    basis = np.zeros((c, c - 1))
    for k in range(1, c):
        basis[:k, k - 1] = 1.0
        basis[k, k - 1] = -k
        basis[:, k - 1] /= np.sqrt(k * (k + 1))
    return basis


def member_variables(u, *, centre: bool = True) -> np.ndarray:
    """Member variables ``[N, M, d]`` (float64) from contributions ``u`` ``[N, M, C]``.

    ``centre=True`` projects each member's C logits on :func:`helmert_basis` (d = C − 1).
    """
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 3:
        raise ValueError(f"u must be [N, M, C], got shape {u.shape}")
    return u @ helmert_basis(u.shape[2]) if centre else u


def copula_transform(x: np.ndarray) -> np.ndarray:
    """Rank-to-normal transform of every column (average ranks, Φ^{-1}(rank / (n + 1)))."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(x.shape[0], -1)
    ranks = rankdata(flat, axis=0)
    return ndtri(ranks / (flat.shape[0] + 1.0)).reshape(x.shape)


def logdet_bias(dim: int, n: int) -> float:
    """E[log det Σ̂_ML] − log det Σ for a ``dim``-variate Gaussian and ``n`` samples (nats)."""
    if n <= dim:
        raise ValueError(f"a {dim}-dimensional covariance needs more than {dim} samples, got {n}")
    i = np.arange(1, dim + 1)
    return float(digamma((n - i) / 2.0).sum() + dim * np.log(2.0 / n))


def _chol_logdet(a: np.ndarray, what: str) -> tuple[np.ndarray, float]:
    try:
        factor = np.linalg.cholesky(a)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{what} is singular or not positive definite; members with zero "
                         "variance or exact linear dependence make log det undefined — pass a "
                         "positive `ridge`") from exc
    return factor, 2.0 * float(np.log(np.diag(factor)).sum())


class ForwardLogdet:
    """Incremental log det Σ_S while members are added (Schur-complement updates).

    Parameters
    ----------
    cov : ndarray ``[M·d, M·d]``
        Covariance of all members, member m occupying rows ``m·d:(m+1)·d``.
    d : int
        Dimension of each member.
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
        """log det Σ_{S∪{j}} for each candidate j (nats)."""
        sign, ld = np.linalg.slogdet(self.schur[np.asarray(candidates)])
        ld = np.where(sign > 0, ld, -np.inf)
        return self.logdet + ld

    def add(self, j: int) -> None:
        d = self.d
        blk = slice(j * d, (j + 1) * d)
        r, ld = _chol_logdet(self.schur[j], f"conditional covariance of member {j}")
        rows = self.cov[blk, :] - self.w[:, blk].T @ self.w
        rows = np.linalg.inv(r) @ rows  # r is d x d: an explicit inverse is cheapest
        self.w = np.vstack([self.w, rows])
        r3 = rows.reshape(d, self.m, d)
        self.schur -= np.einsum("amk,aml->mkl", r3, r3)
        self.logdet += ld


class BackwardLogdet:
    """Incremental log det Σ_S while members are removed (precision downdates)."""

    def __init__(self, cov: np.ndarray, d: int, members):
        self.d = d
        self.members = list(members)
        dims = (np.asarray(self.members)[:, None] * d + np.arange(d)).ravel()
        sub = cov[np.ix_(dims, dims)]
        _, self.logdet = _chol_logdet(sub, "covariance of the full member set")
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
        """log det Σ_{S∖{j}} for each candidate j in S (nats)."""
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


class GaussianMI:
    """Gaussian I(U_S; Y) over subsets of M members of dimension d (bits by default).

    Parameters
    ----------
    x : array ``[N, M, d]``
        Member variables (see :func:`member_variables`).
    labels : int array ``[N]``
    copula : bool
        Rank-to-normal transform every column first (Gaussian-copula estimate).
    bias_correction : bool
        Subtract the analytic log-det offsets (module docstring).
    ridge : float
        Adds ``ridge · mean(diag Σ)`` to every covariance diagonal (0 by default; needed only
        when members have zero variance or are exactly collinear).
    base : float
        Logarithm base of the results (2: bits).
    """

    def __init__(self, x, labels, *, copula=False, bias_correction=True, ridge=0.0, base=2.0):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 3:
            raise ValueError(f"x must be [N, M, d], got shape {x.shape}")
        n, m, d = x.shape
        check_array(x.reshape(n, -1), "x", allow_discrete=False)
        y = check_labels(labels)
        check_same_length(x=x, labels=y)
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        if copula:
            x = copula_transform(x)
        self.n, self.m, self.d = n, m, d
        self.classes, y_idx = np.unique(y, return_inverse=True)
        self.y = y_idx
        self.counts = np.bincount(y_idx)
        if len(self.counts) < 2:
            raise ValueError("labels hold a single class: I(U;Y) = 0 and is not estimable")
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
        self.scale = 1.0 / np.log(base)

    # ------------------------------------------------------------------ helpers
    def dims(self, members) -> np.ndarray:
        members = np.asarray(members, dtype=np.int64).ravel()
        return (members[:, None] * self.d + np.arange(self.d)).ravel()

    def correction(self, n_members: int) -> float:
        """Bias-correction constant of I_G for |S| = n_members (nats, added to the plug-in)."""
        if not self.bias_correction or n_members == 0:
            return 0.0
        dim = n_members * self.d
        return 0.5 * (-logdet_bias(dim, self.n)
                      + sum(p * logdet_bias(dim, int(c)) for p, c in zip(self.p, self.counts)))

    def _combine(self, ld_pooled, ld_classes, n_members) -> np.ndarray:
        ld_within = sum(p * ld for p, ld in zip(self.p, ld_classes))
        return (0.5 * (np.asarray(ld_pooled) - ld_within) + self.correction(n_members)) * self.scale

    # ------------------------------------------------------------------ values
    def value(self, members) -> float:
        """I_G(U_S; Y) for the member set S."""
        dims = self.dims(members)
        if dims.size == 0:
            return 0.0
        ld = _chol_logdet(self.cov[np.ix_(dims, dims)], "pooled covariance")[1]
        lds = [_chol_logdet(c[np.ix_(dims, dims)], f"class-{k} covariance")[1]
               for k, c in enumerate(self.cov_y)]
        return float(self._combine(ld, lds, len(dims) // self.d))

    def pointwise(self, members) -> np.ndarray:
        """Per-example log N(u|μ_y, Σ_y) − log N(u|μ, Σ) (+ correction); mean = :meth:`value`."""
        dims = self.dims(members)
        if dims.size == 0:
            return np.zeros(self.n)
        xs = self.flat[:, dims]
        lp, ldp = _chol_logdet(self.cov[np.ix_(dims, dims)], "pooled covariance")
        maha = (np.linalg.solve(lp, (xs - self.mu[dims]).T) ** 2).sum(axis=0)
        out = 0.5 * (ldp + maha)
        for c, cov in enumerate(self.cov_y):
            rows = self.y == c
            lc, ldc = _chol_logdet(cov[np.ix_(dims, dims)], f"class-{c} covariance")
            mc = (np.linalg.solve(lc, (xs[rows] - self.mu_y[c][dims]).T) ** 2)
            out[rows] -= 0.5 * (ldc + mc.sum(axis=0))
        return (out + self.correction(len(dims) // self.d)) * self.scale

    def entropy_terms(self, members) -> dict:
        """Theorem 4 terms of S: joint, relevancy, redundancy, conditional redundancy, diversity.

        Each entropy is the Gaussian entropy from a (bias-corrected) log-determinant, so the
        identity joint = relevancy + diversity holds to rounding; ``residual`` reports it.
        """
        members = list(np.asarray(members, dtype=np.int64).ravel())
        if not members:
            return dict(joint=0.0, relevancy=0.0, redundancy=0.0, conditional_redundancy=0.0,
                        diversity=0.0, residual=0.0)

        def h(cov, dims, n):  # entropy up to the additive constant D/2 log(2πe) (nats)
            ld = _chol_logdet(cov[np.ix_(dims, dims)], "covariance")[1]
            if self.bias_correction:
                ld -= logdet_bias(len(dims), n)
            return 0.5 * ld

        def tc(cov, n):
            return sum(h(cov, self.dims([m]), n) for m in members) - h(cov, self.dims(members), n)

        redundancy = tc(self.cov, self.n)
        cond = sum(p * tc(c, int(k)) for p, c, k in zip(self.p, self.cov_y, self.counts))
        relevancy = sum(self.value([m]) for m in members) / self.scale
        joint = self.value(members) / self.scale
        div = cond - redundancy
        out = dict(joint=joint, relevancy=relevancy, redundancy=redundancy,
                   conditional_redundancy=cond, diversity=div,
                   residual=joint - relevancy - div)
        return {k: float(v * self.scale) for k, v in out.items()}

    # ------------------------------------------------------------------ incremental states
    def forward(self) -> list[ForwardLogdet]:
        """Fresh forward states (pooled first, then one per class) for the empty set."""
        return [ForwardLogdet(self.cov, self.d)] + [ForwardLogdet(c, self.d) for c in self.cov_y]

    def backward(self, members) -> list[BackwardLogdet]:
        return ([BackwardLogdet(self.cov, self.d, members)]
                + [BackwardLogdet(c, self.d, members) for c in self.cov_y])

    def values_from_logdets(self, lds, n_members) -> np.ndarray:
        return self._combine(lds[0], lds[1:], n_members)
