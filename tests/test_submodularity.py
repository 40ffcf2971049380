"""Diminishing-returns diagnostics and the controls that calibrate them (issue 5)."""

import numpy as np
import pytest

from infodiv.controls import (
    FacilityLocation,
    ModularSurrogate,
    conditionally_independent_ensemble,
    greedy_vs_optimum,
    matched_modular_surrogate,
    xor_ensemble,
)
from infodiv.curvature import submodularity_ratio
from infodiv.setfunctions import CallableSetFunction, make_set_function
from infodiv.submodularity import (
    benjamini_hochberg,
    dr_tests,
    fit_growth_laws,
    submodularity_report,
)


def test_benjamini_hochberg_step_up():
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216])
    # BH at 0.05: thresholds 0.005, 0.01, 0.015, ... -> the first two are rejected
    assert benjamini_hochberg(p, 0.05).tolist() == [True, True] + [False] * 8
    # step-up: a later p below its threshold rejects all smaller ones
    assert benjamini_hochberg(np.array([0.04, 0.03, 0.02]), 0.05).all()
    # an undefined (NaN) test is never rejected and still counts in m: thresholds k·0.05/4
    # (dropping it would give thresholds k·0.05/3 and reject 0.04 too)
    mask = benjamini_hochberg(np.array([0.012, np.nan, 0.04, 0.02]), 0.05)
    assert mask.tolist() == [True, False, False, True]
    assert benjamini_hochberg(np.array([np.nan, np.nan])).tolist() == [False, False]


def test_modular_surrogate_false_positive_rate_over_seeds():
    """Modular + set-seeded noise: BH-declared violations in <= 5% of runs (up to binomial
    noise), and the raw one-sided bootstrap p-values are calibrated (~5% below 0.05)."""
    rng = np.random.default_rng(0)
    any_sig, raw = [], []
    for seed in range(40):
        vals = rng.normal(0.1, 0.5, size=(200, 8))
        f = ModularSurrogate(vals, noise_scale=0.3, random_state=seed)
        res = dr_tests(f, n_triples=20, n_bootstrap=200, random_state=seed)
        any_sig.append(res["any_significant"])
        raw.append(np.mean(res["p_values"] < 0.05))
    rate = np.mean(any_sig)
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 40)
    assert 0.01 < np.mean(raw) < 0.09


def test_matched_surrogate_of_a_real_objective_shows_no_effect():
    c = conditionally_independent_ensemble(400, 8, mu=0.4, random_state=2)
    sur = matched_modular_surrogate(make_set_function(c, "cross_entropy"))
    res = dr_tests(sur, n_triples=40, n_bootstrap=300, random_state=1)
    assert res["significant_violation_rate"] == 0.0
    lo, hi = res["mean_difference_ci"]
    assert lo <= 0 <= hi


@pytest.fixture(scope="module")
def ci_report():
    c = conditionally_independent_ensemble(1500, 8, mu=0.4, random_state=1)
    return submodularity_report(c, objective="mi_gaussian", n_triples=60, n_bootstrap=400,
                                n_permutations=60, random_state=0)


def test_conditionally_independent_ensemble_is_diminishing(ci_report):
    r = ci_report
    assert r.dr["significant_violation_rate"] == 0.0
    assert r.gain_slope["ci"][1] < 0  # the whole CI of the g(k) slope is negative
    assert r.gain_slope["from_k2"]["ci"][1] < 0
    assert r.ratio["min"] > 0.9  # ratio-of-sums >= 1 up to estimation noise


def test_theorem_5_to_7_terms_on_the_conditionally_independent_ensemble(ci_report):
    info = ci_report.information["prefix"]
    mono = info["monotonicity"]
    assert mono["joint"]["n_against"] == 0
    assert mono["relevancy"]["n_against"] == 0
    assert mono["bound_upper"]["n_against"] == 0
    assert np.all(np.abs(info["residual"]) < 1e-6)  # identity up to estimators jitter
    # premise of Theorem 7 holds: TC(U|Y) ~ 0 while TC(U) > 0 (members share Y)
    assert abs(info["conditional_redundancy"][-1]) < 0.3 * info["redundancy"][-1]
    assert info["redundancy"][-1] > 0.02


def test_xor_synergy_violations_are_detected():
    c = xor_ensemble(1500, 5, random_state=0)
    r = submodularity_report(c, objective="mi_gaussian", n_triples=60, n_bootstrap=400,
                             n_permutations=60, info_method=None, random_state=0)
    assert r.dr["any_significant"]
    assert r.dr["significant_violation_rate"] > 0.05
    assert r.gain_slope["ci"][0] > 0  # gains grow: supermodular on average


def test_facility_location_ratio_and_exact_enumeration():
    rng = np.random.default_rng(4)
    fl = FacilityLocation(rng.random((80, 10)))
    r = submodularity_report(fl, n_triples=40, n_bootstrap=200, n_permutations=40)
    assert r.ratio["min"] >= 1 - 1e-12
    assert r.dr["violation_rate"] == 0.0
    assert 0 <= r.curvature["total"] <= 1
    ex = greedy_vs_optimum(fl)
    ratio = ex["ratio"][1:]
    assert np.all(ratio >= 1 - 1 / np.e) and np.all(ratio <= 1 + 1e-12)
    assert ratio[-1] == pytest.approx(1.0) and ratio[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="M <= 16"):
        greedy_vs_optimum(FacilityLocation(rng.random((5, 17))))


def test_greedy_can_be_suboptimal_and_enumeration_shows_it():
    # coverage: greedy takes the big set first and then covers 1 more; OPT_2 covers all 6
    sets = [{0, 1, 2, 3}, {0, 1, 4}, {2, 3, 5}]
    f = CallableSetFunction(lambda s: np.array([len(set().union(*(sets[i] for i in s)))]), 3)
    ex = greedy_vs_optimum(f)
    assert ex["optimum"][2] == 6 and ex["greedy"][2] == 5
    assert ex["ratio"][2] == pytest.approx(5 / 6)


def test_submodularity_ratio_below_one_for_supermodular_function():
    f = CallableSetFunction(lambda s: np.array([float(len(s)) ** 2] * 2), 6)
    r = submodularity_ratio(f, np.arange(6), block=3, n_random=2)
    assert r["min"] < 1


@pytest.mark.parametrize("law", ["linear", "log", "power"])
def test_growth_law_selection(law):
    k = np.arange(0, 41, dtype=float)
    rng = np.random.default_rng(1)
    kk = np.maximum(k, 1)
    y = {"linear": 0.02 * k + 0.3, "log": 0.1 * np.log(kk) + 0.3,
         "power": 0.8 - 0.6 * kk ** -1.5}[law]
    fits = fit_growth_laws(y + rng.normal(0, 1e-3, k.size))
    assert fits["best_aicc"] == law


@pytest.mark.parametrize("law", ["linear", "log", "power"])
def test_growth_laws_at_arbitrary_points(law):
    """fit_growth_laws(values, k=x): laws fitted at arbitrary x > 0 (e.g. parameter counts,
    unsorted); on x = 1..M it is the curve form without f(empty); bad x is one ValueError."""
    rng = np.random.default_rng(2)
    x = rng.permutation(np.geomspace(1e3, 1e7, 24))
    y = {"linear": 2e-8 * x + 0.3, "log": 0.05 * np.log(x) + 0.1,
         "power": 0.8 - 3.0 * x ** -0.4}[law] + rng.normal(0, 1e-4, x.size)
    fits = fit_growth_laws(y, k=x)
    assert fits["best_aicc"] == law
    o = np.argsort(x)   # held out: the larger half of the x, whatever the input order
    ordered = fit_growth_laws(y[o], k=x[o])
    assert fits[law]["extrapolation_rmse"] == pytest.approx(ordered[law]["extrapolation_rmse"])
    curve = np.r_[0.0, 0.1 * np.log(np.arange(1, 31)) + 0.3]
    same, alt = fit_growth_laws(curve), fit_growth_laws(curve[1:], k=np.arange(1, 31))
    for law_ in ("linear", "log", "power"):
        assert alt[law_]["aicc"] == pytest.approx(same[law_]["aicc"])
        assert alt[law_]["extrapolation_rmse"] == pytest.approx(same[law_]["extrapolation_rmse"])
    with pytest.raises(ValueError, match="one point per value"):
        fit_growth_laws(y, k=x[:-1])
    with pytest.raises(ValueError, match="1 of 24 points"):
        fit_growth_laws(y, k=np.r_[x[:-1], 0.0])


def test_diversity_regression_on_conditionally_independent_ensemble(ci_report):
    d = ci_report.diversity
    assert d["n_pairs"] > 50
    # gains shrink when U_S already explains x's variance (the shared Y component)
    assert d["beta_diversity"] > 0 and d["p_two_sided"] < 0.05
