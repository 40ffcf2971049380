"""ennemi's analytic unit-test cases (tests/unit/test_entropy_estimators.py of ennemi 1.5, MIT),
run through infodiv's public estimators at ennemi's own seeds, sample sizes, k and tolerances.

Each case is ``Case(name, estimate, expected, delta, check)``: ``estimate(preprocess)`` returns
infodiv's value in nats (``preprocess`` as in the estimators; entropies take ``"rank"`` as
their default, since they refuse the rank transform),
and the case passes when ``check`` holds: ``"close"``: ``|value - expected| <= delta``;
``"close_clamped"``: ``|max(value, 0) - expected| <= delta`` (ennemi's independence checks);
``"less"``: ``value < expected`` (``expected`` is then the other estimate minus a margin).
Used by tests/estimators/test_ennemi_cases.py and benchmarks/bench_bmi.py (pass counts per
preprocess).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import log

import numpy as np
from scipy.special import gamma, psi
from scipy.stats import gamma as gamma_dist

from estimators import conditional_mutual_information, entropy, mutual_information


@dataclass(frozen=True)
class Case:
    name: str
    estimate: object
    expected: float
    delta: float
    check: str = "close"

    def value(self, preprocess=None) -> float:
        return float(self.estimate(preprocess))

    def passes(self, value: float) -> bool:
        if self.check == "less":
            return value < self.expected
        v = max(value, 0.0) if self.check == "close_clamped" else value
        return abs(v - self.expected) <= self.delta


def _h(x, pre, k=3):
    return entropy(x, k=k, base="e", preprocess=None if pre == "rank" else pre)


def _mi(x, y, pre, k=3):
    return mutual_information(x, y, k=k, base="e", preprocess=pre, method="knn")


def _cmi(x, y, z, pre, k=3):
    return conditional_mutual_information(x, y, z, k=k, base="e", preprocess=pre, method="knn")


def _codes(y):
    """Discrete labels of any values as int64 codes (ennemi accepts any dtype)."""
    return np.unique(np.asarray(y), return_inverse=True)[1].reshape(-1).astype(np.int64)


def _entropy_cases():
    out = []
    for sd, n, k, delta in [(1, 100, 2, 0.2), (1, 200, 3, 0.05), (1, 2000, 3, 0.02),
                            (0.5, 2000, 3, 0.02), (2.0, 2000, 1, 0.002), (2.0, 2000, 3, 0.02),
                            (2.0, 2000, 30, 0.02)]:
        x = np.random.default_rng(0).normal(0, sd, size=n)
        out.append(Case(f"entropy/gaussian sd={sd} n={n} k={k}", lambda p, x=x, k=k: _h(x, p, k),
                        0.5 * log(2 * math.pi * math.e * sd**2), delta))
    for a, b, n, k, delta in [(0, 1, 1000, 3, 0.05), (1, 2, 1000, 3, 0.05), (-1, 1, 1000, 3, 0.05),
                              (-0.1, 0.1, 1000, 3, 0.05)]:
        x = np.random.default_rng(1).uniform(a, b, size=n)
        out.append(Case(f"entropy/uniform [{a},{b}]", lambda p, x=x, k=k: _h(x, p, k), log(b - a),
                        delta))
    for rho, var1, n, k, delta in [(0, 1, 200, 3, 0.09), (0, 2, 2000, 3, 0.03),
                                   (0.2, 1, 2000, 3, 0.03), (0.2, 2, 2000, 5, 0.03),
                                   (0.6, 1, 2000, 1, 0.02), (0.6, 0.5, 2000, 3, 0.04),
                                   (0.9, 1, 2000, 3, 0.04), (-0.5, 1, 2000, 5, 0.03)]:
        cov = np.array([[var1, rho], [rho, 1]])
        data = np.random.default_rng(2).multivariate_normal([0, 0], cov, size=n)
        out.append(Case(f"entropy/bivariate rho={rho} var1={var1} n={n} k={k}",
                        lambda p, d=data, k=k: _h(d, p, k),
                        0.5 * log(np.linalg.det(2 * math.pi * math.e * cov)), delta))
    cov = np.array([[1.0, 0.5, 0.6, -0.2], [0.5, 1.0, 0.7, -0.5], [0.6, 0.7, 2.0, -0.1],
                    [-0.2, -0.5, -0.1, 0.5]])
    data = np.random.default_rng(3).multivariate_normal([0] * 4, cov, size=2000)
    out.append(Case("entropy/4-D gaussian", lambda p: _h(data, p),
                    0.5 * log(np.linalg.det(2 * math.pi * math.e * cov)), 0.05))
    rng = np.random.default_rng(4)
    r, s, t = 1.2, 3.4, 0.56
    x1 = rng.gamma(shape=s, scale=1 / r, size=1000)
    ge = np.asarray([x1, rng.exponential(x1 * t)]).T
    expected = 1 + s - s * psi(s) + log(gamma(s)) - log(t)
    out.append(Case("entropy/gamma-exponential raw", lambda p: _h(ge, p), expected, 0.65))
    out.append(Case("entropy/gamma-exponential log", lambda p: _h(np.log(ge), p), expected, 0.01))
    return out


def _mi_cases():
    out = []
    for rho, n, k, delta in [(0, 40, 3, 0.1), (0, 200, 3, 0.06), (0, 2000, 3, 0.005),
                             (0, 2000, 5, 0.006), (0, 2000, 20, 0.003), (0.5, 200, 3, 0.05),
                             (0.5, 200, 5, 0.02), (0.5, 2000, 3, 0.02), (-0.9, 200, 3, 0.05),
                             (-0.9, 2000, 3, 0.05), (-0.9, 2000, 5, 0.02)]:
        d = np.random.default_rng(0).multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
        out.append(Case(f"mi/bivariate rho={rho} n={n} k={k}",
                        lambda p, d=d, k=k: _mi(d[:, 0], d[:, 1], p, k),
                        -0.5 * log(1 - rho**2), delta))
    for a, b in [(1, 2), (0.2, 0.3), (3, 3.1)]:
        rng = np.random.default_rng(20200302)
        x = rng.exponential(1 / a, 1000)
        y = x + rng.exponential(1 / b, 1000)
        out.append(Case(f"mi/sum of exponentials a={a} b={b}",
                        lambda p, x=x, y=y: _mi(x, y, p, 5),
                        np.euler_gamma + log((b - a) / a) + psi(b / (b - a)), 0.025))
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.0, 1.0, 1024), rng.uniform(0.0, 1.0, 1024)
    out.append(Case("mi/independent uniform", lambda p: _mi(x, y, p, 8), 0.0, 0.04))
    out.append(Case("mi/independent uniform symmetric",
                    lambda p: _mi(x, y, p, 8) - _mi(y, x, p, 8), 0.0, 1e-5))
    rng = np.random.default_rng(1)
    xt, yt = rng.uniform(0.0, 10.0, 1024), np.exp(rng.uniform(0.0, 1.0, 1024))
    out.append(Case("mi/independent transformed uniform", lambda p: _mi(xt, yt, p, 8), 0.0, 0.02))
    rng = np.random.default_rng(2)
    r, s, t = 1.2, 3.4, 0.56
    x1 = rng.gamma(shape=s, scale=1 / r, size=1000)
    x2 = rng.exponential(x1 * t)
    expected = psi(s) - np.log(s) + 1 / s
    out.append(Case("mi/gamma-exponential raw", lambda p: _mi(x1, x2, p), expected, 0.04))
    out.append(Case("mi/gamma-exponential log", lambda p: _mi(np.log(x1), np.log(x2), p),
                    expected, 0.005))
    return out


def _cmi_cases():
    out = []
    for rho, n, k, delta in [(0.5, 200, 3, 0.03), (0.75, 400, 3, 0.01), (-0.9, 4000, 5, 0.03)]:
        rng = np.random.default_rng(0)
        d = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
        c = rng.uniform(0, 1, size=n)
        out.append(Case(f"cmi/gaussian, independent condition rho={rho} n={n}",
                        lambda p, d=d, c=c, k=k: _cmi(d[:, 0], d[:, 1], c, p, k),
                        -0.5 * log(1 - rho**2), delta))
    d = np.random.default_rng(4).multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=314)
    out.append(Case("cmi/condition equal to y", lambda p: _cmi(d[:, 0], d[:, 1], d[:, 1], p, 4),
                    0.0, 0.001))
    d3 = np.random.default_rng(5).multivariate_normal([0] * 3, [[1, 1, 1], [1, 4, 1], [1, 1, 9]],
                                                      size=1000)
    out.append(Case("cmi/three gaussians", lambda p: _cmi(d3[:, 0], d3[:, 1], d3[:, 2], p),
                    0.5 * (log(8) + log(35) - log(9) - log(24)), 0.025))
    cov = np.array([[1, 0, 2, 1], [0, 6, 1, 2], [2, 1, 5, 2], [1, 2, 2, 2]])
    d4 = np.random.default_rng(25).multivariate_normal([0] * 4, cov, size=8000)
    d4 = d4 / np.sqrt(np.var(d4, axis=0))
    out.append(Case("cmi/four gaussians", lambda p: _cmi(d4[:, 0], d4[:, 1], d4[:, 2:], p),
                    0.64964, 0.04))
    return out


def _semidiscrete_cases():
    out = []
    for count, n, k, delta in [(2, 200, 3, 0.04), (2, 400, 1, 0.02), (2, 400, 3, 0.02),
                               (2, 800, 8, 0.02), (4, 2000, 2, 0.01)]:
        rng = np.random.default_rng(50)
        x = rng.normal(0.0, 1.0, size=n)
        y = rng.choice(np.arange(count), size=n)
        out.append(Case(f"mixed mi/independent {count} levels n={n} k={k}",
                        lambda p, x=x, y=y, k=k: _mi(x, y, p, k), 0.0, delta, "close_clamped"))
    for levels, name, expected in [([0, 2], "two", log(2)), ([0, 2, 5], "three", log(3))]:
        rng = np.random.default_rng(51)
        y = rng.choice(levels, size=800)
        x = rng.uniform(y, y + 1)
        out.append(Case(f"mixed mi/{name} disjoint uniforms",
                        lambda p, x=x, y=y: _mi(x, _codes(y), p), expected, 0.02))
    rng = np.random.default_rng(52)
    y = rng.choice([0, 0.7, 0.7], size=2000)
    x = rng.uniform(y, y + 1)
    out.append(Case("mixed mi/two overlapping uniforms", lambda p: _mi(x, _codes(y), p),
                    log(3) * 7 / 30 + log(1) * 9 / 30 + log(3 / 2) * 14 / 30, 0.05))
    return out


def _conditional_semidiscrete_cases():
    out = []
    for count, n, k, delta in [(2, 200, 3, 0.02), (2, 400, 1, 0.05), (2, 400, 3, 0.02),
                               (2, 800, 8, 0.02), (4, 2000, 2, 0.02)]:
        rng = np.random.default_rng(50)
        x = rng.normal(0.0, 1.0, size=n)
        y = rng.choice(np.arange(count), size=n)
        z = rng.normal(0.0, 1.0, size=n)
        out.append(Case(f"mixed cmi/independent {count} levels n={n} k={k}",
                        lambda p, x=x, y=y, z=z, k=k: _cmi(x, y, z, p, k), 0.0, delta,
                        "close_clamped"))
    rng = np.random.default_rng(51)
    y = rng.choice([0, 2], size=800)
    x = rng.uniform(y, y + 1)
    z = rng.beta(2, 3, size=800)
    out.append(Case("mixed cmi/irrelevant condition", lambda p: _cmi(x, _codes(y), z, p),
                    log(2), 0.02))
    rng = np.random.default_rng(52)
    xs = rng.normal(0.0, 1.0, size=800)
    ys = _codes(np.sign(xs))
    out.append(Case("mixed cmi/condition equal to x: I(X;Y)", lambda p: _mi(xs, ys, p), log(2),
                    0.01))
    out.append(Case("mixed cmi/condition equal to x: I(X;Y|X)", lambda p: _cmi(xs, ys, xs, p),
                    0.0, 0.02))
    rng = np.random.default_rng(53)
    xa = rng.normal(0.0, 1.0, size=1500)
    ya = rng.normal(0.0, 0.3, size=1500)
    za, wa = xa + ya, _codes(np.sign(xa))
    out.append(Case("mixed cmi/condition increases: I(Z;W) < I(X;W) - 0.2",
                    lambda p: _mi(za, wa, p) - _mi(xa, wa, p), -0.2, 0.0, "less"))
    out.append(Case("mixed cmi/condition increases: I(X;W)", lambda p: _mi(xa, wa, p), log(2),
                    0.01))
    out.append(Case("mixed cmi/condition increases: I(Z;W|Y)", lambda p: _cmi(za, wa, ya, p),
                    log(2), 0.02))
    rng = np.random.default_rng(54)
    xg = rng.gamma(shape=1.5, scale=1.0, size=2000)
    zg = rng.normal(size=xg.shape)
    wg = xg + zg
    yg = np.zeros(xg.shape, dtype=np.int64)
    yg[xg < 0.5] = 1
    yg[xg > 2.0] = 4
    p_low, p_high = gamma_dist.cdf(0.5, a=1.5), 1 - gamma_dist.cdf(2.0, a=1.5)
    p_mid = 1 - p_low - p_high
    expected = -log(p_low) * p_low - log(p_mid) * p_mid - log(p_high) * p_high
    out.append(Case("mixed cmi/multiple levels: I(W;Y) < I(W;Y|Z) - 0.6",
                    lambda p: _mi(wg, yg, p, 1) - _cmi(wg, yg, zg, p, 1), -0.6, 0.0, "less"))
    out.append(Case("mixed cmi/multiple levels: I(W;Y|Z)", lambda p: _cmi(wg, yg, zg, p, 1),
                    expected, 0.06))
    return out


def cases() -> list[Case]:
    """All of ennemi's cases written here, in ennemi's order."""
    return (_entropy_cases() + _mi_cases() + _cmi_cases() + _semidiscrete_cases()
            + _conditional_semidiscrete_cases())
