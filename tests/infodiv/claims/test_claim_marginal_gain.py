"""The marginal-gain claim (infodiv.claims.marginal_gain): a member's gain against its measured
redundancy with the set, I(x;Y) − I(x;Y|U_S).

- the LDA probe equals scikit-learn's linear discriminant analysis, and the claim's
  redundancies and partial r equal the chain rule and an OLS-residual correlation by hand;
- on a run with planted redundancy the engine detects it, its power on the matched surrogate
  is high, and its shuffled-label rate stays at most nominal (the rule is calibrated).
"""

from __future__ import annotations

import numpy as np
import pytest

from estimators.relevancy import lda_log_proba, probe_informations
from infodiv.claims import CLAIMS, marginal_gain
from infodiv.controls import conditionally_independent_ensemble
from infodiv.inference.claim import Design, Replicate
from infodiv.inference.engine import evaluate
from infodiv.inference.surrogates import planted_redundancy

NAME = "marginal_gain_redundancy"
DESIGN = Design("accuracy_calibrated", n_orders=4, n_triples=40)


@pytest.fixture(scope="module")
def base():
    return conditionally_independent_ensemble(500, 8, mu=0.4, random_state=0)


@pytest.fixture(scope="module")
def planted(base):
    return planted_redundancy(base, 4, random_state=1)


def test_lda_probe_equals_sklearn(monkeypatch):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    import estimators.relevancy as relevancy

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    v = rng.standard_normal((400, 3)) + np.eye(3)[y] * 0.8
    v[:, 1] += 0.5 * v[:, 0]
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(v[:300], y[:300])
    want = ref.predict_log_proba(v[300:])
    got = lda_log_proba(v[None, :300], y[:300], v[None, 300:], 3)[0]
    np.testing.assert_allclose(got, want, atol=2e-2)     # with its small ridge
    monkeypatch.setattr(relevancy, "LDA_RIDGE", 0.0)
    got = lda_log_proba(v[None, :300], y[:300], v[None, 300:], 3)[0]
    np.testing.assert_allclose(got, want, atol=1e-9)     # without it: sklearn's fit exactly
    monkeypatch.undo()
    values, terms = probe_informations(np.stack([v, rng.standard_normal((400, 3))]), y)
    assert values[0] > 0.2 and abs(values[1]) < 0.05
    assert np.allclose(terms.mean(axis=1), values)
    with pytest.raises(ValueError, match="n_splits"):
        probe_informations(v[None], y, n_splits=1)


def test_redundancy_and_partial_r_by_hand(planted):
    from estimators.relevancy import probe_informations as probe

    rep = Replicate(planted, DESIGN, np.random.default_rng(5))
    pairs = marginal_gain.pairs_of(rep)
    assert 8 <= len(pairs) <= marginal_gain.MAX_PAIRS and all(len(s) for _, _, s, _ in pairs)
    red = marginal_gain.redundancies(rep)
    u = planted.u.astype(np.float64)
    _, _, s, x = pairs[3]
    xs = sorted({p[3] for p in pairs})
    feats = np.stack([u[:, j] for j in xs] + [u[:, p[2]].sum(axis=1) for p in pairs]
                     + [u[:, np.append(p[2], p[3])].sum(axis=1) for p in pairs])
    vals, _ = probe(feats, planted.labels, random_state=rep.seed)
    want = vals[xs.index(x)] + vals[len(xs) + 3] - vals[len(xs) + len(pairs) + 3]
    assert red[3] == pytest.approx(want, abs=1e-12)      # I(x) + I(S) − I(S+x)
    # partial r = correlation of the OLS residuals of gain and redundancy on the controls
    f = rep.f
    gains = np.array([f.value(np.append(s, x)) - f.value(s) for _, _, s, x in pairs])
    single = np.array([f.value(np.array([x])) - f.value(np.zeros(0, dtype=np.int64))
                       for *_, x in pairs])
    z = np.column_stack([np.ones(len(pairs)), single, [len(s) for _, _, s, _ in pairs]])
    rg = gains - z @ np.linalg.lstsq(z, gains, rcond=None)[0]
    rr = red - z @ np.linalg.lstsq(z, red, rcond=None)[0]
    assert marginal_gain.partial_r(rep) == pytest.approx(np.corrcoef(rg, rr)[0, 1], abs=1e-9)
    assert marginal_gain.partial_r(rep) < -0.3        # planted: redundant pairs gain less


@pytest.fixture(scope="module")
def planted_record(planted):
    return evaluate(planted, [CLAIMS[NAME]], DESIGN, n_bootstrap=20, n_permutations=39,
                    n_mc=2, n_power=20, random_state=0)["records"][NAME]


def test_detects_its_matched_case_and_is_calibrated(planted_record):
    rec = planted_record
    assert rec.direction == "less" and rec.interval[0] <= rec.estimate <= rec.interval[1]
    assert rec.detected and rec.finding
    assert rec.power["rate"] >= 0.7                      # planted redundancy from the run
    # shuffled labels: fires at most at its nominal rate
    assert rec.false_positive["n_detected"] <= 2 and rec.calibrated


def test_registered_and_applies(base):
    assert CLAIMS[NAME] is marginal_gain.CLAIM
    assert "n_triples" in marginal_gain.CLAIM.applies(base, Design(n_triples=0))
    assert marginal_gain.CLAIM.applies(base, DESIGN) is None
