"""Intervals and nulls that survive shuffled labels.

Judged over seeded replicates; each threshold is the nominal rate minus about two binomial
standard errors at that number of replicates (or plus, for false-positive rates).
"""

import numpy as np
import pytest
from _binomial import binomial_floor

from infodiv.claims import get_claims
from infodiv.inference import (
    dependent_ensemble,
    null_corrected,
    permutation_null,
    shuffled_labels,
    two_level_bootstrap,
)
from infodiv.inference.bootstrap import p_negative_normal
from infodiv.inference.claim import Design
from infodiv.inference.engine import ClaimStatistics
from infodiv.inference.information_terms import ModelBasedTerms as InformationPipeline
from infodiv.submodularity import benjamini_hochberg

#: the engine's claims whose statistics these tests resample (g(k) slope, DR mean, per-chain
#: differences)
CHAIN_CLAIMS = ("diminishing_returns", "dr_mean_difference_positive", "violations")


def covers(ci):
    return ci[0] <= 0 <= ci[1]


def null_bootstraps(objective, n_replicates, n_bootstrap, n=200, m=6):
    """Shuffled labels on runs with dependent members: one two-level bootstrap each of the
    engine's chain claims (every replicate refitted, 4 random orders inside, 12 chains)."""
    pipe = ClaimStatistics(get_claims(CHAIN_CLAIMS), Design(objective, n_orders=4, n_triples=12))
    out = []
    for r in range(n_replicates):
        run = shuffled_labels(dependent_ensemble(n, m, signal=0.4, rho=0.4, random_state=r),
                              random_state=r)
        out.append(two_level_bootstrap(run, pipe, n_bootstrap=n_bootstrap, n_mc=2,
                                       random_state=r, progress=False))
    return out


@pytest.fixture(scope="module")
def null_replicates():
    return null_bootstraps("accuracy", 20, 50)


def check_null_coverage(boots):
    n = len(boots)
    floor = min(0.90, binomial_floor(0.95, n))
    for name in ("diminishing_returns", "dr_mean_difference_positive"):
        rate = np.mean([covers(b[name].ci) for b in boots])
        assert rate >= floor, (name, rate, floor)
    rates = []
    for b in boots:
        est = b["violations"]
        rates.append(np.mean(benjamini_hochberg(p_negative_normal(est), 0.05) & (est.value < 0)))
    assert np.mean(rates) <= 0.05


def test_slope_and_dr_intervals_cover_zero_and_bh_rate_under_shuffled_labels(null_replicates):
    """95% g(k)-slope and DR-mean intervals cover 0 in >= 90% of 20 replicates (>= 18);
    the BH-significant rate of the per-chain differences averages <= 5%."""
    check_null_coverage(null_replicates)


@pytest.mark.slow
def test_null_coverage_of_the_calibrated_objective_over_many_replicates():
    check_null_coverage(null_bootstraps("accuracy_calibrated", 100, 200, n=300, m=10))


def test_mc_error_is_reported_apart_and_is_not_the_interval(null_replicates):
    est = null_replicates[0]["diminishing_returns"]
    assert est.n_bootstrap == 50 and est.n_mc == 2
    d = est.to_dict()
    assert "Monte-Carlo" in d["mc_label"] and d["interval"].startswith("percentile")
    # with the examples fixed the orders-only spread is far narrower than the example interval
    assert est.ci_mc[1] - est.ci_mc[0] < est.ci[1] - est.ci[0]


def test_permutation_null_p_values_and_correction():
    run = dependent_ensemble(300, 5, signal=0.6, rho=0.3, random_state=7)
    pipe = InformationPipeline()
    res = permutation_null(run, pipe, n_permutations=39, random_state=0, progress=False)
    joint = res["joint"]
    # real signal: the observed I lies above every shuffled-label value, p at its floor
    assert joint.observed > joint.null_high
    assert joint.p == pytest.approx(1 / 40)
    assert joint.corrected == pytest.approx(joint.observed - joint.null_mean)
    assert joint.alternative == "greater" and res["bound_upper"].alternative == "less"
    assert res["bound_upper"].p == pytest.approx(1 / 40)
    # p = (1 + #{null >= obs}) / (1 + K), checked against the stored null
    div = res["diversity"]
    k = np.sum(div.distribution >= div.observed)
    assert div.p_greater == pytest.approx((1 + k) / 40)
    assert div.p_two_sided == pytest.approx(min(1, 2 * min(div.p_greater, div.p_less)))
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_null(run, pipe, n_permutations=5)


@pytest.mark.slow
def test_null_corrected_diversity_of_shuffled_labels_covers_zero():
    """D = 12 dimensions at n = 120: duplicated rows bias each bootstrap D by ~0.5 bits
    (measured), so a plain percentile interval minus the null mean covers 0 in ~1 of 10
    replicates; the null-corrected interval (bootstrap spread only) in >= 9 of 10."""
    pipe = InformationPipeline()
    hits, n = 0, 10
    for r in range(n):
        run = shuffled_labels(dependent_ensemble(120, 12, signal=0.4, rho=0.4,
                                                 random_state=300 + r), random_state=r)
        boot = two_level_bootstrap(run, pipe, n_bootstrap=40, n_mc=2, random_state=r,
                                   progress=False)
        null = permutation_null(run, pipe, n_permutations=19, random_state=r, progress=False)
        hits += covers(null_corrected(boot["diversity"], null["diversity"])["corrected_ci"])
    assert hits / n >= min(0.90, binomial_floor(0.95, n))
