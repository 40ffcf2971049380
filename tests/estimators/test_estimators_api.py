"""Public API: dispatch, label models, XOR synergy, null, reproducibility and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from estimators import (
    conditional_mutual_information,
    entropy,
    information_decomposition,
    interaction_information,
    mutual_information,
    total_correlation,
)
from estimators.groundtruth import cases

METHODS = ["knn", "gaussian", "copula", "binned"]


def _seeds(case, quantity, method, n, seeds, **kw):
    return np.asarray([quantity.estimate(case.sample(n, np.random.default_rng([s, 3])),
                                         method=method, random_state=s, **kw)
                       for s in range(seeds)])


def _within(values, truth, n_se=4.0, slack=0.0):
    se = values.std(ddof=1) / np.sqrt(len(values))
    return abs(values.mean() - truth) < n_se * se + slack


@pytest.fixture(scope="session")
def label_knn():
    case = cases()["label_model"]
    return {q.name: (q.true_bits, _seeds(case, q, "knn", 2000, 10)) for q in case.quantities}


@pytest.mark.parametrize("quantity", ["I(U_1;Y)", "I(U;Y)", "TC(U|Y)", "TC(U)"])
def test_label_model_knn(label_knn, quantity):
    truth, values = label_knn[quantity]
    assert _within(values, truth), (quantity, values.mean(), truth)


def test_label_model_true_values():
    q = {x.name: x.true_bits for x in cases()["label_model"].quantities}
    assert q["TC(U)"] == pytest.approx(4 * q["I(U_1;Y)"] - q["I(U;Y)"], abs=1e-12)
    assert q["TC(U|Y)"] == 0.0
    # C(a) for a -> 0 is a^2/2 nats (small-signal capacity): check the quadrature
    from estimators.groundtruth import capacity
    assert capacity(0.01) == pytest.approx(0.01**2 / 2, rel=1e-3)
    assert capacity(5.0) == pytest.approx(np.log(2), abs=1e-6)


@pytest.fixture(scope="session")
def xor_values():
    case = cases()["xor"]
    out = {}
    for method, kw in (("knn", {}), ("binned", {"bins": 2, "binning": "quantile"})):
        out[method] = {q.name: (q.true_bits, _seeds(case, q, method, 2000, 8, **kw))
                       for q in case.quantities}
    return out


def test_xor_synergy_binned_at_the_median(xor_values):
    # quantile bins=2 cut at the sample medians: about 1% of the points per axis fall on the
    # wrong side of 0, which costs about 0.13 bits of the synergistic bit at n = 2000
    v = xor_values["binned"]
    for name in ("I(U_1;Y)", "TC(U)"):
        assert abs(v[name][1].mean()) < 0.01, name
    for name in ("I(U;Y)", "TC(U|Y)"):
        assert 0.75 < v[name][1].mean() < 1.0, name


def test_xor_synergy_knn(xor_values):
    v = xor_values["knn"]
    assert _within(v["I(U_1;Y)"][1], 0.0) and _within(v["TC(U)"][1], 0.0)
    # KSG/Ross are biased down at the class boundary (measured about -6%): allow 10%
    for name in ("I(U;Y)", "TC(U|Y)"):
        assert 0.9 < v[name][1].mean() <= 1.02, (name, v[name][1].mean())
    diversity = v["TC(U|Y)"][1] - v["TC(U)"][1]
    assert diversity.mean() > 0.85  # synergy shows up as positive diversity


@pytest.mark.parametrize("method", METHODS)
def test_null_shuffled_labels(method):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((600, 2))
    y = (x[:, 0] > 0).astype(np.int64)
    # binned: the plug-in MI has the null bias (K_x - 1)(K_y - 1) / (2n) nats; Miller-Madow
    # removes it to first order, and can then go negative too
    kw = {"estimator": "miller_madow", "bins": 4} if method == "binned" else {}
    values = np.asarray([mutual_information(x, np.random.default_rng(s).permutation(y),
                                            method=method, random_state=s, **kw)
                         for s in range(15)])
    sd = values.std(ddof=1)
    assert abs(values.mean()) < 3 * sd / np.sqrt(len(values))
    assert np.mean(np.abs(values) < 2 * sd) >= 0.8
    assert (values < 0).any()  # negative estimates are returned as they are
    assert mutual_information(x, y, method=method, random_state=0) > 0.5


@pytest.mark.parametrize("method", METHODS)
def test_same_random_state_bit_identical(method):
    rng = np.random.default_rng(1)
    # rounded data have ties, so the seeded tie-breaking jitter / rank order matters
    u = np.round(rng.standard_normal((300, 3, 2)), 1)
    y = rng.integers(0, 2, 300)
    z = rng.standard_normal((300, 1))
    for fn in (lambda r: total_correlation(u, given=y, method=method, random_state=r),
               lambda r: conditional_mutual_information(u[:, 0], u[:, 1], z, method=method,
                                                        random_state=r),
               lambda r: entropy(u[:, 0], method=method, random_state=r)):
        assert fn(7) == fn(7)
        if method != "binned":  # binned is deterministic; the others jitter
            assert fn(7) != fn(8)
    a = information_decomposition(u, y, method=method, random_state=3)
    b = information_decomposition(u, y, method=method, random_state=3)
    assert a == b


def test_stratified_cmi_equals_manual_sum():
    rng = np.random.default_rng(2)
    z = rng.integers(0, 3, 900)
    x = rng.standard_normal((900, 1)) + z[:, None]
    y = x + rng.standard_normal((900, 1))
    manual = sum(np.mean(z == c) * mutual_information(x[z == c], y[z == c], method="gaussian",
                                                      random_state=0) for c in range(3))
    value = conditional_mutual_information(x, y, z, method="gaussian", random_state=0)
    # equal up to the 1e-6 jitter of the Gaussian backend (drawn differently per call)
    assert value == pytest.approx(manual, rel=1e-6)
    tc = total_correlation([x, y], given=z, method="gaussian", random_state=0)
    assert tc == pytest.approx(manual, rel=1e-6)


def test_mixed_cmi_chain_rule_and_discrete_paths():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((3000, 1))
    x = z + rng.standard_normal((3000, 1))
    y = (x[:, 0] > z[:, 0]).astype(np.int64)
    direct = conditional_mutual_information(x, y, z, method="binned", bins=6, binning="quantile")
    swapped = conditional_mutual_information(y, x, z, method="binned", bins=6, binning="quantile")
    assert direct == pytest.approx(swapped, abs=1e-12)
    assert direct > 0.3
    a = (z[:, 0] > 0).astype(np.int64)
    both = conditional_mutual_information(a, y, x, method="binned", bins=6, binning="quantile")
    xb = np.digitize(x[:, 0], np.quantile(x[:, 0], np.linspace(0, 1, 7)[1:-1]))
    exact = conditional_mutual_information(a, y, xb)
    assert both == pytest.approx(exact, abs=1e-12)


def test_integer_inputs_are_discrete_whatever_the_method():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, 500)
    b = (a + rng.integers(0, 2, 500)) % 4
    ref = mutual_information(a, b, method="binned")
    for method in ("knn", "gaussian", "copula"):
        assert mutual_information(a, b, method=method) == ref
    assert entropy(np.zeros(10, dtype=int), method="knn") == 0.0


def test_units():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((400, 2))
    y = x + rng.standard_normal((400, 2))
    bits = mutual_information(x, y, method="gaussian", random_state=0)
    nats = mutual_information(x, y, method="gaussian", random_state=0, base="e")
    assert bits == pytest.approx(nats / np.log(2), rel=1e-12)


def test_decomposition_table_names_the_unit():
    rng = np.random.default_rng(7)
    u = rng.integers(0, 2, (200, 2))
    y = u[:, 0] ^ u[:, 1]
    for base, unit in ((2, "bits"), ("e", "nats"), (np.e, "nats"), (10, "log base 10")):
        assert f"unit={unit})" in information_decomposition(u, y, base=base).table()


def test_interaction_information_continuous_matches_tc_for_pairs():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((500, 2))
    y = x + rng.standard_normal((500, 2))
    ii = interaction_information([x, y], method="gaussian", random_state=0)
    assert ii == pytest.approx(mutual_information(x, y, method="gaussian", random_state=0),
                               rel=1e-9)


def test_decomposition_on_label_model_gaussian():
    case = cases()["label_model"]
    truth = {q.name: q.true_bits for q in case.quantities}
    d = case.sample(4000, np.random.default_rng(0))
    dec = information_decomposition(d["u"], d["y"], method="gaussian", random_state=0,
                                    max_order=3)
    assert dec.joint == pytest.approx(truth["I(U;Y)"], abs=0.05)
    assert dec.conditional_redundancy == pytest.approx(0.0, abs=0.01)
    assert dec.diversity == pytest.approx(dec.conditional_redundancy - dec.redundancy)
    assert dec.residual == pytest.approx(dec.joint - dec.relevancy - dec.diversity)
    assert set(dec.redundancy_orders) == {2, 3}
    assert len(dec.relevancies) == 4 and dec.n_samples == 4000
    assert "InformationDecomposition(method='gaussian'" in repr(dec)


# ---- bad input --------------------------------------------------------------------------------

def test_nan_and_inf_name_the_argument():
    x = np.random.default_rng(0).standard_normal((50, 2))
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="y contains 1 NaN"):
        mutual_information(x, bad, method="gaussian")
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"variables\[1\] contains 0 NaN and 1 infinite"):
        total_correlation([x, bad], method="knn")
    with pytest.raises(ValueError, match="z contains"):
        conditional_mutual_information(x, x, bad, method="knn")


def test_length_mismatch_gives_both_lengths():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="x has 50 samples but y has 49"):
        mutual_information(rng.standard_normal(50), rng.standard_normal(49))
    with pytest.raises(ValueError, match="given has 40"):
        total_correlation(rng.standard_normal((50, 3)), given=np.zeros(40, dtype=int))


def test_k_too_large_and_small_classes():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="k=10 needs more than 10 samples"):
        entropy(rng.standard_normal(10), k=10)
    u = rng.standard_normal((40, 3))
    y = np.r_[np.zeros(37, dtype=int), np.ones(3, dtype=int)]
    with pytest.raises(ValueError, match="class 1 of given has 3 samples.*k\\+1=4 for k=3"):
        total_correlation(u, given=y, method="knn")
    with pytest.raises(ValueError, match="class 1 of given has 3 samples"):
        total_correlation(u, given=y, method="gaussian")
    with pytest.raises(ValueError, match="class 1 of z has 3 samples"):
        conditional_mutual_information(u[:, 0], u[:, 1], y, method="knn")
    with pytest.raises(ValueError, match="class 1 has 3 samples.*more samples than the 3"):
        mutual_information(u, y, method="gaussian")


def test_labels_must_be_integers():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="integer labels"):
        information_decomposition(rng.standard_normal((30, 2)), np.r_[np.zeros(15),
                                                                       np.ones(15)])


def test_unknown_method_and_options():
    x = np.random.default_rng(0).standard_normal((30, 2))
    with pytest.raises(ValueError, match="method must be one of"):
        entropy(x, method="kde")
    with pytest.raises(TypeError, match="does not take \\['bins'\\]"):
        entropy(x, method="gaussian", bins=4)
    with pytest.raises(ValueError, match="estimator must be one of"):
        entropy(x, method="binned", estimator="nsb")
    with pytest.raises(ValueError, match="binning must be one of"):
        entropy(x, method="binned", binning="kmeans")
    with pytest.raises(ValueError, match="at least 2 variables"):
        interaction_information([x], method="gaussian")
    with pytest.raises(ValueError, match="mix of integer"):
        total_correlation([x, np.zeros(30, dtype=int)], method="gaussian")


def test_decomposition_knn_one_pass_matches_separate_calls():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    u = 0.5 * y[:, None, None] + rng.standard_normal((400, 5, 2))
    dec = information_decomposition(u, y, method="knn", random_state=0)
    # continuous data without ties: kNN results do not depend on the 1e-10 jitter draw
    assert dec.redundancy == pytest.approx(total_correlation(u, method="knn"), rel=1e-9)
    assert dec.conditional_redundancy == pytest.approx(
        total_correlation(u, given=y, method="knn"), rel=1e-9)
    assert dec.joint == pytest.approx(mutual_information(u.reshape(400, -1), y, method="knn"),
                                      rel=1e-9)
    assert dec.relevancy == pytest.approx(sum(mutual_information(u[:, i], y, method="knn")
                                              for i in range(5)), rel=1e-9)
