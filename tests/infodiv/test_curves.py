"""Set functions and layer-addition curves."""

import numpy as np
import pytest
from _synthetic_runs import synthetic
from joblib import parallel_config
from scipy.optimize import minimize

from infodiv.controls import FacilityLocation, conditionally_independent_ensemble, xor_ensemble
from infodiv.curves import greedy_backward, greedy_forward, layer_curves, order_values
from infodiv.information import error_bounds, label_entropy, member_variables
from infodiv.setfunctions import CallableSetFunction, fit_calibration, make_set_function


@pytest.fixture(scope="module")
def contrib():
    return synthetic()


def direct_metric(contrib, members, metric):
    z = contrib.readout(members)
    y = contrib.labels
    q = np.exp(z - z.max(1, keepdims=True))
    q /= q.sum(1, keepdims=True)
    if metric == "accuracy":
        return np.mean(z.argmax(1) == y)
    if metric == "cross_entropy":
        return np.mean(-np.log2(q[np.arange(len(y)), y]))
    return np.mean(((q - np.eye(z.shape[1])[y]) ** 2).sum(1))


@pytest.mark.parametrize("metric", ["accuracy", "cross_entropy", "brier"])
def test_readout_values_match_direct_computation(contrib, metric):
    f = make_set_function(contrib, metric)
    for s in ([0], [1, 4, 6], list(range(8))):
        assert f.value(s) == pytest.approx(direct_metric(contrib, s, metric), abs=1e-12)


def test_accuracy_splits_ties_and_empty_set_is_chance():
    c = synthetic()
    c.bias[:] = 0
    assert make_set_function(c, "accuracy").value([]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("objective", ["accuracy", "brier_calibrated", "mi_gaussian",
                                       "mi_copula"])
def test_incremental_protocol_equals_direct_values(contrib, objective):
    f = make_set_function(contrib, objective)
    state = f.add(f.add(f.start(()), 2), 5)
    cand = [0, 1, 7]
    assert np.allclose(f.added_values(state, cand), [f.value([2, 5, j]) for j in cand],
                       atol=1e-10)
    full = f.start(range(8))
    assert np.allclose(f.removed_values(full, cand),
                       [f.value([m for m in range(8) if m != j]) for j in cand], atol=1e-10)
    order = [3, 0, 6, 1]
    assert np.allclose(order_values(f, order), [f.value(order[:k]) for k in range(5)],
                       atol=1e-10)


def test_calibration_fit_matches_scipy():
    rng = np.random.default_rng(3)
    n, c = 300, 3
    y = rng.integers(0, c, n)
    z = rng.normal(size=(c, n)) * 2 + 1.2 * (np.arange(c)[:, None] == y)
    a, off = fit_calibration(z[None], y)

    def loss(th):
        lg = th[0] * z + np.r_[0, th[1:]][:, None]
        lg = lg - lg.max(0)
        return -(lg[y, np.arange(n)] - np.log(np.exp(lg).sum(0))).mean()

    ref = minimize(loss, np.r_[1.0, np.zeros(c - 1)], method="BFGS", options={"gtol": 1e-10})
    assert np.allclose(np.r_[a, off[0, 1:]], ref.x, atol=1e-5)


def test_calibrated_cross_entropy_of_empty_set_is_label_entropy(contrib):
    f = make_set_function(contrib, "cross_entropy_calibrated")
    # held-out prior: close to H(Y), slightly above it (never far below)
    assert f.value([]) == pytest.approx(label_entropy(contrib.labels), abs=0.02)


def test_gaussian_objective_equals_estimators_gaussian_mi(contrib):
    from estimators import information_decomposition, mutual_information

    x = member_variables(contrib.u)
    f = make_set_function(contrib, "mi_gaussian")
    for s in ([3], [0, 2, 5], list(range(8))):
        ref = mutual_information(x[:, s, :].reshape(len(x), -1), contrib.labels,
                                 method="gaussian", random_state=0)
        assert f.value(s) == pytest.approx(ref, abs=2e-6)  # estimators jitters by 1e-6
        assert f.scores(s).mean() == pytest.approx(f.value(s), abs=1e-12)
    # greedy uses incremental log-dets: its curve equals the direct values
    order, values, _ = greedy_forward(f)
    assert np.allclose(values, [f.value(order[:k]) for k in range(9)], atol=1e-10)
    dec = information_decomposition(x[:, [0, 2, 5]], contrib.labels, method="gaussian",
                                    random_state=0)
    assert dec.joint == pytest.approx(f.value([0, 2, 5]), abs=2e-6)
    assert abs(dec.residual) < 1e-6  # each term jittered on its own by 1e-6


def modular(values):
    values = np.asarray(values, float)
    return CallableSetFunction(lambda s: np.array([values[s].sum()] * 3), len(values))


def test_modular_function_curves_shapley_and_greedy():
    vals = np.array([0.5, 3.0, 1.0, 2.0, 0.1])
    lc = layer_curves(modular(vals), n_members=None, n_permutations=40, cross_fit=False)
    assert np.array_equal(lc["greedy"].order, np.argsort(-vals))
    assert np.array_equal(lc["backward"].order, np.argsort(-vals))
    assert np.allclose(lc["prefix"].values, np.r_[0, np.cumsum(vals)])
    assert np.allclose(lc["suffix"].values, np.r_[0, np.cumsum(vals[::-1])])
    rnd = lc["random"]
    assert np.allclose(rnd.extra["shapley"], vals)  # exact for a modular f
    # g(k) is constant in expectation; with P orders each g(k) is a mean of P member values
    se = vals.std() / np.sqrt(rnd.extra["n_permutations"])
    assert np.all(np.abs(rnd.extra["gain"] - vals.mean()) < 4 * se)
    assert rnd.extra["gain"].mean() == pytest.approx(vals.mean())
    assert abs(rnd.extra["shapley_check"]["residual"]) < 1e-12


def test_shapley_sum_is_exact_for_a_non_additive_function(contrib):
    lc = layer_curves(contrib, objective="cross_entropy", orders=("random",),
                      n_permutations=30)
    chk = lc["random"].extra["shapley_check"]
    assert abs(chk["residual"]) < 1e-10
    assert lc["random"].extra["ci_low"][4] <= lc["random"].values[4] <= \
        lc["random"].extra["ci_high"][4]


def test_lazy_greedy_equals_naive_on_submodular_and_falls_back_otherwise():
    rng = np.random.default_rng(0)
    fl = FacilityLocation(rng.random((50, 9)))
    naive = greedy_forward(fl)
    lazy = greedy_forward(fl, lazy=True)
    assert np.array_equal(naive[0], lazy[0]) and np.allclose(naive[1], lazy[1])
    assert lazy[2]["lazy_rejected"] is False and lazy[2]["lazy_evaluations"] < 9 * 10 / 2
    # supermodular XOR information: the stale bounds are not upper bounds -> naive rerun
    f = make_set_function(xor_ensemble(600, 4, random_state=1), "mi_gaussian")
    lazy = greedy_forward(f, lazy=True)
    assert lazy[2]["lazy_rejected"] is True
    assert np.array_equal(lazy[0], greedy_forward(f)[0])


def test_backward_curve_values_are_sets_that_survive(contrib):
    f = make_set_function(contrib, "brier")
    order, values, _ = greedy_backward(f)
    for k in (1, 4, 8):
        assert values[k] == pytest.approx(f.value(order[:k]), abs=1e-12)


def test_cross_fitting_removes_selection_optimism():
    # pure-noise members: in-sample greedy accuracy climbs above chance, held-out does not
    c = synthetic(n=300, m=10, c=2, signal=0.0, seed=5)
    lc = layer_curves(c, objective="accuracy", orders=("greedy",), random_state=2)
    g = lc["greedy"]
    assert g.extra["cross_fitted"]
    optimism = g.extra["values_in_sample"][1:6] - g.values[1:6]
    assert optimism.mean() > 0.02
    assert abs(g.values[1:6].mean() - 0.5) < 0.05


def test_error_bounds_formula_and_attachment():
    lo, hi = error_bounds(0.3, 1.0, 2)
    assert lo == pytest.approx(-0.3) and hi == pytest.approx(0.35)
    c = conditionally_independent_ensemble(500, 5, mu=0.5, random_state=0)
    lc = layer_curves(c, objective="mi_gaussian", orders=("prefix",))
    ex = lc["prefix"].extra
    assert np.all(ex["bound_lower"] <= ex["bound_upper"])
    assert ex["error_raw"].shape == (6,)


def test_random_orders_do_not_depend_on_n_jobs_or_backend(contrib):
    kw = dict(objective="accuracy", orders=("random",), n_permutations=60, random_state=7)
    ref = layer_curves(contrib, **kw)["random"].values
    with parallel_config(backend="threading"):
        thr = layer_curves(contrib, n_jobs=2, **kw)["random"].values
    assert np.array_equal(ref, thr)


def test_dask_backend_runs_random_orders(contrib):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), parallel_config(backend="dask"):
        out = layer_curves(contrib, objective="accuracy", orders=("random",),
                           n_permutations=50, random_state=7, n_jobs=2)["random"].values
    ref = layer_curves(contrib, objective="accuracy", orders=("random",), n_permutations=50,
                       random_state=7)["random"].values
    assert np.array_equal(out, ref)


def test_bad_input_messages(contrib):
    with pytest.raises(ValueError, match="n_members"):
        layer_curves(lambda s: np.zeros(3))
    with pytest.raises(ValueError, match="unknown objective"):
        layer_curves(contrib, objective="f1")
    with pytest.raises(ValueError, match="unknown orders"):
        layer_curves(contrib, orders=("sideways",))
    f = make_set_function(contrib, "accuracy")
    with pytest.raises(ValueError, match=r"\[0, 8\)"):
        f.value([9])
    with pytest.raises(ValueError, match="duplicated"):
        f.value([1, 1])


def test_copula_knn_and_probe_objectives():
    from estimators import mutual_information

    c = conditionally_independent_ensemble(400, 5, n_options=3, mu=0.5, random_state=0)
    x = member_variables(c.u)
    for obj, method in (("mi_copula", "copula"), ("mi_knn", "knn")):
        f = make_set_function(c, obj)
        ref = mutual_information(x[:, [1, 3]].reshape(400, -1), c.labels, method=method,
                                 random_state=0)
        assert f.value([1, 3]) == pytest.approx(ref, abs=2e-6)
    assert not make_set_function(c, "mi_knn").per_example
    probe = make_set_function(c, "mi_probe")
    assert probe.value([]) == 0.0
    full = probe.value(range(5))
    # a held-out lower bound: positive here, below H(Y) and below the Gaussian estimate
    assert 0.1 < full < label_entropy(c.labels)
    assert full < make_set_function(c, "mi_gaussian").value(range(5)) + 0.05


def test_knn_greedy_is_cross_fitted():
    # mi_knn has one score per set, not per example, but it re-estimates on example subsets:
    # its greedy order must be selected on one half of the examples and scored on the other
    c = conditionally_independent_ensemble(200, 4, mu=0.5, random_state=0)
    f = make_set_function(c, "mi_knn")
    assert f.n_examples == 200 and f.can_restrict()
    lc = layer_curves(c, objective="mi_knn", orders=("greedy",))
    assert lc["greedy"].extra["cross_fitted"] is True
    assert not any("cross-fitting impossible" in n for n in lc.notes)


def test_gaussian_greedy_falls_back_to_in_sample_when_halves_are_too_small():
    # 20 one-dimensional members, ~40 examples per class: the full data suffice, halves do not
    c = conditionally_independent_ensemble(80, 20, mu=0.5, random_state=3)
    lc = layer_curves(c, objective="mi_gaussian", orders=("greedy",))
    assert lc["greedy"].extra["cross_fitted"] is False
    assert np.array_equal(lc["greedy"].values, lc["greedy"].extra["values_in_sample"])
    assert any("cross-fitting impossible" in n for n in lc.notes)
