"""Benchmark tasks of Czyż et al. (2023), "Beyond normal: on the evaluation of mutual
information estimators" (NeurIPS; the ``benchmark-mi`` package), re-implemented with numpy.

Each :class:`Task` draws ``(x, y)`` of shapes ``(n, d_x)``, ``(n, d_y)`` and knows its mutual
information exactly (nats). The six tasks are those where the estimators differ most:

* ``student-identity-{d}-{d}-{df}``: multivariate Student-t with identity dispersion and ``df``
  degrees of freedom, split into ``x`` (first ``d_x`` coordinates) and ``y``. Uncorrelated but
  dependent (one shared chi-square scale). ``I = h(d_x) + h(d_y) - h(d_x + d_y)`` with the
  entropy of a standard ``t_df`` in ``k`` dimensions (Arellano-Valle, Contreras-Reyes & Genton
  2013, Scand. J. Stat. 40, eq. 7): ``h(k) = log Gamma(df/2) - log Gamma((df+k)/2) +
  (k/2) log(df pi) + ((df+k)/2) (psi((df+k)/2) - psi(df/2))``; the Gaussian part is 0.
* ``asinh-student-...``: the same with ``asinh`` applied to every coordinate (a diffeomorphism
  of each variable, so ``I`` is unchanged; it tames the tails).
* ``multinormal-sparse-{d}-{d}``: Gaussian with unit variances, ``corr(x_i, y_i) = 0.8`` for
  ``i < 2`` and 0 otherwise (benchmark-mi's latent-variable model with ``lambda = eta = 2``,
  two interacting pairs): ``I = -log(1 - 0.64) = 1.0217`` nats whatever ``d``.
* ``spiral-multinormal-sparse-5-5``: that Gaussian with the "spiral" diffeomorphism
  ``v -> R(||v||^2 s) v`` on each variable, ``R(t)`` the rotation by angle ``t`` in the
  coordinate plane (0, 1) for ``x`` and (1, 2) for ``y``, ``s = 1 / d`` (``I`` unchanged).

Ground truths are computed from these closed forms, not sampled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import digamma, gammaln

from estimators.validation import check_random_state

__all__ = ["Task", "tasks", "student_t_entropy", "student_t_mi"]


@dataclass(frozen=True)
class Task:
    """A distribution of ``(x, y)`` with exactly known ``I(X;Y)`` (nats)."""

    name: str
    dim_x: int
    dim_y: int
    true_nats: float
    draw: Callable[[int, np.random.Generator], tuple]

    def sample(self, n: int, random_state=0) -> tuple[np.ndarray, np.ndarray]:
        """``n`` samples ``(x, y)`` from a seeded stream (``random_state``, default 0)."""
        return self.draw(int(n), check_random_state(random_state))


def student_t_entropy(k: int, df: float) -> float:
    """Differential entropy (nats) of the standard ``k``-dimensional Student-t with ``df``."""
    h = 0.5 * (df + k)
    return float(gammaln(0.5 * df) - gammaln(h) + 0.5 * k * np.log(df * np.pi)
                 + h * (digamma(h) - digamma(0.5 * df)))


def student_t_mi(dim_x: int, dim_y: int, df: float) -> float:
    """``I(X;Y)`` (nats) of a Student-t with identity dispersion split ``dim_x + dim_y``."""
    return (student_t_entropy(dim_x, df) + student_t_entropy(dim_y, df)
            - student_t_entropy(dim_x + dim_y, df))


def _student(dim_x, dim_y, df, transform=None):
    def draw(n, rng):
        scale = np.sqrt(df / rng.chisquare(df, size=(n, 1)))
        v = rng.standard_normal((n, dim_x + dim_y)) * scale
        if transform is not None:
            v = transform(v)
        return v[:, :dim_x], v[:, dim_x:]
    return draw


def _sparse_gaussian(dim_x, dim_y, rho=0.8, pairs=2):
    def draw(n, rng):
        x = rng.standard_normal((n, dim_x))
        y = rng.standard_normal((n, dim_y))
        y[:, :pairs] = rho * x[:, :pairs] + np.sqrt(1 - rho**2) * y[:, :pairs]
        return x, y
    return draw


def _spiral(v: np.ndarray, i: int, j: int, speed: float) -> np.ndarray:
    angle = speed * np.einsum("ij,ij->i", v, v)
    c, s = np.cos(angle), np.sin(angle)
    out = v.copy()
    out[:, i] = c * v[:, i] - s * v[:, j]
    out[:, j] = s * v[:, i] + c * v[:, j]
    return out


def _spiralled(base, dim_x, dim_y):
    def draw(n, rng):
        x, y = base(n, rng)
        return _spiral(x, 0, 1, 1.0 / dim_x), _spiral(y, 1, 2, 1.0 / dim_y)
    return draw


@lru_cache(maxsize=1)
def _all() -> tuple:
    sparse_mi = -np.log(1 - 0.8**2)
    return (
        Task("student-identity-2-2-1", 2, 2, student_t_mi(2, 2, 1), _student(2, 2, 1)),
        Task("student-identity-5-5-2", 5, 5, student_t_mi(5, 5, 2), _student(5, 5, 2)),
        Task("asinh-student-identity-3-3-2", 3, 3, student_t_mi(3, 3, 2),
             _student(3, 3, 2, np.arcsinh)),
        Task("spiral-multinormal-sparse-5-5", 5, 5, sparse_mi,
             _spiralled(_sparse_gaussian(5, 5), 5, 5)),
        Task("multinormal-sparse-5-5", 5, 5, sparse_mi, _sparse_gaussian(5, 5)),
        Task("multinormal-sparse-25-25", 25, 25, sparse_mi, _sparse_gaussian(25, 25)),
    )


def tasks() -> dict[str, Task]:
    """The tasks by name."""
    return {t.name: t for t in _all()}
