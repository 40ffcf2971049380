"""No impossible number leaves the estimators without a toolkit warning or an exact value:
a single member's decomposition is exact (D = 0, R = I), a continuous entropy that is −∞
(constant column, linearly dependent columns) warns, squared-loss terms whose squares overflow
warn. Each README promise about an EstimatorWarning has a test here or in
test_estimator_warnings.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import estimators as E
from estimators.diagnostics import EstimatorWarning


def _members(n=300, m=1, c=4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    u = rng.normal(size=(n, m, c)) + (y[:, None, None] == np.arange(c))
    return u, y


def test_one_member_decomposition_is_exact():
    u, y = _members()
    d = E.information_decomposition(u, y, random_state=0)
    assert d.diversity == 0.0 and d.diversity_interval == (0.0, 0.0)
    assert d.relevancy == d.joint and d.relevancies == (d.joint,)
    assert d.relevancy_interval == tuple(d.joint_interval)
    assert np.all(d.diversity_pointwise == 0)
    # the joint is the usable-information estimate of that member (same fit, same value)
    ui = E.usable_information(u, y, random_state=0)
    assert d.joint == pytest.approx(ui.estimate, abs=1e-12)
    # two members: D is estimated, not forced
    u2, y2 = _members(m=2)
    assert E.information_decomposition(u2, y2, random_state=0).diversity != 0.0


@pytest.mark.parametrize("method", ["gaussian", "knn", "binned"])
def test_entropy_of_linearly_dependent_columns_warns(method):
    x = np.random.default_rng(0).normal(5, 3, 2000)
    with pytest.warns(EstimatorWarning, match=r"x: column 1 is an exact linear function .*"
                                              r"differential entropy is −∞"):
        E.entropy(np.c_[x, 2 * x + 1], method=method)


@pytest.mark.parametrize("method", ["gaussian", "knn"])
def test_entropy_of_a_constant_warns(method):
    x = np.c_[np.zeros(500), np.random.default_rng(1).normal(size=500)]
    with pytest.warns(EstimatorWarning, match=r"x: column 0 is constant \(0 in all n=500 "
                                              r"samples\).*−∞"):
        E.entropy(x, method=method)


def test_a_gaussian_entropy_is_right_and_silent():
    x = np.random.default_rng(2).normal(5, 3, 4000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        h = E.entropy(x, method="gaussian")
        h2 = E.entropy(np.c_[x, np.random.default_rng(3).normal(size=4000)], method="knn")
    assert h == pytest.approx(0.5 * np.log2(2 * np.pi * np.e * 9), abs=0.05)
    assert h2 == pytest.approx(0.5 * np.log2(2 * np.pi * np.e * 9)
                               + 0.5 * np.log2(2 * np.pi * np.e), abs=0.1)


def test_bias_diversity_beyond_1e154_warns_and_is_fine_below():
    u, y = _members(n=50, m=3)
    with pytest.warns(EstimatorWarning, match=r"u: magnitude .*e\+200 is beyond about 1e154"):
        with np.errstate(over="ignore"):
            E.bias_diversity(u * 1e200, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = E.bias_diversity(u * 1e100, y)
    assert np.isfinite(r.loss) and r.loss > 1e190   # squares of ~1e100 logits: finite
    # cross-entropy stays finite at any scale and does not warn about squares
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        assert np.isfinite(E.bias_diversity(u * 1e200, y, loss="cross_entropy").loss)
