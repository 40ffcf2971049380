"""The figures of the curves report: the layer-addition curves of every order with the
random-order band, the gain profile with its fitted slope, the Monte-Carlo Shapley values, and
the layer graph laid out by depth and kind with its redundancy communities. Each function
returns the Figure and, given ``path``, saves it (:func:`infodiv.reports.canvas.save_figure`).
"""

from __future__ import annotations

import numpy as np

from .canvas import GROUP_COLORS, _titled, new_figure, save_figure

__all__ = ["plot_layer_curves", "plot_gains", "plot_shapley", "plot_layer_graph"]

CURVE_COLOURS = {"prefix": "tab:blue", "suffix": "tab:purple", "greedy": "tab:red",
                 "backward": "tab:orange"}


def _kind(name: str) -> str:
    return "embed" if "embed" in name else "mlp" if "mlp" in name else "attn"


def plot_layer_curves(lc, path=None, *, title=None, band=None,
                      no_band: str = "no example-resampled band: inference off"):
    """f(k) of every order of a :class:`~infodiv.curves.LayerCurves`: the random-order mean
    with its inferential 95% band, and each fixed or searched order (held-out and in-sample).

    ``band`` (``{"ci_low", "ci_high"}``, e.g. the ``mean_curve`` of
    :func:`infodiv.inference.curve_inference`) is the example-resampled band (examples
    resampled, everything refitted): it is shaded. The orders-only 95% interval of the mean is
    drawn as dotted lines labelled "Monte-Carlo error"; without ``band`` the legend says
    ``no_band`` (why there is none here, or where it is drawn). ``title`` (e.g.
    :func:`run_label`) heads the plot with the model, task and N."""
    fig = new_figure(7.5, 4.6)
    ax = fig.subplots()
    k = np.arange(lc.n_members + 1)
    n_orders = None
    if "random" in lc:
        r = lc["random"]
        n_orders = r.extra.get("n_permutations")
        if band is not None:
            ax.fill_between(k, band["ci_low"], band["ci_high"], color="0.8",
                            label="random-order mean, 95% CI (examples resampled, refitted)")
        ax.plot(k, r.values, color="k", lw=1.5, label="random-order mean" + (
            "" if band is not None else f" ({no_band})"))
        for key in ("ci_low", "ci_high"):
            ax.plot(k, r.extra[key], color="k", lw=0.6, ls=":", label=None if key == "ci_high"
                    else "Monte-Carlo error of the mean (orders only, 95%)")
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
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    what = f"layer-addition curves of {lc.objective}" + (f" ({n_orders} random orders)"
                                                         if n_orders else "")
    _titled(ax, title, what)
    return save_figure(fig, path)


def plot_gains(lc, slope, path=None, *, title=None):
    """Gain profile g(k) of the random orders with the fitted slope and its CI."""
    fig = new_figure(7.5, 3.6)
    ax = fig.subplots()
    g = np.asarray(lc["random"].extra["gain"])
    k = np.arange(1, len(g) + 1)
    ax.plot(k, g, "k.-", lw=0.8, label="g(k), random-order mean")
    fit = slope["slope"] * (k - k.mean()) + g.mean()
    ci = slope.get("ci") or (np.nan, np.nan)
    ax.plot(k, fit, "r-", label=f"slope {slope['slope']:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]")
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel("k (size of the set the member joins, plus one)")
    ax.set_ylabel(f"gain [{lc.units}]" if lc.units else "gain")
    ax.legend(fontsize=7, frameon=False)
    _titled(ax, title, f"gain profile of {lc.objective}")
    return save_figure(fig, path)


def plot_shapley(lc, names=None, path=None, *, title=None):
    """Monte-Carlo Shapley values of the members, coloured by kind, in depth order.

    Up to 130 members: horizontal bars, one labelled row per member (top = embedding).
    More: vertical bars with every tenth member labelled.
    """
    phi = np.asarray(lc["random"].extra["shapley"], dtype=np.float64)
    m = len(phi)
    names = list(names) if names is not None and len(names) == m else [str(i) for i in range(m)]
    colours = [GROUP_COLORS.get(_kind(n), "tab:blue") for n in names]
    what = f"Shapley values of {lc.objective} (sum = f(all) − f(empty))"
    if m <= 130:
        fig = new_figure(7.0, 1.2 + 0.16 * m)
        ax = fig.subplots()
        y = np.arange(m)
        ax.barh(y, phi, color=colours, height=0.75)
        ax.set_yticks(y, names, fontsize=7 if m <= 70 else 5.5)
        ax.set_ylim(m - 0.4, -0.6)
        ax.axvline(0, color="0.5", lw=0.6)
        ax.set_xlabel(f"Shapley value [{lc.units}]" if lc.units else "Shapley value")
    else:
        fig = new_figure(min(18.0, 6 + 0.03 * m), 3.8)
        ax = fig.subplots()
        x = np.arange(m)
        ax.bar(x, phi, color=colours, width=0.9)
        ticks = x[::10]
        ax.set_xticks(ticks, [names[i] for i in ticks], rotation=60, fontsize=7, ha="right")
        ax.set_ylabel(f"Shapley value [{lc.units}]" if lc.units else "Shapley value")
    from matplotlib.patches import Patch

    kinds = [k for k in ("embed", "attn", "mlp") if any(_kind(n) == k for n in names)]
    fig.legend([Patch(color=GROUP_COLORS[k]) for k in kinds], kinds, fontsize=7, frameon=False,
               loc="outside right upper")
    _titled(ax, title, what)
    return save_figure(fig, path)


def plot_layer_graph(graph, path=None, *, weight: str = "mi", threshold=None,
                     top_fraction: float = 0.1, title=None):
    """The layer graph laid out by structure: members by depth (x: one column per block
    execution, :func:`~infodiv.layergraph.layer_positions`) and kind (y: embedding, attention,
    MLP rows), coloured by redundancy community
    (:func:`~infodiv.layergraph.redundancy_communities`); only the edges whose ``weight``
    reaches ``threshold`` (default: the strongest ``top_fraction`` of pairs,
    :func:`~infodiv.layergraph.strong_edges`) are drawn, as arcs whose width grows with the
    weight, the threshold stated in the legend; the Chow–Liu bound in the title."""
    import matplotlib as mpl
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch

    from ..layergraph import (
        KIND_ROWS,
        layer_positions,
        redundancy_communities,
        strong_edges,
        tree_bound,
    )

    pos, columns = layer_positions(graph)
    edges, cut = strong_edges(graph, weight, threshold=threshold, top_fraction=top_fraction)
    comms = sorted(redundancy_communities(graph, weight), key=lambda c: (-len(c), c[0]))
    palette = mpl.colormaps["tab10" if len(comms) <= 10 else "tab20"]
    colour = {}
    for i, comm in enumerate(comms):
        for v in comm:
            colour[v] = "0.6" if len(comm) == 1 else palette(i % palette.N)
    units = "bits" if weight in ("mi", "cmi", "diversity") else ""
    fig = new_figure(min(18.0, max(7.5, 0.26 * len(columns) + 2.5)), 4.6)
    ax = fig.subplots()
    wmax = max((w for *_, w in edges), default=1.0)
    for i, j, w in reversed(edges):                     # strongest drawn last, on top
        (x0, y0), (x1, y1) = pos[i], pos[j]
        rad = 0.35 if abs(y0 - y1) < 0.5 else 0.1       # arcs: no edge runs along a row
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-",
                                     connectionstyle=f"arc3,rad={rad}", color="0.35",
                                     lw=0.4 + 2.2 * max(w, 0.0) / wmax, alpha=0.55, zorder=1))
    nodes = sorted(graph.nodes)
    ax.scatter([pos[v][0] for v in nodes], [pos[v][1] for v in nodes], s=42, zorder=2,
               c=[colour.get(v, "0.6") for v in nodes], edgecolors="k", linewidths=0.4)
    step = 1 if len(columns) <= 40 else 2 if len(columns) <= 80 else 5
    ax.set_xticks(range(0, len(columns), step), columns[::step], fontsize=7,
                  rotation=90 if len(columns) > 40 else 0)
    ax.set_yticks(list(KIND_ROWS.values()), ["embedding", "attention", "MLP"], fontsize=8)
    ax.set_xlim(-0.8, len(columns) - 0.2)
    ax.set_ylim(-0.7, 2.7)
    ax.set_xlabel("block (#e: execution e of a shared block)")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    groups = [c for c in comms if len(c) > 1]
    shown = groups[:10]
    handles = [Line2D([], [], marker="o", ls="", color=colour[c[0]], markeredgecolor="k",
                      markeredgewidth=0.4) for c in shown]
    labels = [f"community {i + 1} ({len(c)} members)" for i, c in enumerate(shown)]
    if len(groups) > len(shown):
        handles.append(Line2D([], [], ls=""))
        labels.append(f"+ {len(groups) - len(shown)} smaller communities")
    if len(groups) < len(comms):
        handles.append(Line2D([], [], marker="o", ls="", color="0.6", markeredgecolor="k",
                              markeredgewidth=0.4))
        labels.append("in no community (alone)")
    handles.append(Line2D([], [], color="0.35", lw=1.5))
    labels.append(f"edge: {weight} ≥ {cut:.3g} {units} ({len(edges)} of "
                  f"{graph.number_of_edges()} pairs)".replace("  ", " "))
    fig.legend(handles, labels, loc="outside lower center", ncols=min(2, len(labels)),
               fontsize=7, frameon=False)
    what = (f"layer graph of pairwise {weight}, communities of redundant members; Chow-Liu "
            f"tree sum {tree_bound(graph, weight):.3g} {units} ≤ TC(U)")
    _titled(ax, title, what)
    return save_figure(fig, path)
