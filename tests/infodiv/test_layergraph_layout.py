"""The layer graph's drawing has structure: members by depth and kind, only the edges above a
stated threshold, communities coloured and listed in the legend."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from matplotlib.patches import FancyArrowPatch

from extraction.contributions import Contributions, Member
from infodiv.layergraph import (
    KIND_ROWS,
    layer_graph,
    layer_positions,
    redundancy_communities,
    strong_edges,
)
from infodiv.reports.figures import plot_layer_graph


def shared_head_graph():
    """embed; block 0 run twice (2 heads + MLP each); block 1 once (whole attention + MLP)."""
    members = [Member("embed", "embed")]
    for e in (0, 1):
        members += [Member(f"L0.attn#{e}.h{h}", "attn", 0, e, head=h, junction=h == 1)
                    for h in (0, 1)] + [Member(f"L0.mlp#{e}", "mlp", 0, e)]
    members += [Member("L1.attn#0", "attn", 1), Member("L1.mlp#0", "mlp", 1)]
    g = nx.Graph()
    for i, mem in enumerate(members):
        g.add_node(i, name=mem.name, kind=mem.kind, block=mem.block, execution=mem.execution)
    return g, members


def test_positions_by_depth_and_kind():
    g, members = shared_head_graph()
    pos, columns = layer_positions(g)
    assert columns == ["emb", "0", "0#1", "1"]
    expected_x = [0, 1, 1, 1, 2, 2, 2, 3, 3]
    assert [pos[i][0] for i in range(len(members))] == expected_x
    for i, mem in enumerate(members):
        assert abs(pos[i][1] - KIND_ROWS[mem.kind]) <= 0.3 + 1e-12
    assert pos[1][1] == pytest.approx(0.7) and pos[2][1] == pytest.approx(1.3)   # two heads
    assert pos[7][1] == 1.0 and pos[8][1] == 2.0


def test_strong_edges_threshold():
    g = nx.complete_graph(6)
    weights = {e: float(w) for e, w in zip(g.edges, np.arange(15))}
    nx.set_edge_attributes(g, weights, "mi")
    kept, cut = strong_edges(g, top_fraction=0.2)
    assert cut == pytest.approx(np.quantile(np.arange(15.0), 0.8))
    assert [w for *_, w in kept] == [14.0, 13.0, 12.0]
    kept, cut = strong_edges(g, threshold=10.5)
    assert cut == 10.5 and len(kept) == 4 and all(w >= 10.5 for *_, w in kept)
    with pytest.raises(ValueError, match="top_fraction must lie in"):
        strong_edges(g, top_fraction=0)


@pytest.fixture(scope="module")
def two_groups():
    """Members 1-3 copy one latent signal, members 4-6 another: two communities."""
    rng = np.random.default_rng(3)
    n, c = 800, 2
    y = rng.integers(0, 2, n)
    latent = rng.normal(size=(n, 2)) + y[:, None]
    u = np.zeros((n, 7, c))
    u[:, 0, 1] = rng.normal(size=n)
    for m in range(1, 7):
        u[:, m, 1] = latent[:, (m - 1) // 3] + 0.3 * rng.normal(size=n)
    members = [Member("embed", "embed")] + [
        Member(f"L{b}.{k}#0", k, b) for b in range(3) for k in ("attn", "mlp")]
    return Contributions(u, np.zeros(c), y, u.sum(1), np.ones((n, 7)), members, ["a", "b"])


def test_plot_structure_threshold_and_communities(two_groups, tmp_path):
    g = layer_graph(two_groups)
    fig = plot_layer_graph(g, tmp_path / "g.png", threshold=0.5, title="run (N = 800)")
    ax = fig.axes[0]
    kept, cut = strong_edges(g, threshold=0.5)
    arcs = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arcs) == len(kept) == 6                 # the 2 x 3 within-group pairs
    assert {frozenset(e[:2]) for e in kept} == {frozenset(p) for p in
                                                ((1, 2), (1, 3), (2, 3), (4, 5), (4, 6), (5, 6))}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["emb", "0", "1", "2"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["embedding", "attention", "MLP"]
    colours = [tuple(c) for c in ax.collections[0].get_facecolors()]
    comms = sorted(redundancy_communities(g), key=lambda c: (-len(c), c[0]))
    assert any({1, 2, 3} <= set(c) for c in comms) and any({4, 5, 6} <= set(c) for c in comms)
    for comm in comms:                                   # one colour per community
        assert len({colours[v] for v in comm}) == 1
    assert colours[1] != colours[4]
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[:2] == [f"community {i + 1} ({len(c)} members)"
                         for i, c in enumerate(comms[:2])]
    assert texts[-1] == "edge: mi ≥ 0.5 bits (6 of 21 pairs)"
    renderer = fig.canvas.get_renderer()
    assert ax.title.get_window_extent(renderer).x1 <= fig.bbox.width
    assert ax.get_title().startswith("run (N = 800)")
