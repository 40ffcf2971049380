"""The matched design of ``infodiv validate --like`` (:mod:`estimators.matched`): its truths,
its fit to a known model, its marginals; and the verdict rule (:mod:`estimators.verdicts`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from estimators import total_correlation
from estimators.matched import design_truth, fit_design, recommend, score
from estimators.members_truth import MemberModel, truth
from estimators.verdicts import legend, tolerance, verdict

KNOWN = MemberModel("known", 3, 6, 2.0)


def _known_sample(n=600, seed=0):
    return KNOWN.sample(n, np.random.default_rng(seed))


def _posterior_mc(design, cols, n=40000, seed=5):
    """``I(X_cols; Y)`` (bits) from the full class-conditional Gaussian densities of latent
    draws, with its standard error: no sufficient statistic."""
    x, _, k = design.sample_latent(n, np.random.default_rng(seed))
    cov = design.cov[np.ix_(cols, cols)]
    diff = x[:, None, cols] - design.means[None][:, :, cols]
    quad = np.einsum("nkd,de,nke->nk", diff, np.linalg.inv(cov), diff)
    logits = np.log(design.prior) - 0.5 * quad
    terms = (logits[np.arange(n), k] - logsumexp(logits, axis=1)
             - np.log(design.prior[k])) / np.log(2)
    return terms.mean(), terms.std(ddof=1) / np.sqrt(n)


def test_truth_matches_posteriors_in_the_full_space():
    design = fit_design(*_known_sample())
    tr = design_truth(design, n_mc=100_000)
    value, se = _posterior_mc(design, np.arange(design.means.shape[1]))
    assert abs(value - tr["joint"]) < 4 * np.hypot(se, tr["joint_se"])
    cols = design.member_slices()[2]
    value, se = _posterior_mc(design, cols)
    assert abs(value - tr["relevancies"][2]) < 4 * np.hypot(se, tr["relevancies_se"][2])
    assert tr["diversity"] == pytest.approx(tr["joint"] - sum(tr["relevancies"]))
    assert tr["tc"] == pytest.approx(tr["tc_given_y"] - tr["diversity"])
    assert 0 < tr["joint"] < tr["h_y"]


def test_design_fitted_to_a_known_model_recovers_its_information():
    tr_model = truth(KNOWN)
    tr = design_truth(fit_design(*_known_sample(2000)), n_mc=50_000)
    assert tr["joint"] == pytest.approx(tr_model["joint"], abs=0.06)
    assert tr["relevancy"] == pytest.approx(tr_model["relevancy"], rel=0.05)
    assert np.corrcoef(tr["relevancies"], tr_model["relevancies"])[0, 1] > 0.95


def test_sampling_noise_of_the_class_means_is_removed():
    rng = np.random.default_rng(0)
    u = rng.standard_normal((300, 8, 3)) + rng.standard_normal((300, 1, 3))
    y = rng.integers(0, 3, 300)           # labels independent of the members: I = 0
    tr = design_truth(fit_design(u, y), n_mc=40_000)
    assert tr["joint"] < 0.05 and tr["relevancy"] < 0.05   # raw class means give about 0.11


def test_tc_given_the_class_is_the_closed_form():
    design = fit_design(*_known_sample(), marginals="gaussian")
    tr = design_truth(design, n_mc=10_000)
    u, y = design.sample(20000, np.random.default_rng(1))
    est = total_correlation(list(np.moveaxis(u, 1, 0)), given=y, method="gaussian")
    assert est == pytest.approx(tr["tc_given_y"], rel=0.02)


def test_marginals_are_the_runs_and_the_map_is_monotone():
    u, y = _known_sample()
    u[:, 0, 1] = np.exp(3 * u[:, 0, 1])       # a heavy-tailed coordinate
    u[:, 1, :] = 0.5                           # a constant member
    design = fit_design(u, y)
    x, _, _ = design.sample_latent(4000, np.random.default_rng(2))
    mapped = design.transform(x)
    assert all(np.array_equal(np.argsort(x[:, j]), np.argsort(mapped[:, j]))
               for j in range(x.shape[1]))
    s, _ = design.sample(4000, np.random.default_rng(2))
    q = np.array([0.1, 0.5, 0.9])            # the design's CDF at the run's quantiles
    below = (s[:, 0, 1, None] < np.quantile(u[:, 0, 1], q)).mean(axis=0)
    assert below == pytest.approx(q, abs=0.04)
    assert np.all(s[:, 1, :] == 0.5)
    tr = design_truth(design, n_mc=10_000)
    assert tr["relevancies"][1] == 0.0


def test_verdict_rule_and_its_legend():
    h_y = 2.0
    assert tolerance(1.0, h_y) == pytest.approx(0.1)      # 5 % of H(Y) beats 10 % of 1 bit
    assert tolerance(40.0, h_y) == pytest.approx(4.0)
    assert verdict([1.05, 0.95, 1.0], 1.0, h_y=h_y)[0] == "trust"
    assert verdict([1.2, 1.2], 1.0, h_y=h_y)[0] == "usable with caution"
    assert verdict([1.3, 1.3], 1.0, h_y=h_y)[0] == "do not use"
    assert verdict([1.0, 1.0, 1.0], 1.0, h_y=h_y, covered=[False, False, True])[0] \
        == "usable with caution"
    assert verdict([1.0, 1.0, 1.0], 1.0, h_y=h_y, covered=[True, False, True])[0] == "trust"
    assert verdict([2.1, 2.1], 1.95, h_y=h_y, cap=h_y)[0] == "do not use"
    # near the ceiling reading H(Y) is close to the truth; permuted labels expose it
    assert verdict([2.0, 2.0], 1.9, h_y=h_y)[0] == "trust"
    judged = verdict([2.0, 2.0], 1.9, h_y=h_y, null=[1.99])
    assert judged[0] == "do not use" and "permuted" in judged[1]
    assert verdict([1.8, 1.8], 1.8, h_y=h_y, null=[0.01])[0] == "trust"
    assert verdict([], 1.0, refused="too few samples") == ("do not use",
                                                           "refused: too few samples")
    text = legend(h_y)
    assert "10% of |truth|" in text and "0.100 bits" in text and "0.250 bits" in text
    assert "not expected" not in text


@pytest.mark.slow
def test_score_trusts_the_default_and_not_the_histogram():
    design = fit_design(*_known_sample())
    tr = design_truth(design, n_mc=50_000)
    rows = score(design, tr, ["usable", "binned"], replicates=2)
    by = {(r["method"], r["quantity"]): r for r in rows}
    assert by[("usable", "I(U;Y)")]["verdict"] == "trust"
    assert by[("binned", "I(U;Y)")]["verdict"] == "do not use"   # every row its own bin
    assert ("usable", "TC(U)") not in by and ("binned", "TC(U)") in by
    assert abs(by[("usable", "I(U;Y)")]["null_bits"]) < 0.05
    assert by[("binned", "I(U;Y)")]["null_bits"] > 1.0
    assert recommend(rows)["I(U;Y)"]["methods"][0] == "usable"
