"""Permutation tests and bootstrap intervals: seeded, n_jobs-independent, calibrated."""

from __future__ import annotations

from functools import partial

import joblib
import numpy as np
import pytest

from estimators import bootstrap_ci, mutual_information, permutation_test


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 2))
    y = x[:, :1] + rng.standard_normal((400, 1))
    labels = (x[:, 0] + rng.standard_normal(400) > 0).astype(np.int64)
    return x, y, labels


def test_permutation_detects_dependence_and_respects_null(data):
    x, y, labels = data
    stat = partial(mutual_information, method="gaussian")
    res = permutation_test(stat, x, labels, n_permutations=99, random_state=0)
    assert res.pvalue == pytest.approx(1 / 100)  # nothing in the null reaches the observed MI
    assert res.statistic > res.null_distribution.max()
    # independent data: p-values are (about) uniform over 40 data sets
    pvalues = []
    for seed in range(40):
        noise = np.random.default_rng(100 + seed).integers(0, 2, 400)
        null = permutation_test(stat, x, noise, n_permutations=39, random_state=seed)
        pvalues.append(null.pvalue)
    pvalues = np.asarray(pvalues)
    assert 0.35 < pvalues.mean() < 0.65  # uniform: 0.5 +- 0.046 (1 sd)
    assert np.mean(pvalues <= 0.1) < 0.25  # expected 0.1


def test_results_do_not_depend_on_n_jobs(data):
    x, _, labels = data
    stat = partial(mutual_information, method="knn")  # takes random_state: seeded per replicate
    a = permutation_test(stat, x, labels, n_permutations=16, random_state=5, n_jobs=1)
    with joblib.parallel_config(backend="threading"):  # no process start-up in the test suite
        b = permutation_test(stat, x, labels, n_permutations=16, random_state=5, n_jobs=2)
    assert np.array_equal(a.null_distribution, b.null_distribution)
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    c = bootstrap_ci(stat, x, labels, n_resamples=8, random_state=5, n_jobs=1)
    with joblib.parallel_config(backend="threading"):
        d = bootstrap_ci(stat, x, labels, n_resamples=8, random_state=5, n_jobs=3)
    assert np.array_equal(c.distribution, d.distribution)
    e = bootstrap_ci(stat, x, labels, n_resamples=8, random_state=6, n_jobs=1)
    assert not np.array_equal(c.distribution, e.distribution)


def test_bootstrap_interval_covers_truth(data):
    rng = np.random.default_rng(3)
    cov = np.array([[1.0, 0.6], [0.6, 1.0]])
    xy = rng.multivariate_normal([0, 0], cov, size=1000)
    truth = -0.5 * np.log2(1 - 0.36)
    stat = partial(mutual_information, method="gaussian")
    res = bootstrap_ci(stat, xy[:, 0], xy[:, 1], n_resamples=300, random_state=0)
    assert res.low < truth < res.high
    assert res.low < res.statistic < res.high
    # the standard error matches the asymptotic one of -log(1 - r^2)/2: |rho| / sqrt(n) nats
    assert res.standard_error == pytest.approx(0.6 / np.sqrt(1000) / np.log(2), rel=0.2)


def test_bad_arguments(data):
    x, y, _ = data
    stat = partial(mutual_information, method="gaussian")
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_test(stat, x, y, n_permutations=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(stat, x, y, confidence=1.5)
    with pytest.raises(ValueError, match="arrays\\[0\\] has 400 samples but arrays\\[1\\] has 3"):
        bootstrap_ci(stat, x, y[:3])
    with pytest.raises(ValueError, match="alternative"):
        permutation_test(stat, x, y, alternative="bigger")
