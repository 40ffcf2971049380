"""Every figure of the reports, in one object-oriented matplotlib style.

The paper's Figure 3 (correlations), Figure 4 (module shares) and Figures 5/7 (junction
curves); the layer-addition curves, gain profiles and Shapley values of the curves report; the
layer graph. Figures are built by :func:`new_figure` on :class:`matplotlib.figure.Figure` with
the Agg canvas, so nothing touches pyplot's global state (or the backend) or needs a display;
each function returns the Figure and, given ``path``, saves it as PNG at :data:`DPI`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["new_figure", "save_figure", "plot_correlations", "plot_module_shares",
           "plot_junction_curves", "plot_layer_curves", "plot_gains", "plot_shapley",
           "plot_layer_graph", "standardize"]

DPI = 120

GROUP_COLORS = {"embed": "#8c8c8c", "attn": "#1f77b4", "mlp": "#ff7f0e"}
MEASURE_STYLE = {"accuracy": ("k", "-"), "mse": ("#d62728", "-"), "bias": ("#1f77b4", "--"),
                 "diversity": ("#2ca02c", "-."), "cross_entropy": ("#9467bd", "-"),
                 "ce_bias": ("#17becf", "--"), "ce_diversity": ("#bcbd22", "-.")}


def new_figure(width, height, *, layout="constrained"):
    """A Figure of ``width`` x ``height`` inches on its own Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig, path, *, tight: bool = False):
    """Save ``fig`` as PNG at :data:`DPI` when ``path`` is given (folders created)."""
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    return fig



def standardize(x) -> np.ndarray:
    """``(x − mean) / std`` over the curve (population std); a constant curve is only centred."""
    x = np.asarray(x, dtype=np.float64)
    sd = x.std()
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


def plot_junction_curves(curves, path=None, *, measures=("accuracy", "mse", "bias", "diversity"),
                         standardized: bool = True, ncols: int = 4):
    """Figures 5/7: measures against the number of members, one panel per run.

    Parameters
    ----------
    curves : JunctionCurves or list of them
    measures : tuple of str
        Attributes of JunctionCurves to draw.
    standardized : bool
        Z-score each curve over its junction points, as the paper does so that trends of
        different scales share one axis (a constant curve is only centred).
    """
    curves = [curves] if hasattr(curves, "k") else list(curves)
    if not curves:
        raise ValueError("curves is empty")
    ncols = min(ncols, len(curves))
    nrows = -(-len(curves) // ncols)
    fig = new_figure(3.2 * ncols, 2.6 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, cur in zip(axes, curves):
        for measure in measures:
            y = getattr(cur, measure)
            color, style = MEASURE_STYLE.get(measure, (None, "-"))
            ax.plot(cur.k, standardize(y) if standardized else y, style, color=color,
                    label=measure, lw=1.3)
        ax.set_title(" / ".join(x for x in (cur.model, cur.task) if x) or "run", fontsize=9)
        ax.set_xlabel("members in prefix (k)")
        ax.set_ylabel("z-score" if standardized else "value")
    for ax in axes[len(curves):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Junction curves ({curves[0].readout} readout, {curves[0].space}, "
                 f"scale={curves[0].scale})", fontsize=10)
    return save_figure(fig, path)


def plot_correlations(table, path=None, *, alpha: float = 0.05):
    """Figure 3: heat map of correlations per model (rows measure × method, columns tasks).

    Cells with ``p < alpha`` are marked with an asterisk (the paper underlines them); the
    "Avg." column (Fisher-z average) carries no test.
    """
    recs = table.to_records()
    if not recs:
        raise ValueError("the correlation table is empty")
    models = list(dict.fromkeys(r["model"] for r in recs))
    fig = new_figure(1.1 + 0.75 * len({r["task"] for r in recs}), 1.0 + 1.9 * len(models))
    axes = np.atleast_1d(fig.subplots(len(models), 1, squeeze=False)).ravel()
    for ax, model in zip(axes, models):
        sub = [r for r in recs if r["model"] == model]
        tasks = list(dict.fromkeys(r["task"] for r in sub))
        rows = list(dict.fromkeys((r["measure"], r["method"]) for r in sub))
        grid = np.full((len(rows), len(tasks)), np.nan)
        star = np.zeros_like(grid, dtype=bool)
        for r in sub:
            i, j = rows.index((r["measure"], r["method"])), tasks.index(r["task"])
            grid[i, j] = r["r"]
            star[i, j] = bool(np.isfinite(r["p"]) and r["p"] < alpha)
        im = ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for (i, j), val in np.ndenumerate(grid):
            if np.isfinite(val):
                ax.text(j, i, f"{val:.2f}" + ("*" if star[i, j] else ""), ha="center",
                        va="center", fontsize=7)
        ax.set_xticks(range(len(tasks)), tasks, fontsize=8, rotation=30)
        ax.set_yticks(range(len(rows)), [f"{m} ({k[0].upper()})" for m, k in rows], fontsize=8)
        ax.set_title(model or "model", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle(f"Correlation with accuracy\n(* p < {alpha}; P = Pearson, S = Spearman)",
                 fontsize=9)
    return save_figure(fig, path)


def plot_module_shares(table, path=None):
    """Figure 4: stacked bars of the bias and diversity shares of each module group per model.

    Uses the table's "Avg." rows (the mean share over tasks).
    """
    recs = [r for r in table.to_records() if r["task"] == "Avg."]
    if not recs:
        raise ValueError("the module-share table has no 'Avg.' rows")
    models = list(dict.fromkeys(r["model"] for r in recs))
    groups = list(dict.fromkeys(r["group"] for r in recs))
    fig = new_figure(2.0 + 1.2 * len(models), 3.2)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, term in zip(axes, ("bias", "diversity")):
        bottom = np.zeros(len(models))
        for g in groups:
            share = np.array([next((r["share"] for r in recs if r["model"] == m
                                    and r["term"] == term and r["group"] == g), 0.0)
                              for m in models])
            ax.bar(range(len(models)), share, bottom=bottom, label=g,
                   color=GROUP_COLORS.get(g))
            bottom += np.nan_to_num(share)
        ax.set_xticks(range(len(models)), [m or "model" for m in models], rotation=30,
                      fontsize=8)
        ax.set_title(term, fontsize=9)
    axes[0].set_ylabel("share of the total")
    axes[1].legend(fontsize=7)
    return save_figure(fig, path)


# ---------------------------------------------------------------------------- curves report
CURVE_COLOURS = {"prefix": "tab:blue", "suffix": "tab:purple", "greedy": "tab:red",
                 "backward": "tab:orange"}


def plot_layer_curves(lc, path=None):
    """f(k) of every order of a :class:`~infodiv.curves.LayerCurves`: the random-order mean
    with its 2.5–97.5% band, and each fixed or searched order (held-out and in-sample)."""
    fig = new_figure(7, 4.5, layout=None)
    ax = fig.subplots()
    k = np.arange(lc.n_members + 1)
    if "random" in lc:
        r = lc["random"]
        ax.fill_between(k, r.extra["band_low"], r.extra["band_high"], color="0.85",
                        label="random orders (2.5-97.5%)")
        ax.plot(k, r.values, color="k", lw=1.5, label="random-order mean")
    for name, colour in CURVE_COLOURS.items():
        if name in lc:
            c = lc[name]
            ax.plot(k, c.values, color=colour, lw=1.2,
                    label=name + (" (held-out)" if c.extra.get("cross_fitted") else ""))
            if "values_in_sample" in c.extra and c.extra.get("cross_fitted"):
                ax.plot(k, c.extra["values_in_sample"], color=colour, lw=0.8, ls=":",
                        label=f"{name} (in-sample)")
    ax.set_xlabel("number of members k")
    ax.set_ylabel(f"{lc.objective} [{lc.units}]" if lc.units else lc.objective)
    ax.legend(fontsize=7)
    return save_figure(fig, path, tight=True)


def plot_gains(lc, slope, path=None):
    """Gain profile g(k) of the random orders with the fitted slope and its CI."""
    fig = new_figure(7, 3.5, layout=None)
    ax = fig.subplots()
    g = np.asarray(lc["random"].extra["gain"])
    k = np.arange(1, len(g) + 1)
    ax.plot(k, g, "k.-", lw=0.8, label="g(k), random-order mean")
    fit = slope["slope"] * (k - k.mean()) + g.mean()
    ax.plot(k, fit, "r-", label=f"slope {slope['slope']:.3g} "
                                f"[{slope['ci'][0]:.3g}, {slope['ci'][1]:.3g}]")
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel("k")
    ax.set_ylabel("utility gain")
    ax.legend(fontsize=7)
    return save_figure(fig, path, tight=True)


def plot_shapley(lc, names=None, path=None):
    """Monte-Carlo Shapley values of the members (bars, member names when M ≤ 70)."""
    phi = np.asarray(lc["random"].extra["shapley"])
    fig = new_figure(max(6, 0.12 * len(phi)), 3.5, layout=None)
    ax = fig.subplots()
    ax.bar(np.arange(len(phi)), phi, color="tab:blue")
    if len(phi) <= 70 and names:
        ax.set_xticks(np.arange(len(phi)), names, rotation=90, fontsize=5)
    ax.set_ylabel(f"Shapley value [{lc.units}]")
    ax.set_title(f"{lc.objective}: Shapley values (sum = f(V) - f(empty))")
    return save_figure(fig, path, tight=True)


def plot_layer_graph(graph, path=None, *, weight: str = "mi", top_fraction: float = 0.1):
    """Circular layout in depth order; the Chow–Liu tree in black, the strongest other edges
    (``top_fraction`` of them) in grey; nodes coloured by kind."""
    import networkx as nx

    from ..layergraph import chow_liu_tree, tree_bound

    pos = nx.circular_layout(sorted(graph.nodes))
    tree = chow_liu_tree(graph, weight)
    others = sorted(((w, i, j) for i, j, w in graph.edges(data=weight)
                     if not tree.has_edge(i, j) and w is not None), reverse=True)
    others = others[: max(1, int(top_fraction * len(others)))]
    colours = {"embed": "tab:green", "attn": "tab:blue", "mlp": "tab:orange"}
    fig = new_figure(7, 7, layout=None)
    ax = fig.subplots()
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
    return save_figure(fig, path, tight=True)
