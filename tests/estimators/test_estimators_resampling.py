"""Permutation tests and bootstrap intervals: seeded, n_jobs-independent, calibrated; the one
resampling core (stratified resamples, percentile intervals extended to their estimate)."""

from __future__ import annotations

from functools import partial

import joblib
import numpy as np
import pytest

from estimators import bootstrap_ci, mutual_information, permutation_test
from estimators.resampling import bootstrap_indices, bootstrap_interval, contain_estimate


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


def test_stratified_resamples_keep_the_class_counts_and_draw_as_documented():
    y = np.array([2, 0, 1, 0, 2, 2, 1, 0, 0, 1])
    idx = bootstrap_indices(y.size, np.random.default_rng(4), strata=y)
    assert (np.diff(idx) >= 0).all() and np.array_equal(np.bincount(y[idx]), np.bincount(y))
    rng = np.random.default_rng(4)     # one draw per class, classes in sorted order
    by_hand = [rows[rng.integers(0, rows.size, rows.size)]
               for rows in (np.flatnonzero(y == c) for c in (0, 1, 2))]
    assert np.array_equal(idx, np.sort(np.concatenate(by_hand)))
    plain = bootstrap_indices(10, np.random.default_rng(4))
    assert np.array_equal(plain, np.random.default_rng(4).integers(0, 10, 10))
    with pytest.raises(ValueError, match="one value per row"):
        bootstrap_indices(9, np.random.default_rng(0), strata=y)
    with pytest.raises(TypeError, match=r"bootstrap_indices\(len\(y\), rng, strata=y\)"):
        bootstrap_indices(y, np.random.default_rng(0))


def test_contain_estimate_extends_an_interval_and_reports_the_gap():
    assert contain_estimate(0.5, 0.1, 0.3) == (0.1, 0.5, pytest.approx(0.2))
    assert contain_estimate(0.2, 0.1, 0.3) == (0.1, 0.3, 0.0)
    assert contain_estimate(-1.0, 0.1, 0.3)[:2] == (-1.0, 0.3)
    assert contain_estimate(float("nan"), 0.1, 0.3) == (0.1, 0.3, 0.0)   # nothing to contain


def test_bootstrap_interval_contains_the_estimate_and_reports_the_gap():
    dist = np.linspace(1.0, 2.0, 201)
    lo, hi, gap = bootstrap_interval(1.5, dist)
    assert (lo, hi, gap) == pytest.approx((1.025, 1.975, 0.0))
    lo, hi, gap = bootstrap_interval(0.5, dist)         # the replicates' bulk misses it
    assert lo == 0.5 and hi == pytest.approx(1.975) and gap == pytest.approx(0.525)
    lo, hi, gap = bootstrap_interval(0.5, dist, "centred")   # shifted by the bias: contains
    assert lo < 0.5 < hi and gap == 0.0
    with_failed = np.r_[dist, np.nan, np.inf]           # non-finite replicates are failed ones
    assert bootstrap_interval(0.5, with_failed) == bootstrap_interval(0.5, dist)
    assert np.isnan(bootstrap_interval(0.5, np.full(30, np.nan))[:2]).all()
    with pytest.raises(ValueError, match="method must be one of"):
        bootstrap_interval(0.5, dist, "bca")


def test_bands_extend_column_wise_and_rounding_is_no_widening():
    reps = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0]])
    lo, hi, widened = bootstrap_interval([2.0, 5.0], reps)
    np.testing.assert_allclose(lo, [1.05, 0.05])          # 2.5% quantiles (linear)
    np.testing.assert_allclose(hi, [2.95, 5.0])           # 97.5%, the second one extended
    assert widened == pytest.approx(5.0 - 1.95)
    # replicates equal to the estimate up to a few ulps (a constant score, reweighted) are
    # included in the band without counting as a widening when ulps allows for rounding
    est = np.array([0.1 + 0.2, 1.0])
    reps = np.tile([0.3, 1.0], (50, 1))                  # 0.1 + 0.2 != 0.3 in floats
    lo, hi, widened = bootstrap_interval(est, reps, ulps=16)
    assert widened == 0.0 and (lo <= est).all() and (est <= hi).all()
    assert bootstrap_interval(est, reps)[2] > 0          # without the allowance: a gap
