"""The solvers behind usable information: the ridge path with inner cross-validation, the
compiled per-member probes, the fold normal scores and the principal components agree with
independent reference computations; the decomposition is deterministic, never above H(Y),
about 0 on independent labels and right on a case with a known answer."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from estimators import _logistic, information_decomposition
from estimators import _probe_families as fam
from estimators._member_fits import fold_normal_scores
from estimators.members_truth import MemberModel, tolerance, truth
from estimators.relevancy import member_pointwise
from estimators.usable import _folds


def _classes(n, d, k, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = (scale * x @ rng.standard_normal((d, k)) + rng.gumbel(size=(n, k))).argmax(axis=1)
    return x, y


def _exact(x, y, lam, k):
    """Reference: one problem fitted alone from zero, to a tight tolerance."""
    return _logistic.fit(x[None], np.eye(k)[y][None], lam, tol=1e-14)[0]


def test_fit_matches_scikit_learn_without_penalty():
    from sklearn.linear_model import LogisticRegression

    x, y = _classes(400, 3, 4, 0)
    w = _exact(x, y, 1e-9, 4)
    ref = LogisticRegression(C=1e9, max_iter=10000, tol=1e-12).fit(x, y).predict_log_proba(x)
    assert np.abs(_logistic.log_proba(w[None], x[None])[0] - ref).max() < 1e-5


def test_path_matches_independent_fits_of_every_part_and_strength():
    # the warm-started batch (two sets, shared Hessians) against each inner part and the
    # whole set fitted alone from zero at every strength
    lams = 1.0 / np.array([1e-2, 1.0, 100.0])
    sets = [_classes(300, 4, 3, seed, scale=2.0) for seed in (1, 2)]
    z = np.stack([x for x, _ in sets])
    y = np.stack([yy for _, yy in sets])
    groups = np.stack([np.arange(300) % 3, (np.arange(300) // 7) % 3])
    scores, weights, _ = _logistic.path_fit(z, y, groups, lams, 3)
    for s in range(2):
        ref = np.zeros(len(lams))
        for li, lam in enumerate(lams):
            for j in range(3):
                tr, te = groups[s] != j, groups[s] == j
                w = _exact(z[s][tr], y[s][tr], lam, 3)
                logq = _logistic.log_proba(w[None], z[s][te][None])[0]
                ref[li] -= logq[np.arange(te.sum()), y[s][te]].sum()
        assert np.abs(scores[s] - ref).max() < 1e-3
        best = int(np.argmin(ref))
        whole = _exact(z[s], y[s], lams[best], 3)
        assert np.abs(_logistic.log_proba(weights[s][None], z[s][None])
                      - _logistic.log_proba(whole[None], z[s][None])).max() < 1e-7


def test_member_probes_match_independent_fits():
    # every member and fold, both families, against the batched numpy solver on the same
    # standardised / normal-score features; the family is the lower training NLL (AIC)
    rng = np.random.default_rng(3)
    n, b, d, k = 300, 3, 3, 3
    y = rng.integers(0, k, n)
    v = rng.standard_normal((b, n, d)) + 0.8 * np.eye(k)[y][None, :, :d]
    v[2] = np.sinh(2 * v[2])                       # heavy tails: the rank family's case
    folds = _folds(y, 3, np.random.default_rng(0))
    got, chosen = member_pointwise(v, y, k, folds)
    ref = np.zeros((b, n))
    for f, (tr, te) in enumerate(folds):
        for i in range(b):
            fits = []
            for transform in (fam.standardize, fam.normal_scores):
                a_tr, a_te = transform(v[i, tr], v[i, te])
                w = _exact(a_tr, y[tr], 1e-3, k)
                nll = -_logistic.log_proba(w[None], a_tr[None])[0][np.arange(len(tr)), y[tr]]
                held = _logistic.log_proba(w[None], a_te[None])[0][np.arange(len(te)), y[te]]
                fits.append((nll.sum(), held))
            best = int(np.argmin([a for a, _ in fits]))
            assert chosen[f, i] == best
            ref[i, te] = fits[best][1]
    assert np.abs(got - ref).max() < 1e-4
    assert abs((got - ref).mean()) < 1e-7


def test_fold_normal_scores_match_ranks_and_the_training_ecdf():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((200, 4))
    x[:, 1] = np.round(x[:, 1])                   # ties
    x[:, 2] = 3.0                                 # a constant column
    train = rng.random((2, 200)) < 0.7
    got = fold_normal_scores(x, train)
    for f in range(2):
        tr = train[f]
        ref_tr = stats.norm.ppf(stats.rankdata(x[tr], axis=0) / (tr.sum() + 1))
        grid = np.arange(1, tr.sum() + 1) / (tr.sum() + 1)
        ref_te = np.stack([stats.norm.ppf(np.interp(x[~tr, j], np.sort(x[tr, j]), grid))
                           for j in range(4)], axis=1)
        assert np.abs(got[:, f, tr].T - ref_tr).max() < 1e-12
        assert np.abs(got[:, f, ~tr].T - ref_te).max() < 1e-12


@pytest.mark.parametrize("d", [60, 500, 900])
def test_principal_components_match_the_svd(d):
    # dense eigendecomposition, Lanczos on the covariance, Lanczos on the Gram matrix
    rng = np.random.default_rng(d)
    n = 300 if d == 900 else 1000
    x = rng.standard_normal((n + 50, 15)) @ rng.standard_normal((15, d))
    x += 0.3 * rng.standard_normal(x.shape)
    tr, te = x[:n], x[n:]
    got_tr, got_te = fam._reduce(tr, te)
    centred = tr - tr.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    k = fam.MAX_COMPONENTS
    basis = vt[:k].T * (np.sqrt(n) / s[:k])
    sign = np.sign((got_tr * (centred @ basis)).sum(axis=0))
    assert np.abs(got_tr * sign - centred @ basis).max() < 1e-8
    assert np.abs(got_te * sign - (te - tr.mean(axis=0)) @ basis).max() < 1e-8


def test_decomposition_is_deterministic_and_below_the_label_entropy():
    model = MemberModel("t", 4, 6, 3.0)
    u, y = model.sample(600, np.random.default_rng(0))
    a = information_decomposition(u, y, random_state=5)
    b = information_decomposition(u, y, random_state=5)
    c = information_decomposition(u, y, random_state=6)
    assert a.to_dict() == b.to_dict()
    assert np.array_equal(a.joint_pointwise, b.joint_pointwise)
    assert a.joint != c.joint
    assert a.joint <= a.h_y and a.joint_interval[1] <= a.h_y and a.joint_upper <= a.h_y
    assert all(r <= a.h_y for r in a.relevancies_raw)


def test_known_information_within_tolerance():
    model = MemberModel("t", 4, 6, 2.5)
    tr = truth(model)
    u, y = model.sample(2000, np.random.default_rng(1))
    d = information_decomposition(u, y, random_state=1)
    for key in ("joint", "relevancy", "diversity"):
        assert abs(getattr(d, key) - tr[key]) <= tolerance(tr[key]), key


def test_independent_labels_read_about_zero():
    # 12 correlated members (a shared nuisance), labels drawn apart from them: every term 0
    model = MemberModel("t", 4, 12, 2.5)
    values = []
    for seed in range(3):
        u, _ = model.sample(800, np.random.default_rng([seed, 1]))
        y = np.random.default_rng([seed, 2]).integers(0, 4, 800)
        d = information_decomposition(u, y, random_state=seed)
        values.append((d.joint, d.relevancy, d.diversity))
    mean = np.mean(values, axis=0)
    assert np.all(np.abs(mean) < 0.03), mean


def test_member_null_draws_are_independent_across_members():
    # identical members: one permutation for all of them would give them the same null
    # terms; the pooled null mean needs independent draws
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    one = rng.standard_normal((400, 1, 2)) + 0.5 * y[:, None, None]
    u = np.repeat(one, 5, axis=1)
    from estimators.relevancy import member_relevancies

    folds = _folds(y, 5, np.random.default_rng(0))
    perms = [np.stack([rng.permutation(400) for _ in range(5)])]
    log_prior = np.log(np.bincount(y) / 400)[y]
    rel = member_relevancies(u, y, 2, folds, log_prior, perms=perms, to_units=lambda v: v)
    assert np.ptp(rel.values) < 1e-12             # the members are the same
    assert np.ptp(rel.null_values[0]) > 1e-4      # their null draws are not
