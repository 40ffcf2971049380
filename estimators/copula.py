"""Gaussian-copula transform: each column to normal scores by its ranks.

``method="copula"`` maps every continuous column ``x_j`` to ``z_j = Phi^{-1}(r_j / (n + 1))``
(``r_j`` its ranks, ties broken at random with the seeded ``rng``) on the pooled sample and then
uses the Gaussian estimators of :mod:`estimators.gaussian`. Mutual information, conditional MI and
total correlation are invariant under such per-column monotone maps, so the copula estimate only
assumes that the *dependence* is Gaussian, not the marginals (Ince et al. 2017, "A statistical
framework for neuroimaging data analysis based on mutual information estimated via a Gaussian
copula", Hum. Brain Mapp. 38).

Differential entropy is not invariant: ``H(X) = H(Z) + sum_j (H(X_j) - H(Z_j))``. The
change-of-variables term is estimated per column with the m-spacing estimator
:func:`spacing_entropy` for ``H(X_j)`` and the Gaussian estimator for ``H(Z_j)``; it is returned
by :func:`transform` as ``log_jacobian`` and only used by ``entropy``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, ndtri

from estimators import gaussian
from estimators.validation import check_random_state, jitter, log_scale

__all__ = ["normal_scores", "spacing_entropy", "transform"]


def normal_scores(x: np.ndarray, random_state=0) -> np.ndarray:
    """Rank-to-normal transform of each column, ``z = Phi^{-1}(rank / (n + 1))``, seeded ties.

    The one rank transform of the toolkit (the copula estimators, the Gaussian-copula member
    objectives and layer graph of ``infodiv``). The rows are put in one seeded random order
    (``random_state``: an int seed or a Generator, which is advanced by one permutation) before
    every column is sorted, so the ranks of tied values depend on that order (reproducible for
    a seed, different across seeds), identical columns get identical ranks, and the scores of a
    column do not depend on which other columns are transformed with it. ``x`` is ``(n, d)``
    or ``(n, ...)`` (trailing axes are transformed column by column, shape kept).
    """
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    x = x.reshape(shape[0], -1)
    n, d = x.shape
    perm = check_random_state(random_state).permutation(n)
    order = perm[np.argsort(x[perm], axis=0)]
    grid = ndtri(np.arange(1, n + 1) / (n + 1.0))
    z = np.empty((n, d), dtype=np.float64)
    np.put_along_axis(z, order, np.broadcast_to(grid[:, None], (n, d)), axis=0)
    return z.reshape(shape)


def spacing_entropy(x: np.ndarray, rng: np.random.Generator) -> float:
    """m-spacing estimate of the differential entropy (nats) of a 1-D sample.

    ``H = mean_i log(x_(i+m) - x_(i)) - psi(m) + psi(n + 1)``, ``m = max(1, round(n^(1/3) / 4))``;
    for a uniform sample ``E log(U_(i+m) - U_(i)) = psi(m) - psi(n + 1)``, so the digamma terms
    make the estimator unbiased there (Vasicek 1976; van Es 1992). A small m keeps the bias from
    the curvature of the density in the tails low; measured on standard normal samples it is
    -0.026, -0.012 and -0.009 nats at n = 200, 1000 and 2000 (sd 0.08, 0.027, 0.019). Ties are
    broken with seeded jitter of relative size 1e-10 after standardising; ``log std`` is added
    back.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = len(x)
    m = max(1, int(round(n ** (1 / 3) / 4)))
    if n <= m:
        raise ValueError(f"spacing entropy needs more than {m} samples, got n={n}")
    s = np.sort(jitter(x[:, None], rng)[:, 0])
    return float(np.mean(np.log(s[m:] - s[:-m])) - digamma(m) + digamma(n + 1)
                 + log_scale(x[:, None]))


def transform(x: np.ndarray, *, rng: np.random.Generator, with_jacobian: bool = False,
              bias_correction: bool = True):
    """Normal scores of ``x`` and, if asked, the entropy change ``sum_j H(X_j) - H(Z_j)`` (nats).

    Returns ``(z, log_jacobian)``; ``log_jacobian`` is 0.0 unless ``with_jacobian``.
    """
    z = normal_scores(x, rng)
    if not with_jacobian:
        return z, 0.0
    offset = 0.0
    for j in range(x.shape[1]):
        offset += spacing_entropy(x[:, j], rng)
        offset -= gaussian.entropy(z[:, j:j + 1], rng=rng, bias_correction=bias_correction)
    return z, offset
