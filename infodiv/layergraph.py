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

from estimators.validation import check_labels

from .gaussian import copula_transform, logdet_bias, member_variables

__all__ = ["pairwise_information", "layer_graph", "chow_liu_tree", "tree_bound",
           "redundancy_communities", "export_graphml", "plot_layer_graph"]


def _pair_logdets(cov, d, n, bias_correction):
    m = cov.shape[0] // d
    blocks = cov.reshape(m, d, m, d).transpose(0, 2, 1, 3)  # [M, M, d, d]
    diag = blocks[np.arange(m), np.arange(m)]
    ld1 = np.linalg.slogdet(diag)[1]
    top = np.concatenate([np.broadcast_to(diag[:, None], (m, m, d, d)), blocks], axis=3)
    bottom = np.concatenate([np.swapaxes(blocks, 2, 3),
                             np.broadcast_to(diag[None, :], (m, m, d, d))], axis=3)
    ld2 = np.linalg.slogdet(np.concatenate([top, bottom], axis=2))[1]
    if bias_correction:
        ld1 = ld1 - logdet_bias(d, n)
        ld2 = ld2 - logdet_bias(2 * d, n)
    mi = 0.5 * (ld1[:, None] + ld1[None, :] - ld2)
    np.fill_diagonal(mi, np.nan)
    return mi


def pairwise_information(x, labels, *, method="gaussian", bias_correction=True, base=2.0,
                         random_state=0):
    """Pairwise I(U_i; U_j) and I(U_i; U_j | Y) for member variables ``x`` ``[n, M, d]``.

    ``gaussian``/``copula``: closed form from one covariance per class, all pairs at once (the
    same bias-corrected log-determinants as ``estimators``' Gaussian methods). Other methods
    call ``estimators.mutual_information`` / ``conditional_mutual_information`` per pair.
    Returns two symmetric ``[M, M]`` arrays (diagonal NaN), in units of ``base``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = check_labels(labels)
    n, m, d = x.shape
    scale = 1.0 / np.log(base)
    if method in ("gaussian", "copula"):
        if method == "copula":
            x = copula_transform(x)
        flat = x.reshape(n, m * d)
        mi = _pair_logdets(np.cov(flat, rowvar=False, bias=True), d, n, bias_correction)
        cmi = np.zeros((m, m))
        for c in np.unique(y):
            rows = y == c
            cmi += rows.mean() * _pair_logdets(np.cov(flat[rows], rowvar=False, bias=True), d,
                                               int(rows.sum()), bias_correction)
        return mi * scale, cmi * scale
    from estimators import conditional_mutual_information, mutual_information

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


def plot_layer_graph(graph: nx.Graph, path, *, weight: str = "mi", top_fraction: float = 0.1):
    """Circular layout in depth order; the Chow–Liu tree in black, the strongest other edges
    (``top_fraction`` of them) in grey; nodes coloured by kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pos = nx.circular_layout(sorted(graph.nodes))
    tree = chow_liu_tree(graph, weight)
    others = sorted(((w, i, j) for i, j, w in graph.edges(data=weight)
                     if not tree.has_edge(i, j) and w is not None), reverse=True)
    others = others[: max(1, int(top_fraction * len(others)))]
    colours = {"embed": "tab:green", "attn": "tab:blue", "mlp": "tab:orange"}
    fig, ax = plt.subplots(figsize=(7, 7))
    nx.draw_networkx_edges(graph, pos, edgelist=[(i, j) for _, i, j in others], ax=ax,
                           edge_color="0.75", width=0.6)
    nx.draw_networkx_edges(tree, pos, ax=ax, edge_color="k", width=1.2)
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_size=40,
                           node_color=[colours.get(graph.nodes[v].get("kind"), "tab:gray")
                                       for v in graph.nodes])
    if graph.number_of_nodes() <= 40:
        nx.draw_networkx_labels(graph, pos, ax=ax, font_size=6,
                                labels={v: graph.nodes[v].get("name", v) for v in graph.nodes})
    ax.set_title(f"Layer graph ({weight}); black: Chow-Liu tree, "
                 f"sum {tree_bound(graph, weight):.3g} bits <= TC(U)")
    ax.axis("off")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
