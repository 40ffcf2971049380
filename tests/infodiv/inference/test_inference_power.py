"""Power: tests detect what they test on surrogates of the run.

Thresholds are binomial: "most replicates" is a detection rate whose one-sided lower bound
(two standard errors at p = 0.8) stays above one half, false positives at most
0.05 + 2·sqrt(0.05·0.95/n) rounded up to a count.
"""

import numpy as np
import pytest

from estimators.resampling import bootstrap_interval
from infodiv.claims import CLAIMS, get_claims
from infodiv.inference import (
    conditionally_independent,
    dependent_ensemble,
    infer,
    planted_synergy,
    surrogate_power,
    two_level_bootstrap,
    wilson_interval,
)
from infodiv.inference.claim import Design
from infodiv.inference.engine import ClaimStatistics, _Detector, evaluate


def test_wilson_interval_matches_the_closed_form():
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-3) and hi == pytest.approx(0.9433, abs=1e-3)
    assert wilson_interval(0, 20)[0] == pytest.approx(0.0, abs=1e-12)
    assert wilson_interval(20, 20)[1] == pytest.approx(1.0)


def _slope_detected(run, seed):
    """The engine's example interval of the g(k) slope (everything refitted) lies below 0."""
    pipe = ClaimStatistics([CLAIMS["diminishing_returns"]], Design("accuracy", n_orders=4,
                                                                   n_triples=0))
    est = two_level_bootstrap(run, pipe, n_bootstrap=50, n_mc=2, random_state=seed,
                              progress=False)["diminishing_returns"]
    return bootstrap_interval(est.value, est.distribution)[1] < 0


def test_conditionally_independent_members_with_signal_are_detected_as_diminishing():
    n = 12
    hits = sum(_slope_detected(conditionally_independent(
        dependent_ensemble(300, 6, signal=0.5, rho=0.4, random_state=100 + r), random_state=r),
        r) for r in range(n))
    assert hits / n >= 0.8 - 2 * np.sqrt(0.8 * 0.2 / n)  # ~ 0.57: most replicates


def _violations(run, seed):
    """The engine's violations verdict (refitted bootstrap se, the run's own label null of
    K = 39, step-down min-z test over 8 chains) on the Gaussian information."""
    rec = evaluate(run, get_claims(["violations"]), Design("mi_gaussian", n_orders=2,
                                                           n_triples=8, triple_seed=seed),
                   n_bootstrap=30, n_permutations=39, n_mc=2, n_power=0,
                   random_state=seed)["records"]["violations"]
    return rec.detected


def test_planted_xor_violations_are_detected_and_absent_without_them():
    """Planted XOR pairs on a conditionally independent base (n = 1600): the verdict fires
    on 5 of 5 (measured; at n = 800 the step-down test's heavy-tailed null leaves 3 of 5), on
    the base itself in 0 of 5."""
    n = 5
    base = [conditionally_independent(dependent_ensemble(1600, 4, signal=0.5, rho=0.4,
                                                         random_state=200 + r), random_state=r)
            for r in range(n)]
    with_xor = sum(_violations(planted_synergy(b, n_pairs=2, random_state=r), r)
                   for r, b in enumerate(base))
    without = sum(_violations(b, r) for r, b in enumerate(base))
    assert with_xor >= 4
    assert without <= 1         # the submodular base: no violations expected


def test_surrogate_power_reports_a_detection_rate_per_surrogate_and_test():
    """The engine's power detector (the claim's one-fit shortcut, judged by its three-part
    rule against the real run's label null) through surrogate_power."""
    run = dependent_ensemble(300, 6, signal=0.5, rho=0.4, random_state=11)
    claim, design = CLAIMS["diminishing_returns"], Design("accuracy", n_orders=4, n_triples=0)
    null = infer(run, ClaimStatistics([claim], design), n_bootstrap=20, n_permutations=39,
                 n_mc=2, random_state=0, progress=False).null[claim.name].distribution
    detect = _Detector([claim], design, {claim.name: null}, 0.05, 40, 20)
    res = surrogate_power(run, detect, kinds=("conditionally_independent", "shuffled_labels"),
                          n_replicates=8, random_state=0, progress=False)
    ci = res["conditionally_independent"]["diminishing_returns"]
    null = res["shuffled_labels"]["diminishing_returns"]
    assert ci["n"] == null["n"] == 8 == res["n_replicates"]
    assert ci["rate"] == ci["n_detected"] / 8
    assert ci["ci"][0] <= ci["rate"] <= ci["ci"][1]
    assert ci["rate"] >= 0.5            # detected on the matched submodular case
    assert null["n_detected"] <= 2      # 0.05 + 2 sd at n = 8 -> at most 2 of 8
    # seeded: the same call gives the same rates
    again = surrogate_power(run, detect, kinds=("shuffled_labels",), n_replicates=8,
                            random_state=0, progress=False)
    assert again["shuffled_labels"] == res["shuffled_labels"]
    with pytest.raises(ValueError, match="unknown surrogate kinds"):
        surrogate_power(run, detect, kinds=("nope",), n_replicates=2, progress=False)


def test_violation_p_values_are_never_nan_when_replicates_do_not_vary():
    from infodiv.inference import Estimate
    from infodiv.inference.bootstrap import p_negative_normal

    v = np.array([0.0, -0.5, 0.3])
    dist = np.tile(v, (50, 1))                   # every resample gives the same differences
    est = Estimate(statistic=v, low=v, high=v, confidence=0.95, distribution=dist, name="d",
                   n_bootstrap=50, mc_error=0 * v, ci_mc=(v, v), n_mc=2)
    assert est.value is v and est.ci[0] is v and est.ci[1] is v
    p = p_negative_normal(est)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p, [1.0, 1 / 51, 1.0])   # the count p-values


def test_batched_gaussian_set_values_equal_the_per_set_values():
    """GaussianSetFunction.set_values (one stacked Cholesky per set size; used by the DR
    chains of every replicate and power surrogate) gives the numbers of value() set by set,
    the empty set included, for the Gaussian and copula estimates; a singular block still
    raises the ValueError that names it."""
    from infodiv.curves import set_values
    from infodiv.setfunctions import make_set_function

    run = dependent_ensemble(300, 9, n_options=3, signal=0.4, rho=0.4, random_state=4)
    rng = np.random.default_rng(0)
    sets = [rng.permutation(9)[: rng.integers(0, 10)] for _ in range(60)]
    sets += [np.zeros(0, dtype=np.int64), np.arange(9)]
    for objective in ("mi_gaussian", "mi_copula"):
        f = make_set_function(run, objective)
        batched = f.set_values(sets)
        one_by_one = np.array([f.value(s) for s in sets])
        np.testing.assert_allclose(batched, one_by_one, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(set_values(f, sets), one_by_one, rtol=1e-10, atol=1e-12)
    u = np.asarray(run.u, dtype=np.float64).copy()
    u[:, 2] = u[:, 1]                                 # member 2 repeats member 1 exactly
    from infodiv.inference.surrogates import with_arrays
    f = make_set_function(with_arrays(run, u=u), "mi_gaussian")
    with pytest.raises(ValueError, match="not positive definite"):
        f.set_values([np.array([0]), np.array([1, 2])])
