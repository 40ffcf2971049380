"""The compiled calibration Newton (infodiv.setfunctions._newton): a problem's fit does not
depend on its batch, and the returned point satisfies the first-order condition computed
independently on the [n, C] layout."""

import numpy as np
import pytest

from infodiv.setfunctions import fit_calibration


def batch(c, k=9, n=257, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    z = rng.normal(size=(k, c, n)) + rng.uniform(-2, 2, size=(k, 1, 1)) * (np.arange(c)[:, None]
                                                                            == y)
    z[::3] *= 40.0           # nearly separable: large a, saturated softmax
    z[1::4] += rng.normal(size=(c, 1)) * 6   # large per-option offsets
    return z, y


def gradient(z, y, a, off):
    """Mean-cross-entropy gradient in (a, c_1..c_{C-1}) by brute force on [n, C] logits."""
    x = z.T                                            # [n, C]
    lg = a * x + off
    q = np.exp(lg - lg.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    r = q - np.eye(z.shape[0])[y]
    return np.r_[(r * x).sum(axis=1).mean(), r[:, 1:].mean(axis=0)]


@pytest.mark.parametrize("c", [2, 3, 5])
def test_fit_of_a_problem_does_not_depend_on_its_batch(c):
    z, y = batch(c)
    a, off, info = fit_calibration(z, y, return_info=True)
    assert info["converged"].all()
    for chunk in (1, 3 * c * z.shape[2], 1 << 20):
        a2, o2 = fit_calibration(z, y, chunk_elements=chunk)
        assert np.array_equal(a, a2) and np.array_equal(off, o2)
    for k in range(z.shape[0]):      # alone, and inside another batch
        a1, o1 = fit_calibration(z[k:k + 1], y)
        assert a1[0] == a[k] and np.array_equal(o1[0], off[k])
    order = np.random.default_rng(1).permutation(z.shape[0])
    a3, o3 = fit_calibration(z[order], y)
    assert np.array_equal(a3, a[order]) and np.array_equal(o3, off[order])


@pytest.mark.parametrize("c", [2, 4])
def test_returned_point_is_stationary_within_the_newton_tolerance(c):
    z, y = batch(c, seed=c)
    gtol = 1e-10
    for init in (None, (0.5, np.zeros(c)), (-2.0, np.arange(c, dtype=float))):
        a, off, info = fit_calibration(z, y, init=init, gtol=gtol, return_info=True)
        assert info["converged"].all() and np.all(off[:, 0] == 0)
        for k in range(z.shape[0]):
            zs = z[k] - z[k].max(axis=0)
            spread = np.sqrt(np.mean(zs ** 2) - np.mean(zs.mean(axis=0) ** 2))
            g = gradient(z[k], y, a[k], off[k])
            # the solver's scaled criterion, recomputed: |∂/∂a| / spread and |∂/∂c_j| <= gtol
            # (a few ulps of slack: the solver's sums are reordered)
            assert abs(g[0]) / spread <= 2 * gtol and np.abs(g[1:]).max() <= 2 * gtol


def test_bad_labels_are_refused_before_the_compiled_loop():
    z, y = batch(3, k=2, n=20)
    with pytest.raises(ValueError, match=r"y must hold 20 labels in \[0, 3\)"):
        fit_calibration(z, np.where(y == 0, 3, y))
    with pytest.raises(ValueError, match="y must hold 20 labels"):
        fit_calibration(z, y[:-1])


def test_member_indicator_equals_the_per_set_check():
    from infodiv.setfunctions.base import check_members, member_indicator

    rng = np.random.default_rng(4)
    sets = [rng.choice(9, size=k, replace=False) for k in (0, 1, 3, 9, 5)] + [[], [2, 7]]
    ref = np.zeros((len(sets), 9))
    for row, s in zip(ref, sets):
        row[check_members(s, 9)] = 1.0
    assert np.array_equal(member_indicator(sets, 9), ref)
    mask = np.zeros(9, dtype=bool)
    mask[[1, 4]] = True
    assert np.array_equal(member_indicator([mask, [1, 4]], 9)[0], member_indicator([[1, 4]], 9)[0])
    with pytest.raises(ValueError, match=r"must lie in \[0, 9\), got range \[0, 9\]"):
        member_indicator([[0, 1], [9]], 9)
    with pytest.raises(ValueError, match=r"duplicated members: \[3, 5, 3\]"):
        member_indicator([[0, 1], [3, 5, 3]], 9)
