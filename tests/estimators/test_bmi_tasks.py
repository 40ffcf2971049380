"""estimators.bmi: the Czyż et al. (2023) tasks' closed-form truths and samplers."""

from __future__ import annotations

import numpy as np
import pytest

from estimators import bmi


def test_truths_match_the_benchmark():
    t = bmi.tasks()
    expected = {"student-identity-2-2-1": 0.4319, "student-identity-5-5-2": 0.4482,
                "asinh-student-identity-3-3-2": 0.2909, "spiral-multinormal-sparse-5-5": 1.0217,
                "multinormal-sparse-5-5": 1.0217, "multinormal-sparse-25-25": 1.0217}
    assert {k: round(v.true_nats, 4) for k, v in t.items()} == expected
    assert bmi.student_t_mi(2, 2, 1e7) == pytest.approx(0.0, abs=1e-6)  # Gaussian limit
    # 1-D Cauchy entropy is log(4 pi)
    assert bmi.student_t_entropy(1, 1) == pytest.approx(np.log(4 * np.pi), rel=1e-12)


def test_samplers():
    t = bmi.tasks()
    x, y = t["multinormal-sparse-5-5"].sample(20000, 0)
    c = np.corrcoef(x.T, y.T)[:5, 5:]
    assert np.diag(c)[:2] == pytest.approx([0.8, 0.8], abs=0.02)
    assert np.abs(c - np.diag(np.diag(c))).max() < 0.03 and abs(c[2, 2]) < 0.03
    x, _ = t["student-identity-2-2-1"].sample(20000, 1)
    assert np.median(np.abs(x[:, 0])) == pytest.approx(1.0, abs=0.05)  # Cauchy marginal
    a, b = t["student-identity-2-2-1"].sample(100, 3)
    a2, b2 = t["student-identity-2-2-1"].sample(100, 3)
    np.testing.assert_array_equal(a, a2)


def test_spiral_is_an_invertible_norm_preserving_map():
    v = np.random.default_rng(0).standard_normal((500, 5))
    w = bmi._spiral(v, 0, 1, 0.2)
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), np.linalg.norm(v, axis=1), rtol=1e-12)
    np.testing.assert_allclose(bmi._spiral(w, 0, 1, -0.2), v, atol=1e-12)
    assert np.abs(w - v).max() > 0.5
