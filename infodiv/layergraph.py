"""Layer graph: members as nodes, edges weighted by I(U_i; U_j) and I(U_i; U_j | Y).

The Chow–Liu tree (Chow & Liu 1968) is the maximum spanning tree under the I(U_i; U_j)
weights. Its edge sum is the total correlation of the best tree-structured approximation of
the joint distribution, hence a lower bound on TC(U) = Σ_i H(U_i) − H(U) (exact when U is
Markov on a tree, e.g. a Gaussian chain). Communities of mutually redundant members come from
greedy modularity maximisation (Clauset–Newman–Moore) on the non-negative part max(I, 0) of the
pairwise information (modularity needs non-negative weights; negative estimates are finite-sample
noise around 0 and are reported unchanged on the edges).

For drawing, :func:`layer_positions` places every member by depth (one column per block
execution, the embedding first) and kind (one row each for embedding, attention, MLP; the
heads of one attention write spread inside their row), and :func:`strong_edges` keeps the
pairs whose information reaches a stated threshold (by default the top 10% of pairs).
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
           "redundancy_communities", "export_graphml", "layer_positions", "strong_edges",
           "KIND_ROWS"]

#: row of each member kind in :func:`layer_positions`
KIND_ROWS = {"embed": 0, "attn": 1, "mlp": 2}


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

    Node attributes: ``name``, ``kind``, ``block``, ``execution``, ``head`` (−1 for a whole
    write). Edge attributes: ``mi`` =
    I(U_i; U_j), ``cmi`` = I(U_i; U_j | Y), ``diversity`` = cmi − mi (the pair's contribution
    to the information-theoretic diversity, paper Eq. 13, in bits).
    """
    x = member_variables(contrib.u, centre=centre)
    mi, cmi = pairwise_information(x, contrib.labels, method=method, random_state=random_state)
    g = nx.Graph(method=method)
    for i, mem in enumerate(contrib.members):
        g.add_node(i, name=mem.name, kind=mem.kind, block=int(mem.block),
                   execution=int(mem.execution),
                   head=-1 if getattr(mem, "head", None) is None else int(mem.head))
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


def _node_kind(attrs) -> str:
    kind = attrs.get("kind")
    if kind in KIND_ROWS:
        return kind
    name = str(attrs.get("name", ""))
    return "embed" if "embed" in name else "mlp" if "mlp" in name else "attn"


def layer_positions(graph: nx.Graph) -> tuple[dict, list]:
    """Node positions by depth and kind, and the column labels.

    x: the column of the member's block execution ``(block, execution)`` in depth order (node
    order), the embedding (block −1) first; y: :data:`KIND_ROWS` of its kind, the members of one
    ``(column, kind)`` cell (heads of an attention write) spread evenly over ±0.3 around it.
    Returns ``({node: (x, y)}, [label of column 0, 1, ...])`` with labels ``"emb"``, ``"3"``
    (block 3) or ``"3#1"`` (block 3, second execution).
    """
    nodes = sorted(graph.nodes)
    columns, labels, cells = {}, [], {}
    for v in nodes:
        a = graph.nodes[v]
        kind = _node_kind(a)
        key = ("embed",) if kind == "embed" else (int(a.get("block", -1)),
                                                  int(a.get("execution", 0)))
        if key not in columns:
            columns[key] = len(columns)
            labels.append("emb" if kind == "embed" else
                          f"{key[0]}" + (f"#{key[1]}" if key[1] else ""))
        cells.setdefault((columns[key], kind), []).append(v)
    pos = {}
    for (x, kind), members in cells.items():
        offsets = np.linspace(-0.3, 0.3, len(members)) if len(members) > 1 else [0.0]
        for v, dy in zip(members, offsets):
            pos[v] = (float(x), KIND_ROWS[kind] + float(dy))
    return pos, labels


def strong_edges(graph: nx.Graph, weight: str = "mi", *, threshold=None,
                 top_fraction: float = 0.1) -> tuple[list, float]:
    """The edges ``(i, j, w)`` with ``w ≥ threshold``, strongest first, and the threshold.

    ``threshold`` (units of the weight, bits for ``mi``/``cmi``) defaults to the
    ``1 − top_fraction`` quantile of the finite edge weights, so about ``top_fraction`` of the
    pairs are kept.
    """
    if not 0 < top_fraction <= 1:
        raise ValueError(f"top_fraction must lie in (0, 1], got {top_fraction}")
    edges = [(i, j, float(w)) for i, j, w in graph.edges(data=weight)
             if w is not None and np.isfinite(w)]
    if threshold is None:
        threshold = (float(np.quantile([w for *_, w in edges], 1 - top_fraction))
                     if edges else float("inf"))
    keep = sorted((e for e in edges if e[2] >= threshold), key=lambda e: -e[2])
    return keep, float(threshold)
