"""Layer graph: members as nodes, edges weighted by I(U_i; U_j) and I(U_i; U_j | Y).

The Chow–Liu tree (Chow & Liu 1968) is the maximum spanning tree under the I(U_i; U_j)
weights. Its edge sum is the total correlation of the best tree-structured approximation of
the joint distribution, hence a lower bound on TC(U) = Σ_i H(U_i) − H(U) (exact when U is
Markov on a tree, e.g. a Gaussian chain). Communities of mutually redundant members come from
greedy modularity maximisation (Clauset–Newman–Moore) on the non-negative part max(I, 0) of the
pairwise information (modularity needs non-negative weights; negative estimates are finite-sample
noise around 0 and are reported unchanged on the edges).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

from estimators import conditional_mutual_information, mutual_information
from estimators.blocks import pairwise_information as gaussian_pairwise
from estimators.validation import check_labels

from .information import member_variables

__all__ = ["pairwise_information", "layer_graph", "chow_liu_tree", "tree_bound",
           "redundancy_communities", "export_graphml"]


def pairwise_information(x, labels, *, method="gaussian", bias_correction=True, base=2,
                         random_state=0):
    """Pairwise I(U_i; U_j) and I(U_i; U_j | Y) for member variables ``x`` ``[n, M, d]``.

    ``gaussian``/``copula``: closed form from one covariance per class, all pairs at once
    (:func:`estimators.blocks.pairwise_information`, the same bias-corrected log-determinants
    and seeded normal scores as ``estimators``' Gaussian methods). Other methods call
    ``estimators.mutual_information`` / ``conditional_mutual_information`` per pair.
    Returns two symmetric ``[M, M]`` arrays (diagonal NaN), in units of ``base``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = check_labels(labels)
    if method in ("gaussian", "copula"):
        return gaussian_pairwise(x, y, copula=method == "copula",
                                 bias_correction=bias_correction, base=base,
                                 random_state=random_state)
    m = x.shape[1]
    mi = np.full((m, m), np.nan)
    cmi = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(i + 1, m):
            mi[i, j] = mi[j, i] = mutual_information(x[:, i], x[:, j], method=method, base=base,
                                                     random_state=random_state)
            cmi[i, j] = cmi[j, i] = conditional_mutual_information(
                x[:, i], x[:, j], y, method=method, base=base, random_state=random_state)
    return mi, cmi


def layer_graph(contrib, *, method="gaussian", centre=True, random_state=0) -> nx.Graph:
    """Complete graph over the members of a Contributions.

    Node attributes: ``name``, ``kind``, ``block``, ``execution``. Edge attributes: ``mi`` =
    I(U_i; U_j), ``cmi`` = I(U_i; U_j | Y), ``diversity`` = cmi − mi (the pair's contribution
    to the information-theoretic diversity, paper Eq. 13, in bits).
    """
    x = member_variables(contrib.u, centre=centre)
    mi, cmi = pairwise_information(x, contrib.labels, method=method, random_state=random_state)
    g = nx.Graph(method=method)
    for i, mem in enumerate(contrib.members):
        g.add_node(i, name=mem.name, kind=mem.kind, block=int(mem.block),
                   execution=int(mem.execution))
    m = contrib.n_members
    for i in range(m):
        for j in range(i + 1, m):
            g.add_edge(i, j, mi=float(mi[i, j]), cmi=float(cmi[i, j]),
                       diversity=float(cmi[i, j] - mi[i, j]))
    return g


def chow_liu_tree(graph: nx.Graph, weight: str = "mi") -> nx.Graph:
    """Maximum spanning tree under ``weight`` (Kruskal)."""
    return nx.maximum_spanning_tree(graph, weight=weight, algorithm="kruskal")


def tree_bound(graph: nx.Graph, weight: str = "mi") -> float:
    """Edge sum of the Chow–Liu tree: a lower bound on TC(U) (module docstring)."""
    tree = chow_liu_tree(graph, weight)
    return float(sum(w for _, _, w in tree.edges(data=weight)))


def redundancy_communities(graph: nx.Graph, weight: str = "mi") -> list[list[int]]:
    """Communities of redundant members (greedy modularity on max(weight, 0))."""
    h = nx.Graph()
    h.add_nodes_from(graph.nodes)
    for i, j, w in graph.edges(data=weight):
        if w is not None and w > 0:
            h.add_edge(i, j, w=w)
    comms = nx.community.greedy_modularity_communities(h, weight="w")
    return [sorted(int(v) for v in c) for c in comms]


def export_graphml(graph: nx.Graph, path) -> Path:
    """Write the graph as GraphML (graph-level attributes as strings)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    g = graph.copy()
    g.graph = {k: str(v) for k, v in g.graph.items()}
    nx.write_graphml(g, path)
    return path
