"""method="lnc": the local non-uniformity correction of Gao, Ver Steeg & Galstyan (2015).

Tolerances come from the spread over seeds measured in the test itself: on strongly dependent
pairs LNC must remove most of KSG's error (at most a quarter of it left) by a margin of many
seed standard deviations; on independent data it must not move the estimate by more than half
of KSG's own seed-to-seed standard deviation.
"""

import sys

import numpy as np
import pytest
from _paths import ROOT
from scipy.spatial import cKDTree

from estimators import conditional_mutual_information, mutual_information, total_correlation
from estimators import lnc as lnc_module
from estimators._neighbors import nearest_indices
from estimators.diagnostics import EstimatorWarning

sys.path.insert(0, str(ROOT / "benchmarks"))
from _npeet import load_npeet  # noqa: E402

N, K, SEEDS = 1000, 8, 4


def _gaussian_pair(rho, n, seed, d=1):
    cov = np.eye(2 * d)
    for i in range(d):
        cov[i, d + i] = cov[d + i, i] = rho
    z = np.random.default_rng(seed).multivariate_normal(np.zeros(2 * d), cov, n)
    return z[:, :d], z[:, d:]


def _uniform_band(a, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 1))
    return x, x + a * rng.uniform(size=(n, 1))


def _estimates(sample, method, **kw):
    return np.array([mutual_information(*sample(s), method=method, k=K, base="e",
                                        random_state=s, **kw) for s in range(SEEDS)])


@pytest.mark.parametrize("case", ["gaussian", "uniform_band"])
def test_lnc_removes_most_of_ksg_error_under_strong_dependence(case):
    if case == "gaussian":  # rho = 0.999999: I = -log(1 - rho^2) / 2
        rho = 0.999999
        truth = -0.5 * np.log1p(-rho**2)
        sample = lambda s: _gaussian_pair(rho, N, s)  # noqa: E731
    else:  # X ~ U(0, 1), Y = X + U(0, a): I = h(Y) - log a = a / 2 - log a
        a = 1e-3
        truth = a / 2 - np.log(a)
        sample = lambda s: _uniform_band(a, N, s)  # noqa: E731
    ksg = _estimates(sample, "knn", preprocess="standardize")
    lnc = _estimates(sample, "lnc")
    err_ksg, err_lnc = abs(ksg.mean() - truth), abs(lnc.mean() - truth)
    spread = ksg.std(ddof=1) + lnc.std(ddof=1)
    assert err_ksg > 1.0  # KSG saturates here (about 1.9 nats below the truth)
    assert err_lnc < 0.25 * err_ksg
    assert err_ksg - err_lnc > 10 * spread


@pytest.mark.parametrize("d", [1, 2])
def test_lnc_adds_no_bias_beyond_ksg_spread_on_independent_data(d):
    seeds = 8

    def sample(s):
        return _gaussian_pair(0.0, N, 100 + s, d=d)

    ksg = np.array([mutual_information(*sample(s), k=K, base="e", random_state=s,
                                       preprocess="standardize") for s in range(seeds)])
    lnc = np.array([mutual_information(*sample(s), method="lnc", k=K, base="e",
                                       random_state=s) for s in range(seeds)])
    assert np.all(lnc >= ksg)  # the correction can only raise the estimate
    assert (lnc - ksg).mean() <= 0.5 * ksg.std(ddof=1)


def test_calibrated_alpha_bounds_the_bias_on_uniform_neighbourhoods():
    for k, d in [(3, 2), (8, 2), (6, 4), (20, 10)]:  # (20, 10): all ratios < 1 fit the bound
        alpha = lnc_module.calibrated_alpha(k, d)
        assert 0 < alpha < 1
        assert lnc_module.calibrated_alpha(k, d) == alpha  # seeded: the same every time
        capped = alpha == np.nextafter(1.0, 0.0)  # (20, 10): every ratio below 1 corrected
        assert capped == (k == 20)
        assert capped or lnc_module.calibrated_alpha(k, d, bias=0.01) > alpha
    # a fresh uniform sample (not the calibration draws): the added bias stays near the bound
    points = np.random.default_rng(7).uniform(size=(20000, 2))
    terms = lnc_module.correction_terms(points, 8, lnc_module.calibrated_alpha(8, 2))
    assert 0 < -terms.mean() < 3 * lnc_module.UNIFORM_BIAS


def test_exactly_collinear_neighbourhoods_are_left_uncorrected():
    t = np.random.default_rng(0).standard_normal((50, 8, 1))
    line = np.concatenate([t, 3 * t], axis=2)  # 8 offsets on one line in 2-D: Vbar is noise
    band = line + 1e-6 * np.random.default_rng(1).standard_normal(line.shape)
    assert np.isnan(lnc_module.log_volume_ratio(line)).all()
    assert (lnc_module.log_volume_ratio(band) < -5).all()  # a real thin band is corrected


def test_lnc_is_seeded_and_tc_of_two_blocks_is_mi():
    x, y = _gaussian_pair(0.99, 500, 3)
    a = mutual_information(x, y, method="lnc", k=5, random_state=4)
    assert a == mutual_information(x, y, method="lnc", k=5, random_state=4)
    assert total_correlation([x, y], method="lnc", k=5, random_state=4) == pytest.approx(a)
    labels = (x[:, 0] > 0).astype(np.int64)
    ctc = total_correlation([x, y], given=labels, method="lnc", k=5)
    assert np.isfinite(ctc) and ctc > 0


def test_lnc_validates_k_alpha_and_scope():
    x, y = _gaussian_pair(0.5, 300, 0, d=2)
    with pytest.raises(ValueError, match=r"k=3 .* d=4"):
        mutual_information(x, y, method="lnc", k=3)
    for bad in (0, 1, 1.5, -0.1, True, "0.1"):
        with pytest.raises(ValueError, match="alpha"):
            mutual_information(x, y, method="lnc", k=4, alpha=bad)
    with pytest.raises(ValueError, match="method='lnc'"):
        mutual_information(x, (y[:, 0] > 0).astype(np.int64), method="lnc", k=4)
    with pytest.raises(ValueError, match="method='lnc'"):
        conditional_mutual_information(x[:, :1], y[:, :1], x[:, 1:], method="lnc", k=4)
    with pytest.raises(TypeError, match="does not take"):
        mutual_information(x, y, method="lnc", k=4, correction="lnc")


def test_lnc_warns_that_it_overcorrects_above_ten_dimensions():
    x, y = _gaussian_pair(0.5, 200, 0, d=6)
    with pytest.warns(EstimatorWarning, match="overcorrects"):
        mutual_information(x, y, method="lnc", k=12)


def test_information_terms_do_not_offer_lnc():
    from infodiv.commands.choices import info_method_names

    assert "lnc" not in info_method_names() and {"knn", "chain", "gaussian"} <= set(
        info_method_names())


def test_nearest_indices_brute_force_matches_tree():
    points = np.random.default_rng(1).standard_normal((400, 12))  # above TREE_MAX_DIMS
    _, expected = cKDTree(points).query(points, k=6, p=np.inf)
    assert np.array_equal(nearest_indices(points, 5), expected[:, 1:])


ee, WHICH = load_npeet()


@pytest.mark.skipif(ee is None, reason=WHICH)
@pytest.mark.parametrize("d", [1, 2])
def test_lnc_equals_npeet_lnc_with_the_same_alpha(d):
    x, y = _gaussian_pair(0.9999, 2000, 0, d=d)
    z = np.hstack([x, y])
    z = (z - z.mean(axis=0)) / z.std(axis=0)  # standardised: both see the same neighbours
    x, y = z[:, :d], z[:, d:]
    for alpha in (0.1, 0.3):
        np.random.seed(0)  # noqa: NPY002 - NPEET draws its noise from the global RNG
        theirs = ee.mi(x, y, k=5, base=np.e, alpha=alpha)
        ours = mutual_information(x, y, method="lnc", k=5, alpha=alpha, base="e",
                                  preprocess="standardize")
        assert ours == pytest.approx(theirs, abs=1e-7)
