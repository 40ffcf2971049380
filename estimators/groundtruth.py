"""Ground-truth suite: samplers with exactly known information quantities.

Each :class:`Case` has a sampler ``sample(n, rng) -> dict of arrays`` and a tuple of
:class:`Quantity` (a name, the exact value in bits and a function that estimates it from a
sample with any ``method``). Used by the tests and by ``infodiv validate``.

Closed forms (nats before conversion): Gaussian entropy ``(d log(2 pi e) + log det S) / 2``;
MI / CMI / TC from log-determinants of covariance blocks (see :mod:`estimators.gaussian`);
conditional TC given a continuous ``Z`` from the conditional covariance
``S_UU - S_UZ S_ZZ^{-1} S_ZU``; given a discrete ``Y`` as ``sum_y p(y) TC(S_y)``.

Label model (DESIGN 2.5): ``Y = +-1`` equiprobable, ``U_i = mu Y + eps_i`` with iid standard
normal noise. ``sum_i U_i / sqrt(m)`` is sufficient for ``Y`` and equals ``sqrt(m) mu Y`` plus unit
noise, so ``I(U_i;Y) = C(mu)``, ``I(U;Y) = C(sqrt(m) mu)``, ``TC(U|Y) = 0`` and
``TC(U) = m C(mu) - C(sqrt(m) mu)``, with the binary-input Gaussian-channel capacity
``C(a) = log 2 - E_{X ~ N(a, 1)} log(1 + exp(-2 a X))`` computed by quadrature.

XOR: ``U_1, U_2`` iid N(0, 1), ``Y = 1[U_1 U_2 > 0]``: ``I(U_i;Y) = 0``, ``I(U;Y) = 1`` bit
(``Y`` is a function of ``U``), ``TC(U|Y) = 1`` bit (given ``Y`` the signs agree or disagree),
``TC(U) = 0``.

High dimension: 61 scalar Gaussians with pairwise correlation 0.2,
``TC = -(log(1 + 60 rho) + 60 log(1 - rho)) / 2 = 7.81`` bits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import integrate, stats

from estimators.api import conditional_mutual_information, entropy, mutual_information
from estimators.api import total_correlation as _tc

__all__ = ["Quantity", "Case", "cases", "capacity", "gaussian_tc"]

LN2 = np.log(2.0)


@dataclass(frozen=True)
class Quantity:
    """One estimand: ``estimate(data, **kwargs)`` returns bits; ``true_bits`` is exact."""

    name: str
    true_bits: float
    estimate: Callable[..., float]


@dataclass(frozen=True)
class Case:
    """A distribution with a sampler and its exactly known quantities.

    ``methods`` are the estimators expected to be accurate on this case at n of about 2000 (the
    others are still run by ``infodiv validate`` so that their failure is visible: binned
    estimates of several dimensions are dominated by the histogram bias, the Gaussian model
    misses non-Gaussian dependence such as XOR, and kNN TC collapses over 61 variables).
    """

    name: str
    description: str
    sample: Callable[[int, np.random.Generator], dict]
    quantities: tuple
    methods: tuple = ("knn", "gaussian", "copula")


def capacity(a: float) -> float:
    """``C(a) = log 2 - E_{X~N(a,1)} log(1 + e^{-2aX})`` in nats, by adaptive quadrature."""
    f = lambda x: stats.norm.pdf(x, loc=a) * np.logaddexp(0.0, -2.0 * a * x)  # noqa: E731
    value, _ = integrate.quad(f, -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12)
    return float(LN2 - value)


def _ld(cov) -> float:
    return float(np.linalg.slogdet(np.asarray(cov))[1])


def gaussian_tc(cov: np.ndarray, sizes) -> float:
    """Exact TC (nats) of a Gaussian with covariance ``cov`` split into blocks of ``sizes``."""
    edges = np.cumsum([0, *sizes])
    return 0.5 * (sum(_ld(cov[a:b, a:b]) for a, b in zip(edges[:-1], edges[1:])) - _ld(cov))


def _spd(d: int, seed: int) -> np.ndarray:
    """A fixed, well-conditioned covariance matrix with substantial correlations."""
    b = np.random.default_rng(seed).standard_normal((d, d))
    return b @ b.T / d + 0.5 * np.eye(d)


def _gauss_sampler(cov):
    chol = np.linalg.cholesky(cov)
    return lambda n, rng: {"x": rng.standard_normal((n, len(cov))) @ chol.T}


def _blocks(x, sizes):
    edges = np.cumsum([0, *sizes])
    return [x[:, a:b] for a, b in zip(edges[:-1], edges[1:])]


def _gaussian_cases() -> list[Case]:
    out = []
    cov = np.array([[2.0, 0.5, 0.3], [0.5, 1.0, 0.2], [0.3, 0.2, 0.5]])
    out.append(Case("gaussian_entropy", "3-D Gaussian, H(X)", _gauss_sampler(cov), (
        Quantity("H(X)", 0.5 * (3 * np.log(2 * np.pi * np.e) + _ld(cov)) / LN2,
                 lambda d, **kw: entropy(d["x"], **kw)),)))
    cov = _spd(5, 1)
    out.append(Case("gaussian_mi_blocks", "Gaussian blocks X (2-D), Y (3-D)",
                    _gauss_sampler(cov), (
        Quantity("I(X;Y)", gaussian_tc(cov, [2, 3]) / LN2,
                 lambda d, **kw: mutual_information(d["x"][:, :2], d["x"][:, 2:], **kw)),)))
    cov = np.array([[1.0, 1.0, 1.0], [1.0, 4.0, 1.0], [1.0, 1.0, 9.0]])
    cmi = 0.5 * (_ld(cov[np.ix_([0, 2], [0, 2])]) + _ld(cov[1:, 1:]) - _ld(cov) - np.log(9.0))
    out.append(Case("gaussian_cmi", "Gaussian, cov [[1,1,1],[1,4,1],[1,1,9]], I(X;Y|Z)",
                    _gauss_sampler(cov), (
        Quantity("I(X;Y|Z)", cmi / LN2, lambda d, **kw: conditional_mutual_information(
            d["x"][:, 0], d["x"][:, 1], d["x"][:, 2], **kw)),)))
    cov = _spd(8, 2)
    out.append(Case("gaussian_tc_blocks", "Gaussian, 4 blocks of 2 dims, TC(U)",
                    _gauss_sampler(cov), (
        Quantity("TC(U)", gaussian_tc(cov, [2] * 4) / LN2,
                 lambda d, **kw: _tc(_blocks(d["x"], [2] * 4), **kw)),)))
    cov = _spd(7, 3)
    s_uu, s_uz, s_zz = cov[:6, :6], cov[:6, 6:], cov[6:, 6:]
    cond = s_uu - s_uz @ np.linalg.solve(s_zz, s_uz.T)
    out.append(Case("gaussian_ctc_continuous", "Gaussian, 3 blocks of 2 dims given 1-D Z",
                    _gauss_sampler(cov), (
        Quantity("TC(U|Z)", gaussian_tc(cond, [2] * 3) / LN2,
                 lambda d, **kw: _tc(_blocks(d["x"][:, :6], [2] * 3), given=d["x"][:, 6:],
                                     **kw)),)))
    out.append(_conditional_discrete_case())
    return out


def _conditional_discrete_case() -> Case:
    probs = np.array([0.5, 0.3, 0.2])
    covs = [_spd(3, 10 + c) for c in range(3)]
    means = [np.full(3, float(c)) for c in range(3)]
    chols = [np.linalg.cholesky(c) for c in covs]

    def sample(n, rng):
        y = rng.choice(3, size=n, p=probs)
        x = np.empty((n, 3))
        for c in range(3):
            m = y == c
            x[m] = means[c] + rng.standard_normal((m.sum(), 3)) @ chols[c].T
        return {"x": x, "y": y}

    truth = sum(p * gaussian_tc(c, [1, 1, 1]) for p, c in zip(probs, covs)) / LN2
    return Case("gaussian_ctc_discrete", "3 scalars, class-dependent Gaussian given Y (3 classes)",
                sample, (Quantity("TC(U|Y)", truth,
                                  lambda d, **kw: _tc(d["x"], given=d["y"], **kw)),))


def _label_case(mu: float = 0.5, m: int = 4) -> Case:
    def sample(n, rng):
        y = rng.integers(0, 2, size=n)
        return {"u": mu * (2.0 * y - 1.0)[:, None] + rng.standard_normal((n, m)), "y": y}

    c1, cm = capacity(mu), capacity(np.sqrt(m) * mu)
    return Case("label_model", f"Y=+-1, U_i = {mu} Y + N(0,1), {m} variables", sample, (
        Quantity("I(U_1;Y)", c1 / LN2, lambda d, **kw: mutual_information(d["u"][:, 0], d["y"],
                                                                          **kw)),
        Quantity("I(U;Y)", cm / LN2, lambda d, **kw: mutual_information(d["u"], d["y"], **kw)),
        Quantity("TC(U|Y)", 0.0, lambda d, **kw: _tc(d["u"], given=d["y"], **kw)),
        Quantity("TC(U)", (m * c1 - cm) / LN2, lambda d, **kw: _tc(d["u"], **kw)),
    ), methods=("knn",))


def _xor_case() -> Case:
    def sample(n, rng):
        u = rng.standard_normal((n, 2))
        return {"u": u, "y": (u[:, 0] * u[:, 1] > 0).astype(np.int64)}

    return Case("xor", "U1, U2 iid N(0,1), Y = 1[U1 U2 > 0]", sample, (
        Quantity("I(U_1;Y)", 0.0, lambda d, **kw: mutual_information(d["u"][:, 0], d["y"], **kw)),
        Quantity("I(U;Y)", 1.0, lambda d, **kw: mutual_information(d["u"], d["y"], **kw)),
        Quantity("TC(U|Y)", 1.0, lambda d, **kw: _tc(d["u"], given=d["y"], **kw)),
        Quantity("TC(U)", 0.0, lambda d, **kw: _tc(d["u"], **kw)),
    ), methods=("knn",))


def _highdim_case(m: int = 61, rho: float = 0.2) -> Case:
    cov = np.full((m, m), rho) + (1 - rho) * np.eye(m)
    truth = -0.5 * (np.log1p((m - 1) * rho) + (m - 1) * np.log1p(-rho)) / LN2
    return Case("highdim_tc", f"{m} scalar Gaussians, pairwise correlation {rho}",
                _gauss_sampler(cov), (
        Quantity("TC(U)", truth, lambda d, **kw: _tc(d["x"], **kw)),),
                methods=("gaussian", "copula"))


@lru_cache(maxsize=1)
def _all_cases() -> tuple:
    return tuple(_gaussian_cases() + [_label_case(), _xor_case(), _highdim_case()])


def cases() -> dict[str, Case]:
    """All ground-truth cases by name (closed forms computed once)."""
    return {c.name: c for c in _all_cases()}
