"""Diminishing-returns statistics without refitting (infodiv.submodularity, infodiv.curvature,
infodiv.growth) and the controls that calibrate them."""

import numpy as np
import pytest

from infodiv.controls import FacilityLocation, greedy_vs_optimum
from infodiv.curvature import curvature, submodularity_ratio
from infodiv.curves import layer_curves
from infodiv.growth import fit_growth_laws
from infodiv.setfunctions import CallableSetFunction
from infodiv.submodularity import benjamini_hochberg, dr_example_differences, sample_triple


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


def test_facility_location_ratio_and_exact_enumeration():
    rng = np.random.default_rng(4)
    fl = FacilityLocation(rng.random((80, 10)))
    greedy = layer_curves(fl, orders=("greedy",))["greedy"]
    assert submodularity_ratio(fl, greedy.order)["min"] >= 1 - 1e-12
    assert 0 <= curvature(fl, greedy.order, greedy.extra["values_in_sample"])["total"] <= 1
    chains = [sample_triple(fl.n_members, np.random.default_rng(s)) for s in range(40)]
    d, gains = dr_example_differences(fl, chains)      # submodular: no chain's gain grows
    assert d.shape == (80, 40) and (d.mean(axis=0) >= -1e-12).all()
    np.testing.assert_allclose(gains[:, 0] - gains[:, 1], d.mean(axis=0), atol=1e-12)
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
