"""Synthetic members with a known answer: the truth, the warp, a tiny suite run, the CLI and
the usable-information set function."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import logsumexp

from estimators import usable_information
from estimators.members_truth import MemberModel, member_cases, run_case, truth
from infodiv.cli import main
from infodiv.setfunctions import make_set_function

TINY = MemberModel("tiny", 2, 3, 2.0)


def _posterior_mc(model: MemberModel, cols, n=40000, seed=3):
    """``I(U_cols; Y)`` in bits from the full-dimensional class-conditional Gaussian
    densities on sampled members (no sufficient statistic), with its standard error."""
    mu, prior, b, s = model.params
    k = model.n_classes
    cov = b @ b.T + s @ s.T + model.sigma ** 2 * np.eye(len(b))
    u, y = model.sample(n, np.random.default_rng(seed))
    x = u.reshape(n, -1)[:, cols]
    c = cov[np.ix_(cols, cols)]
    means = (mu @ b.T)[:, cols]
    diff = x[:, None, :] - means[None]
    quad = np.einsum("nkd,de,nke->nk", diff, np.linalg.inv(c), diff)
    logits = np.log(prior) - 0.5 * quad
    terms = (logits[np.arange(n), y] - logsumexp(logits, axis=1) - np.log(prior[y])) / np.log(2)
    assert k == logits.shape[1]
    return terms.mean(), terms.std(ddof=1) / np.sqrt(n)


def test_truth_matches_posteriors_in_the_full_member_space():
    model = member_cases()["binary_M4"]
    tr = truth(model)
    value, se = _posterior_mc(model, np.arange(8))
    assert abs(value - tr["joint"]) < 4 * np.hypot(se, tr["joint_se"])
    value, se = _posterior_mc(model, np.arange(2, 4))  # member 1
    assert abs(value - tr["relevancies"][1]) < 4 * np.hypot(se, tr["joint_se"])
    assert tr["diversity"] == pytest.approx(tr["joint"] - tr["relevancies"].sum())
    assert tr["joint"] <= tr["h_y"]


def test_warp_is_monotone_per_coordinate():
    plain = member_cases()["four_M8"]
    warped = member_cases()["four_M8_warped"]
    a, ya = plain.sample(500, np.random.default_rng(0))
    b, yb = warped.sample(500, np.random.default_rng(0))
    assert np.array_equal(ya, yb)
    for j in range(a.shape[1] * a.shape[2]):
        col_a, col_b = a.reshape(500, -1)[:, j], b.reshape(500, -1)[:, j]
        assert np.array_equal(np.argsort(col_a), np.argsort(col_b))
    assert not np.allclose(a, b)


def test_tiny_suite_within_tolerance():
    rows = run_case(TINY, 800, range(2), n_null=1)
    assert [r["quantity"] for r in rows] == ["I(U;Y)", "R = sum I(U_m;Y)", "D = I - R"]
    assert all(r["all_within"] for r in rows), rows
    assert rows[0]["above_h_y"] == 0
    # the printed error is the mean estimate minus the truth, recomputed
    tr = truth(TINY)
    assert rows[0]["error_bits"] == pytest.approx(np.mean(rows[0]["estimates"]) - tr["joint"])


def test_validate_members_cli(capsys):
    rc = main(["validate", "--suite", "members", "--cases", "binary_M4", "--n", "600",
               "--seeds", "1"])
    out = capsys.readouterr().out
    assert rc == 0 and "binary_M4" in out and "I(U;Y)" in out and "bracket" in out
    assert main(["validate", "--suite", "members", "--methods", "knn"]) == 2
    assert main(["validate", "--suite", "members", "--cases", "nope"]) == 2


def test_usable_set_function():
    u, y = TINY.sample(400, np.random.default_rng(1))
    run = SimpleNamespace(u=u, labels=y, bias=np.zeros(3), members=["a", "b", "c"])
    f = make_set_function(run, "mi_usable")
    assert f.value([]) == 0.0
    assert f.value([0, 2]) == pytest.approx(
        usable_information(u[:, [0, 2]], y, bracket=False).estimate, abs=1e-12)
    assert f.restrict(np.arange(200)).n_examples == 200


def test_valid_terms_bound_the_bayes_error_of_the_synthetic_members():
    from infodiv.information import valid_terms

    u, y = TINY.sample(800, np.random.default_rng(2))
    terms = valid_terms(u, y)
    # the Bayes error of the exact posterior, by Monte Carlo on fresh samples
    mu, prior, b, s = TINY.params
    cov = b @ b.T + s @ s.T + TINY.sigma ** 2 * np.eye(len(b))
    big_u, big_y = TINY.sample(50000, np.random.default_rng(9))
    w = np.linalg.solve(cov, (mu @ b.T).T)
    scores = big_u.reshape(50000, -1) @ w - 0.5 * np.einsum("kd,dk->k", mu @ b.T, w)
    bayes_error = np.mean(scores.argmax(axis=1) != big_y)
    assert terms["error_lower_bound"] <= bayes_error <= terms["error_upper_bound"]
    assert terms["joint"] <= terms["h_y"] and terms["method"] == "usable"
