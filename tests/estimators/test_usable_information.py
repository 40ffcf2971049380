"""Usable information about a label: accuracy on known cases, H(Y) cap, bracket, no optimism
of the nested selection, relevancy-sum bias, defaults and warnings."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

from estimators import (
    LabelDecomposition,
    _logistic,
    information_decomposition,
    mutual_information,
    usable_information,
)
from estimators.diagnostics import EstimatorWarning
from estimators.groundtruth import cases
from estimators.members_truth import tolerance


def _label_model(n, seed):
    case = cases()["label_model"]
    d = case.sample(n, np.random.default_rng(seed))
    return d["u"], d["y"], case.quantities[1].true_bits  # I(U;Y) = 0.486 bits


def test_label_model_within_tolerance_and_bracket_holds_truth():
    u, y, truth = _label_model(1000, 0)
    r = usable_information(u, y)
    assert abs(r.estimate - truth) <= tolerance(truth)
    assert r.lower <= truth <= r.upper
    assert r.estimate <= r.h_y and r.interval[1] <= r.h_y and r.upper <= r.h_y
    # the estimate is the mean of the per-example held-out terms, recomputed here
    assert r.estimate == pytest.approx(r.pointwise.mean(), abs=1e-12)
    assert r.h_y == pytest.approx(scipy_entropy(np.bincount(y), base=2), abs=1e-12)


def test_never_above_label_entropy_on_near_deterministic_members():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 600)
    u = np.eye(4)[y][:, None, :] * 20.0 + 1e-3 * rng.standard_normal((600, 3, 4))
    r = usable_information(u, y)
    assert r.estimate <= r.h_y and r.interval[1] <= r.h_y and r.upper <= r.h_y
    assert r.estimate > 0.9 * r.h_y  # and it finds almost all of it


def test_nested_selection_is_not_optimistic_on_noise():
    # the chosen procedure is scored only on folds its choice never saw; choosing the best
    # family per held-out example instead (an oracle) makes this test fail
    selected = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x, y = rng.standard_normal((300, 3)), rng.integers(0, 2, 300)
        r = usable_information(x, y, random_state=seed, bracket=False)
        selected.append(r.estimate)
        assert set(r.family_values) == {"logistic", "logistic_rank", "knn"}
    assert np.mean(selected) <= 0.002          # no information found in noise on average


def test_entropy_at_least_twice_gini_on_random_pmfs():
    # the inequality behind the upper bound of estimators.bayes_bounds
    rng = np.random.default_rng(0)
    for k in (2, 3, 4, 8):
        for a in (0.1, 1.0, 5.0):
            p = rng.dirichlet(np.full(k, a), size=20000)
            h = scipy_entropy(p.T, base=2)
            assert np.all(h >= 2 * (1 - (p ** 2).sum(axis=1)) - 1e-12)


def test_batched_newton_matches_unpenalised_maximum_likelihood():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 3))
    y = (x @ rng.standard_normal((3, 4)) + rng.gumbel(size=(500, 4))).argmax(axis=1)
    w = _logistic.fit(x[None], np.eye(4)[y][None], 1e-9)
    ref = LogisticRegression(C=1e9, max_iter=5000, tol=1e-12).fit(x, y).predict_log_proba(x)
    assert np.abs(_logistic.log_proba(w, x[None])[0] - ref).max() < 1e-5


def _null_members(n=500, m=20, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, m, 2)), rng.integers(0, 2, n)


def test_relevancy_sum_bias_is_removed_by_the_label_null():
    # raw sum: 20 learning costs of about 3 / (2 * 400) nats each; the debiased sum has a
    # sampling sd of about 0.024 bits per draw (20 draws), so 6 draws average to within 0.02
    raw, debiased = [], []
    for seed in range(6):
        u, y = _null_members(seed=seed)
        dec = information_decomposition(u, y, n_null=2, random_state=seed)
        assert dec.relevancy == pytest.approx(dec.relevancy_raw - 20 * dec.member_null_mean)
        raw.append(dec.relevancy_raw)
        debiased.append(dec.relevancy)
    assert np.mean(raw) < -0.05
    assert abs(np.mean(debiased)) < 0.02


def test_diversity_is_the_identity_with_a_paired_interval():
    u, y = _null_members(m=4)
    u[:, :, 0] += 0.8 * y[:, None]
    dec = information_decomposition(u, y, null_permutations=1)
    assert isinstance(dec, LabelDecomposition) and dec.method == "usable"
    assert dec.diversity == pytest.approx(dec.joint - dec.relevancy, abs=1e-12)
    assert dec.relevancy == pytest.approx(sum(dec.relevancies), abs=1e-12)
    lo, hi = dec.diversity_interval
    assert lo < dec.diversity < hi
    assert len(dec.diversity_null) == 1 and abs(dec.diversity_null[0]) < 0.1
    assert "paired bootstrap" in dec.table()


def test_defaults_dispatch_to_usable_information():
    u, y, _ = _label_model(400, 2)
    assert mutual_information(u, y) == usable_information(u, y).estimate
    assert mutual_information(y, u) == usable_information(u, y).estimate
    assert mutual_information(u, y, method="knn") != mutual_information(u, y)
    members = u.reshape(400, 2, 2)
    assert information_decomposition(members, y).joint == usable_information(
        members, y, random_state=np.random.default_rng(0)).estimate


def test_validation_messages_name_labels():
    rng = np.random.default_rng(0)
    u = rng.standard_normal((40, 2, 2))
    with pytest.raises(ValueError, match="labels has 39"):
        information_decomposition(u, rng.integers(0, 2, 39), method="gaussian")
    with pytest.raises(ValueError, match="labels has 39"):
        information_decomposition(u, rng.integers(0, 2, 39))
    y = np.r_[np.zeros(37, dtype=int), np.ones(3, dtype=int)]
    with pytest.raises(ValueError, match="class 1 of labels has 3 samples"):
        information_decomposition(u, y, method="gaussian")
    with pytest.raises(ValueError, match="labels: class 1 has 3 samples"):
        information_decomposition(u, y)


def test_gaussian_above_label_entropy_warns():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    x = np.c_[y + 0.01 * rng.standard_normal(1000), rng.standard_normal(1000)]
    with pytest.warns(EstimatorWarning, match="above H\\(Y\\)"):
        value = mutual_information(x, y, method="gaussian")
    assert value > 1.0
    with pytest.warns(EstimatorWarning, match="above H\\(Y\\)"):
        information_decomposition(x.reshape(1000, 2, 1), y, method="gaussian")


def test_own_family_is_the_model_output_with_its_bias():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 600)
    u = 0.7 * np.eye(3)[y][:, None, :] + rng.standard_normal((600, 4, 3))
    bias = np.array([0.5, -0.2, 0.1])
    r = usable_information(u, y, families=["own"], bias=bias, bracket=False)
    z = u.sum(axis=1) + bias
    logq = z[np.arange(600), y] - np.log(np.exp(z).sum(axis=1))
    p = np.bincount(y) / 600
    expected = -(p * np.log2(p)).sum() + logq.mean() / np.log(2)
    assert r.estimate == pytest.approx(expected, abs=1e-10)
    assert r.folds == ("own",) * 5


def test_upper_side_is_the_label_entropy_above_the_1nn_dimension_limit():
    from estimators.bayes_bounds import NN_MAX_DIMS

    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    wide = usable_information(rng.standard_normal((300, NN_MAX_DIMS + 1)), y,
                              families=["logistic"])
    assert wide.upper_kind == "H(Y)" and wide.upper == wide.h_y
    narrow = usable_information(rng.standard_normal((300, 2)), y, families=["logistic"])
    assert narrow.upper_kind.startswith("1-NN") and narrow.upper < narrow.h_y
