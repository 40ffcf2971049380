"""Gaussian and copula estimators against the closed forms of the ground-truth suite.

Every stochastic check judges the mean over fixed seeds against a tolerance of 4 standard errors
(sd over seeds / sqrt(seeds)), so a correct estimator does not fail by luck and a biased one
(e.g. without the log-det bias correction) does.
"""

from __future__ import annotations

import numpy as np
import pytest

from estimators import entropy, total_correlation
from estimators.gaussian import logdet_bias
from estimators.groundtruth import cases

SEEDS = 12
N = 1000
COPULA_ENTROPY_BIAS_NATS = 0.015  # per dimension at n=1000: m-spacing marginals (copula.py)


def _estimates(case, quantity, method, n=N, seeds=SEEDS, **kw):
    values = [quantity.estimate(case.sample(n, np.random.default_rng([s, 11])), method=method,
                                random_state=s, **kw) for s in range(seeds)]
    return np.asarray(values)


GAUSSIAN_CASES = [name for name in cases() if name.startswith("gaussian_")]


@pytest.mark.parametrize("method", ["gaussian", "copula"])
@pytest.mark.parametrize("name", GAUSSIAN_CASES)
def test_closed_forms(name, method):
    case = cases()[name]
    for q in case.quantities:
        values = _estimates(case, q, method)
        se = values.std(ddof=1) / np.sqrt(len(values))
        tol = 4 * se
        if method == "copula" and q.name == "H(X)":
            tol += 3 * COPULA_ENTROPY_BIAS_NATS / np.log(2)
        assert abs(values.mean() - q.true_bits) < tol, (name, q.name, values.mean(),
                                                        q.true_bits, se)


@pytest.fixture(scope="session")
def highdim():
    case = cases()["highdim_tc"]
    q = case.quantities[0]
    out = {m: _estimates(case, q, m, n=2000, seeds=20) for m in ("gaussian", "copula")}
    out["naive"] = _estimates(case, q, "gaussian", n=2000, seeds=20, bias_correction=False)
    return q.true_bits, out


@pytest.mark.parametrize("method", ["gaussian", "copula"])
def test_highdim_tc_within_two_percent(highdim, method, record_property):
    truth, out = highdim
    values = out[method]
    assert truth == pytest.approx(7.81, abs=0.005)
    spread = values.std(ddof=1) / truth
    record_property(f"{method}_mean_bits", float(values.mean()))
    record_property(f"{method}_seed_sd_relative", float(spread))
    print(f"{method}: TC mean {values.mean():.3f} bits (true {truth:.3f}), "
          f"seed-to-seed sd {100 * spread:.1f}%")
    assert abs(values.mean() / truth - 1) < 0.02
    assert abs(values.mean() - truth) < 4 * values.std(ddof=1) / np.sqrt(len(values))
    assert 0.02 < spread < 0.08  # the documented spread at this n (about 4%)


def test_bias_correction_is_needed_in_high_dimension(highdim):
    truth, out = highdim
    naive = out["naive"]
    se = naive.std(ddof=1) / np.sqrt(len(naive))
    assert naive.mean() - truth > 4 * se  # plug-in log dets overshoot
    assert abs(out["gaussian"].mean() - truth) < abs(naive.mean() - truth) / 5


def test_logdet_bias_matches_wishart_simulation():
    rng = np.random.default_rng(0)
    d, n, reps = 3, 12, 4000
    cov = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]])
    chol = np.linalg.cholesky(cov)
    x = rng.standard_normal((reps, n, d)) @ chol.T
    xc = x - x.mean(axis=1, keepdims=True)
    s = np.einsum("rni,rnj->rij", xc, xc) / (n - 1)
    diffs = np.linalg.slogdet(s)[1] - np.linalg.slogdet(cov)[1]
    se = diffs.std(ddof=1) / np.sqrt(reps)
    assert abs(diffs.mean() - logdet_bias(d, n)) < 4 * se
    assert logdet_bias(d, n) < -0.5  # a large effect at this n


def test_gaussian_needs_more_samples_than_dimensions():
    x = np.random.default_rng(0).standard_normal((5, 6))
    with pytest.raises(ValueError, match="n=5, d=6"):
        entropy(x, method="gaussian")


def test_duplicated_and_constant_columns_are_jittered():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 1))
    blocks = [a, a.copy(), rng.standard_normal((300, 1))]
    v1 = total_correlation(blocks, method="gaussian", random_state=1)
    v2 = total_correlation(blocks, method="gaussian", random_state=1)
    v3 = total_correlation(blocks, method="gaussian", random_state=2)
    assert np.isfinite(v1) and v1 > 10  # a copy: very large (truly infinite) dependence
    assert v1 == v2 and v1 != v3
    const = np.column_stack([rng.standard_normal(300), np.ones(300)])
    assert np.isfinite(total_correlation([const[:, :1], const[:, 1:]], method="copula",
                                         random_state=0))


def test_logdet_bias_ddof_and_schur_updates_equal_direct_logdets():
    from estimators.logdet import BackwardLogdet, ForwardLogdet, logdet, logdet_bias

    n, d = 50, 3
    assert logdet_bias(d, n, ddof=0) - logdet_bias(d, n, ddof=1) == pytest.approx(
        d * np.log((n - 1) / n))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 5 * 2)) @ rng.standard_normal((10, 10))
    cov = np.cov(x, rowvar=False, bias=True)
    ml, unbiased = logdet(cov, n, ddof=0), logdet(cov * n / (n - 1), n, ddof=1)
    assert ml == pytest.approx(unbiased, abs=1e-12)  # the corrected value ignores ddof

    def direct(members):
        dims = (np.asarray(members)[:, None] * 2 + np.arange(2)).ravel()
        return np.linalg.slogdet(cov[np.ix_(dims, dims)])[1]

    fwd = ForwardLogdet(cov, 2)
    for j in (3, 0, 4):
        fwd.add(j)
    chosen = [3, 0, 4]
    assert fwd.logdet == pytest.approx(direct(chosen), abs=1e-10)
    cands = [1, 2]
    assert fwd.candidate_logdets(cands) == pytest.approx(
        [direct(chosen + [j]) for j in cands], abs=1e-10)
    bwd = BackwardLogdet(cov, 2, range(5))
    bwd.remove(2)
    assert bwd.logdet == pytest.approx(direct([0, 1, 3, 4]), abs=1e-10)
    assert bwd.candidate_logdets([0, 4]) == pytest.approx(
        [direct([1, 3, 4]), direct([0, 1, 3])], abs=1e-10)


def test_one_logsumexp_is_finite_and_matches_scipy():
    from scipy.special import logsumexp as sp_lse

    from estimators.numerics import log_softmax, logsumexp

    rng = np.random.default_rng(1)
    z = rng.normal(size=(4, 3, 7)) * 1e4
    for axis in (-1, 1, 0):
        np.testing.assert_allclose(logsumexp(z, axis), sp_lse(z, axis=axis), rtol=1e-13)
        np.testing.assert_allclose(log_softmax(z, axis), z - sp_lse(z, axis=axis,
                                                                    keepdims=True),
                                   rtol=1e-12, atol=1e-9)
    lse, e, s = logsumexp(z.copy(), 1, overwrite=True, return_terms=True)
    np.testing.assert_allclose(e / s[:, None], np.exp(z - sp_lse(z, axis=1, keepdims=True)),
                               atol=1e-15)
    one = rng.normal(size=(5, 1))
    assert logsumexp(one.copy(), -1, overwrite=True) == pytest.approx(one[:, 0])
