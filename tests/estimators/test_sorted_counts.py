"""Sorted / Fenwick-tree neighbour counts equal direct O(n^2) counts and the kd-tree counts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from estimators import _neighbors, _sorted_counts

pytestmark = pytest.mark.skipif(not _sorted_counts.AVAILABLE, reason="numba not importable")


def _direct(x, r, strict):
    dist = cdist(x, x, "chebyshev")
    np.fill_diagonal(dist, np.inf)
    inside = dist < r[:, None] if strict else dist <= r[:, None]
    holds_zero = r > 0 if strict else r >= 0
    return np.where(holds_zero, inside.sum(axis=1), 0)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("kind", ["normal", "ties", "cauchy", "zero_and_negative_radii"])
@pytest.mark.parametrize("strict", [True, False])
def test_counts_equal_direct_evaluation(d, kind, strict):
    rng = np.random.default_rng([d, len(kind), strict])
    n = 400
    x = rng.standard_cauchy((n, d)) if kind == "cauchy" else rng.standard_normal((n, d))
    if kind == "ties":
        x = np.round(x, 1)  # many exact ties and radii equal to exact distances
    dist = np.sort(cdist(x, x, "chebyshev") + np.diag(np.full(n, np.inf)), axis=1)
    r = dist[np.arange(n), rng.integers(0, 40, n)]  # radii equal to actual distances
    if kind == "zero_and_negative_radii":
        r[:20], r[20:40] = 0.0, -1.0
    np.testing.assert_array_equal(_sorted_counts.count_sorted(x, r, strict=strict),
                                  _direct(x, r, strict))


def test_count_within_sorted_path_equals_kdtree_path(monkeypatch):
    x = np.random.default_rng(3).standard_normal((3000, 2))
    r = np.abs(np.random.default_rng(4).standard_normal(3000)) * 0.2
    fast = _neighbors.count_within(x, r)
    monkeypatch.setattr(_sorted_counts, "AVAILABLE", False)
    np.testing.assert_array_equal(fast, _neighbors.count_within(x, r))
