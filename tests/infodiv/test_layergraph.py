"""Layer graph, Chow-Liu bound and communities on Gaussian ground truth ."""

import networkx as nx
import numpy as np
import pytest

from extraction.contributions import Contributions, Member
from infodiv.layergraph import (
    chow_liu_tree,
    export_graphml,
    layer_graph,
    pairwise_information,
    redundancy_communities,
    tree_bound,
)
from infodiv.reports.figures import plot_layer_graph


def tc_exact_bits(cov):
    return 0.5 * (np.log(np.diag(cov)).sum() - np.linalg.slogdet(cov)[1]) / np.log(2)


def gaussian_members(cov, n, seed):
    """Scalar member variables x [n, M, 1] with covariance cov and random binary labels."""
    rng = np.random.default_rng(seed)
    x = rng.multivariate_normal(np.zeros(len(cov)), cov, size=n)[:, :, None]
    return x, rng.integers(0, 2, n)


def graph_from(mi):
    g = nx.Graph()
    m = len(mi)
    g.add_edges_from((i, j, {"mi": mi[i, j]}) for i in range(m) for j in range(i + 1, m))
    return g


def test_chow_liu_bound_on_gaussian_ground_truth():
    m, rho = 7, 0.6
    chain = rho ** np.abs(np.subtract.outer(np.arange(m), np.arange(m)))  # AR(1): a tree
    equi = 0.4 * np.ones((m, m)) + 0.6 * np.eye(m)
    for cov, is_tree in ((chain, True), (equi, False)):
        # exact pairwise MI from the covariance
        r = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
        with np.errstate(divide="ignore"):
            mi = -0.5 * np.log2(1 - r ** 2)
        bound = tree_bound(graph_from(mi))
        truth = tc_exact_bits(cov)
        if is_tree:
            assert bound == pytest.approx(truth, rel=1e-12)
        else:
            assert bound < truth - 0.5
        # estimated from samples: the tree is recovered and the bound holds up to noise
        x, y = gaussian_members(cov, 20000, 1)
        mi_hat, _ = pairwise_information(x, y, method="gaussian")
        g = graph_from(mi_hat)
        if is_tree:
            assert {tuple(sorted(e)) for e in chow_liu_tree(g).edges} == \
                {(i, i + 1) for i in range(m - 1)}
        # per-edge s.e. of the Gaussian MI at n = 20000 is about rho/(1-rho^2)/ln2 * (1-rho^2)
        # / sqrt(n) = 0.006 bits; 6 edges -> s.e. of the sum <= 0.036, tolerance 0.07 (2 s.e.)
        assert tree_bound(g) == pytest.approx(bound, abs=0.07)


def test_pairwise_gaussian_matches_estimators():
    from estimators import conditional_mutual_information, mutual_information

    rng = np.random.default_rng(2)
    x = rng.normal(size=(600, 4, 2))
    x[:, 1] += 0.7 * x[:, 0]
    y = rng.integers(0, 3, 600)
    x[:, 2, 0] += y
    mi, cmi = pairwise_information(x, y)
    for i, j in ((0, 1), (1, 2), (2, 3)):
        assert mi[i, j] == pytest.approx(mutual_information(x[:, i], x[:, j],
                                                            method="gaussian"), abs=1e-5)
        assert cmi[i, j] == pytest.approx(conditional_mutual_information(
            x[:, i], x[:, j], y, method="gaussian"), abs=1e-5)


@pytest.fixture(scope="module")
def block_contrib():
    """Two groups of redundant members (copies of two latent signals plus noise)."""
    rng = np.random.default_rng(3)
    n, c = 800, 2
    y = rng.integers(0, 2, n)
    latent = rng.normal(size=(n, 2)) + y[:, None]
    u = np.zeros((n, 6, c))
    for m in range(6):
        u[:, m, 1] = latent[:, m // 3] + 0.3 * rng.normal(size=n)
    members = [Member("embed", "embed")] + [Member(f"L{i}", "mlp", i) for i in range(5)]
    return Contributions(u, np.zeros(c), y, u.sum(1), np.ones((n, 6)), members, ["a", "b"])


def test_layer_graph_communities_export_and_plot(block_contrib, tmp_path):
    g = layer_graph(block_contrib)
    assert g.number_of_nodes() == 6 and g.number_of_edges() == 15
    e = g.edges[0, 1]
    assert e["diversity"] == pytest.approx(e["cmi"] - e["mi"])
    assert e["mi"] > 1.0 and abs(g.edges[0, 4]["mi"]) < e["mi"]
    comms = redundancy_communities(g)
    assert sorted(map(tuple, comms)) == [(0, 1, 2), (3, 4, 5)]
    path = export_graphml(g, tmp_path / "g.graphml")
    back = nx.read_graphml(path)
    assert back.number_of_edges() == 15
    assert float(back.edges["0", "1"]["mi"]) == pytest.approx(e["mi"])
    plot_layer_graph(g, tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 1000
