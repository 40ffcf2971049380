"""Plug-in estimators on discrete data against dit, and the exact plug-in identities."""

from __future__ import annotations

from itertools import combinations

import dit
import numpy as np
import pytest
from dit.multivariate import coinformation
from dit.multivariate import total_correlation as dit_tc

from estimators import (
    conditional_mutual_information,
    discrete,
    entropy,
    information_decomposition,
    interaction_information,
    mutual_information,
    total_correlation,
)

N_DISTRIBUTIONS = 12  # x 2 (exact and sampled) = 24 joint distributions


def _exact_sample(seed):
    """A data set whose empirical pmf is exactly a random pmf with rational probabilities."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 4, size=4)
    cells = np.stack(np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij"), -1)
    cells = cells.reshape(-1, 4)
    counts = rng.integers(0, 6, size=len(cells))
    counts[rng.integers(len(cells))] += 1  # never all zero
    return np.repeat(cells, counts, axis=0)


def _drawn_sample(seed, n=5000):
    """n draws from a random (Dirichlet) pmf over a random 4-variable alphabet."""
    rng = np.random.default_rng(1000 + seed)
    sizes = rng.integers(2, 4, size=4)
    cells = np.stack(np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij"), -1)
    cells = cells.reshape(-1, 4)
    pmf = rng.dirichlet(np.full(len(cells), 0.5))
    return cells[rng.choice(len(cells), size=n, p=pmf)]


def _dit(data):
    """dit Distribution of the empirical pmf of the rows of ``data``."""
    rows, counts = np.unique(data, axis=0, return_counts=True)
    return dit.Distribution([tuple(int(v) for v in r) for r in rows], counts / counts.sum())


SAMPLES = ([pytest.param(_exact_sample, s, id=f"exact{s}") for s in range(N_DISTRIBUTIONS)]
           + [pytest.param(_drawn_sample, s, id=f"drawn{s}") for s in range(N_DISTRIBUTIONS)])


@pytest.mark.parametrize(("make", "seed"), SAMPLES)
def test_plugin_equals_dit(make, seed):
    data = _exact_sample(seed) if make is _exact_sample else _drawn_sample(seed)
    d = _dit(data)
    cols = [data[:, i] for i in range(4)]
    tol = 1e-10
    assert entropy(data) == pytest.approx(dit.shannon.entropy(d), abs=tol)
    assert entropy(cols[2]) == pytest.approx(dit.shannon.entropy(d, [2]), abs=tol)
    assert mutual_information(cols[0], cols[1]) == pytest.approx(
        coinformation(d, [[0], [1]]), abs=tol)
    # vector-valued (multi-column) discrete variables
    assert mutual_information(data[:, :2], data[:, 2:]) == pytest.approx(
        coinformation(d, [[0, 1], [2, 3]]), abs=tol)
    assert conditional_mutual_information(cols[0], cols[1], cols[2]) == pytest.approx(
        coinformation(d, [[0], [1]], [2]), abs=tol)
    assert conditional_mutual_information(cols[0], cols[1], data[:, 2:]) == pytest.approx(
        coinformation(d, [[0], [1]], [2, 3]), abs=tol)
    assert total_correlation(cols) == pytest.approx(dit_tc(d), abs=tol)
    assert total_correlation([data[:, :2], cols[2], cols[3]]) == pytest.approx(
        dit_tc(d, [[0, 1], [2], [3]]), abs=tol)
    assert total_correlation(cols[:3], given=cols[3]) == pytest.approx(
        dit_tc(d, [[0], [1], [2]], [3]), abs=tol)
    assert interaction_information(cols[:3]) == pytest.approx(
        dit.multivariate.interaction_information(d, [[0], [1], [2]]), abs=tol)
    assert interaction_information(cols) == pytest.approx(
        dit.multivariate.interaction_information(d), abs=tol)
    assert interaction_information(cols[:3], given=cols[3]) == pytest.approx(
        dit.multivariate.interaction_information(d, [[0], [1], [2]], [3]), abs=tol)


def test_mcgill_sign_convention():
    bits = np.array([[a, b] for a in (0, 1) for b in (0, 1)] * 25)
    xor = bits[:, 0] ^ bits[:, 1]
    assert interaction_information([bits[:, 0], bits[:, 1], xor]) == pytest.approx(1.0, abs=1e-12)
    assert interaction_information([bits[:, 0]] * 3) == pytest.approx(-1.0, abs=1e-12)
    assert interaction_information([bits[:, 0], bits[:, 1]]) == pytest.approx(
        mutual_information(bits[:, 0], bits[:, 1]), abs=1e-15)


def _subsets(m, min_size=2):
    return [s for size in range(min_size, m + 1) for s in combinations(range(m), size)]


@pytest.mark.parametrize("m", [3, 4, 6])
def test_interaction_information_sums_to_tc(m):
    rng = np.random.default_rng(m)
    base = rng.integers(0, 2, size=(400, m))
    base[:, -1] = (base[:, 0] + base[:, 1] + rng.integers(0, 2, 400)) % 3  # dependence
    cols = [base[:, i] for i in range(m)]
    y = rng.integers(0, 2, size=400) ^ base[:, 0]
    total = sum(interaction_information([cols[i] for i in s]) for s in _subsets(m))
    assert total == pytest.approx(total_correlation(cols), abs=1e-10)
    total = sum(interaction_information([cols[i] for i in s], given=y) for s in _subsets(m))
    assert total == pytest.approx(total_correlation(cols, given=y), abs=1e-10)


def test_decomposition_identity_exact_on_discrete():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, size=2000)
    u = (y[:, None] + rng.integers(0, 3, size=(2000, 4))) % 4
    u[:, 3] = u[:, 0] ^ u[:, 1]
    dec = information_decomposition([u[:, i] for i in range(4)], y, max_order=4)
    assert dec.residual == pytest.approx(0.0, abs=1e-10)
    lhs = dec.redundancy - dec.conditional_redundancy
    assert lhs == pytest.approx(dec.relevancy - dec.joint, abs=1e-10)
    assert sum(dec.redundancy_orders.values()) == pytest.approx(dec.redundancy, abs=1e-10)
    assert sum(dec.conditional_redundancy_orders.values()) == pytest.approx(
        dec.conditional_redundancy, abs=1e-10)
    # order-3 part = sum of interaction information over triples
    triples = sum(interaction_information([u[:, i] for i in s]) for s in combinations(range(4), 3))
    assert dec.redundancy_orders[3] == pytest.approx(triples, abs=1e-10)
    assert "conditional redundancy" in repr(dec)


def test_decomposition_identity_exact_for_binned_continuous():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, size=3000)
    u = 0.5 * (2 * y - 1)[:, None] + rng.standard_normal((3000, 4))
    for binning in ("uniform", "quantile"):
        dec = information_decomposition(u, y, method="binned", bins=3, binning=binning)
        assert dec.residual == pytest.approx(0.0, abs=1e-10)


def test_miller_madow_and_james_stein():
    counts = np.array([5, 3, 0, 2])
    p = counts[counts > 0] / 10
    plugin = -np.sum(p * np.log(p))
    assert discrete.entropy_from_counts(counts) == pytest.approx(plugin)
    assert discrete.entropy_from_counts(counts, estimator="miller_madow") == pytest.approx(
        plugin + 2 / 20)
    # Hausser & Strimmer: lambda = (1 - sum p^2) / ((n - 1) sum (1/K - p)^2), here K = 4
    full = counts / 10
    lam = (1 - np.sum(full**2)) / (9 * np.sum((0.25 - full) ** 2))
    shrunk = lam * 0.25 + (1 - lam) * full
    js = discrete.entropy_from_counts(counts, estimator="james_stein", n_cells=4)
    assert js == pytest.approx(-np.sum(shrunk * np.log(shrunk)))
    # shrinkage reduces the downward bias of the plug-in on a uniform source with few samples
    rng = np.random.default_rng(0)
    draws = [np.bincount(rng.integers(0, 20, 15), minlength=20) for _ in range(200)]
    truth = np.log(20)
    err = {est: np.mean([discrete.entropy_from_counts(c, estimator=est, n_cells=20)
                         for c in draws]) - truth for est in discrete.ESTIMATORS}
    assert err["plugin"] < err["miller_madow"] < 0
    assert abs(err["james_stein"]) < abs(err["miller_madow"])
    # the binned method exposes them
    x = rng.standard_normal((500, 1))
    values = {est: entropy(x, method="binned", estimator=est) for est in discrete.ESTIMATORS}
    assert values["plugin"] < values["miller_madow"]


def test_binned_entropy_is_differential():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((20000, 1))
    truth = 0.5 * np.log2(2 * np.pi * np.e)
    for binning in ("uniform", "quantile"):
        assert entropy(x, method="binned", bins=40, binning=binning) == pytest.approx(
            truth, abs=0.05)
