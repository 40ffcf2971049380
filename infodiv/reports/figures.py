"""Every figure of the reports, in one object-oriented matplotlib style.

The paper's Figure 3 (correlations), Figure 4 (module shares) and Figures 5/7 (junction
curves, absolute values in their units with example-bootstrap bands); the layer-addition
curves, gain profiles and Shapley values of the curves report; the layer graph laid out by
depth and kind with its redundancy communities (the answer figure, real members against their
conditionally independent control, is :mod:`infodiv.reports.answer_figure`). Every figure
with more than one series has a legend, and titles are wrapped to fit when saved
(:func:`fit_titles`; tests/test_figures_readable.py). Figures are built by
:func:`new_figure` on :class:`matplotlib.figure.Figure` with the Agg canvas, so nothing
touches pyplot's global state (or the backend) or needs a display; each function returns the
Figure and, given ``path``, saves it as PNG at :data:`DPI`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["new_figure", "save_figure", "run_label", "plot_correlations", "plot_module_shares",
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


def fit_titles(fig) -> None:
    """Wrap the figure's suptitle and every axes title that is wider than the space it has
    (the figure, or its axes) onto as many lines as it needs, so no title is clipped."""
    import textwrap

    renderer = fig.canvas.get_renderer()
    texts = [(fig._suptitle, fig.bbox.width)] if fig._suptitle is not None else []
    texts += [(ax.title, ax.bbox.width) for ax in fig.axes if ax.get_title()]
    for text, room in texts:
        content = text.get_text()
        width = text.get_window_extent(renderer).width
        if width <= room * 0.98 or not content:
            continue
        lines = content.split("\n")                  # explicit breaks are kept
        chars = max(12, int(max(map(len, lines)) * room * 0.95 / width))
        text.set_text("\n".join(textwrap.fill(line, chars) for line in lines))


def save_figure(fig, path, *, tight: bool = False):
    """Save ``fig`` as PNG at :data:`DPI` when ``path`` is given (folders created), its titles
    wrapped to fit (:func:`fit_titles`)."""
    if path is not None:
        fit_titles(fig)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    return fig



def run_label(contrib=None, *, model=None, task=None, n=None) -> str:
    """``"<model> on <task> (N = n)"`` for figure titles, from a run or from the parts."""
    if contrib is not None:
        from ..runs import run_names

        model, task = run_names(getattr(contrib, "meta", {}) or {})
        n = contrib.n_examples
    model = _short(model) if model else "model"
    return f"{model} on {task or 'task'}" + (f" (N = {n})" if n is not None else "")


def _short(name, width: int = 24) -> str:
    """A model label for a tick or title: the last path part(s), wrapped at ``width``."""
    import textwrap

    from ..commands.runfolder import model_slug

    text = str(name)
    if "/" in text or "\\" in text:
        text = model_slug(text)
    return "\n".join(textwrap.wrap(text, width)) or text


def _kind(name: str) -> str:
    return "embed" if "embed" in name else "mlp" if "mlp" in name else "attn"


def _is_constant(y) -> bool:
    """True when ``y`` does not vary beyond a few ulps of its largest magnitude."""
    y = np.asarray(y, dtype=np.float64)
    return bool(np.ptp(y) <= 4 * np.spacing(np.abs(y).max())) if y.size else True


def standardize(x) -> np.ndarray:
    """``(x − mean) / std`` over the curve (population std); a constant curve is only centred."""
    x = np.asarray(x, dtype=np.float64)
    sd = x.std()
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


#: rows of the junction figure: measures that share one unit
JUNCTION_GROUPS = (("accuracy",), ("mse", "bias", "diversity"),
                   ("cross_entropy", "ce_bias", "ce_diversity"))
GROUP_LABELS = {"accuracy": "accuracy", "mse": "squared loss", "cross_entropy": "cross-entropy"}
SQUARED_UNITS = {"logit": "logit²", "probability": "probability²", "paper_eq14": "probability²"}


def _junction_units(cur, group) -> str:
    if group[0] == "accuracy":
        return "fraction"
    if group[0] == "mse":
        return SQUARED_UNITS.get(cur.space, "")
    return cur.ce_units


def plot_junction_curves(curves, path=None, *, measures=("accuracy", "mse", "bias", "diversity"),
                         standardized: bool = False, ncols: int = 4):
    """Figures 5/7: measures against the number of members, one column per run and readout,
    one row per unit (accuracy; the squared-loss terms; the cross-entropy terms).

    Absolute values in their units, each with its example-bootstrap band
    (:attr:`JunctionCurves.ci <infodiv.junctions.JunctionCurves>`, shaded) when it was
    computed; accuracy with the majority-class rate dotted. The caption under the panels says
    what the bands are (or that none were computed).

    Parameters
    ----------
    curves : JunctionCurves or list of them
    measures : tuple of str
        Attributes of JunctionCurves to draw (a measure that was not computed is skipped).
    standardized : bool, default False
        Z-score each curve (and its band, by the same affine map) over its junction points, as
        the paper does so that trends of different scales share one axis; a constant curve is
        only centred.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    curves = [curves] if hasattr(curves, "k") else list(curves)
    if not curves:
        raise ValueError("curves is empty")
    groups = [tuple(m for m in g if m in measures
                    and any(getattr(c, m, None) is not None for c in curves))
              for g in JUNCTION_GROUPS]
    groups = [g for g in groups if g]
    ncols = min(ncols, len(curves))
    blocks = -(-len(curves) // ncols)
    fig = new_figure(3.4 * ncols, 2.4 * len(groups) * blocks + 1.1)
    axes = np.atleast_2d(fig.subplots(len(groups) * blocks, ncols, squeeze=False))
    runs = {(cur.model, cur.task, getattr(cur, "n_examples", None)) for cur in curves}
    one_run = len(runs) == 1
    readouts = {"fixed": "fixed-scale readout", "logit_lens": "logit-lens readout"}
    handles = {}
    for i, cur in enumerate(curves):
        block, col = divmod(i, ncols)
        ci = getattr(cur, "ci", None) or {}
        for row, group in enumerate(groups):
            ax = axes[block * len(groups) + row, col]
            for measure in group:
                y = getattr(cur, measure, None)
                if y is None:
                    continue
                y = np.asarray(y, dtype=np.float64)
                band = np.asarray(ci[measure], dtype=np.float64) if measure in ci else None
                if standardized:
                    centre = y.mean()
                    spread = 1.0 if _is_constant(y) else y.std()
                    y = (y - centre) / spread
                    band = None if band is None else (band - centre) / spread
                color, style = MEASURE_STYLE.get(measure, (None, "-"))
                (line,) = ax.plot(cur.k, y, style, color=color, lw=1.3, label=measure)
                handles.setdefault(measure, line)
                if band is not None:
                    ax.fill_between(cur.k, band[:, 0], band[:, 1], color=color, alpha=0.18,
                                    lw=0)
            majority = getattr(cur, "majority_rate", float("nan"))
            if group[0] == "accuracy" and not standardized and np.isfinite(majority):
                ax.axhline(majority, color="0.4", ls=":", lw=0.9)
                handles.setdefault("majority class", Line2D([], [], color="0.4", ls=":"))
            units = "z-score over k" if standardized else _junction_units(cur, group)
            ax.set_ylabel(f"{GROUP_LABELS[group[0]]} [{units}]", fontsize=8)
            if row == 0:
                readout = readouts.get(getattr(cur, "readout", ""),
                                       str(getattr(cur, "readout", "")))
                ax.set_title(readout if one_run else
                             f"{run_label(model=cur.model, task=cur.task)}\n{readout}",
                             fontsize=9)
            if row == len(groups) - 1:
                ax.set_xlabel("members in prefix (k)")
    for i in range(len(curves), blocks * ncols):
        block, col = divmod(i, ncols)
        for row in range(len(groups)):
            axes[block * len(groups) + row, col].set_visible(False)
    with_bands = [c for c in curves if getattr(c, "ci", None)]
    if with_bands:
        cur = with_bands[0]
        handles[f"{cur.confidence:.0%} band"] = Patch(color="0.6", alpha=0.4)
        widened = max(c.widened for c in with_bands)
        caption = (f"Bands: {cur.confidence:.0%} example bootstrap of each mean "
                   f"({cur.n_bootstrap} resamples of the {cur.n_examples} examples, model "
                   "fixed, percentile" + (f"; extended to the mean by up to {widened:.2g}"
                                          if widened else "") + ").")
    else:
        caption = "No bands: the curves were computed without resampling (n_bootstrap=0)."
    fig.legend(list(handles.values()), list(handles), loc="outside lower center",
               ncols=min(len(handles), 5), fontsize=7, frameon=False,
               title=caption, title_fontsize=7)
    head = run_label(model=curves[0].model, task=curves[0].task,
                     n=getattr(curves[0], "n_examples", None)) + ": " if one_run else ""
    fig.suptitle(f"{head}junction curves ({curves[0].space} space, scale={curves[0].scale})",
                 fontsize=10)
    return save_figure(fig, path)


def plot_correlations(table, path=None, *, alpha: float = 0.05):
    """Figure 3: heat map of correlations per model (rows measure × method, columns tasks).

    Cells with ``p < alpha`` are marked with an asterisk (the paper underlines them); the
    "Avg." column (Fisher-z average over the tasks) carries no test and is left out where a
    model has one task only (an average of one is no average).
    """
    recs = table.to_records()
    tasks_of = {}
    for r in recs:
        if r["task"] != "Avg.":
            tasks_of.setdefault(r["model"], set()).add(r["task"])
    recs = [r for r in recs if r["task"] != "Avg." or len(tasks_of.get(r["model"], ())) > 1]
    averaged = any(r["task"] == "Avg." for r in recs)
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
    avg = "; Avg. = Fisher-z mean over the tasks" if averaged else ""
    fig.suptitle(f"Correlation with accuracy\n(* p < {alpha}; P = Pearson, S = Spearman{avg})",
                 fontsize=9)
    return save_figure(fig, path)


def plot_module_shares(table, path=None, *, title=None):
    """Figure 4: stacked bars of the bias and diversity shares of each module group per model.

    Uses the table's "Avg." rows (the mean share over each model's tasks); the default title
    names the task when there is one, else says how many tasks are averaged.
    """
    every = table.to_records()
    recs = [r for r in every if r["task"] == "Avg."]
    tasks = sorted({r["task"] for r in every if r["task"] != "Avg."})
    if not recs:
        raise ValueError("the module-share table has no 'Avg.' rows")
    models = list(dict.fromkeys(r["model"] for r in recs))
    groups = list(dict.fromkeys(r["group"] for r in recs))
    fig = new_figure(3.6 + 1.4 * len(models), 3.8)
    axes = fig.subplots(1, 2, sharey=True)
    x = np.arange(len(models))
    for ax, term in zip(axes, ("bias", "diversity")):
        bottom = np.zeros(len(models))
        for g in groups:
            share = np.array([next((r["share"] for r in recs if r["model"] == m
                                    and r["term"] == term and r["group"] == g), 0.0)
                              for m in models], dtype=np.float64)
            bars = ax.bar(x, share, 0.6, bottom=bottom, label=g, color=GROUP_COLORS.get(g))
            for bar, v, b in zip(bars, share, bottom):
                if np.isfinite(v) and v >= 0.06:
                    ax.text(bar.get_x() + bar.get_width() / 2, b + v / 2, f"{v:.0%}",
                            ha="center", va="center", fontsize=7, color="white")
            bottom += np.nan_to_num(share)
        ax.set_xticks(x, [_short(m or "model", 14) for m in models], fontsize=8)
        ax.set_xlim(-0.6, len(models) - 0.4)
        ax.set_ylim(0, max(1.0, float(bottom.max()) * 1.02))
        ax.set_title(term, fontsize=9)
    axes[0].set_ylabel("share of the total (Eq. 9-10)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=7, frameon=False)
    over = f"task {tasks[0]}" if len(tasks) == 1 else f"mean over {len(tasks)} tasks"
    fig.suptitle(title or f"Module shares of bias and diversity ({over})", fontsize=9)
    return save_figure(fig, path)


# ---------------------------------------------------------------------------- curves report
CURVE_COLOURS = {"prefix": "tab:blue", "suffix": "tab:purple", "greedy": "tab:red",
                 "backward": "tab:orange"}


def _titled(ax, title, what):
    """``title: what`` over the axes, on two lines when that is long."""
    text = what if not title else f"{title}: {what}" if len(title) + len(what) < 80 else \
        f"{title}\n{what}"
    ax.set_title(text, fontsize=9)


def plot_layer_curves(lc, path=None, *, title=None, band=None):
    """f(k) of every order of a :class:`~infodiv.curves.LayerCurves`: the random-order mean
    with its inferential 95% band, and each fixed or searched order (held-out and in-sample).

    ``band`` (``{"ci_low", "ci_high"}``, e.g. the ``mean_curve`` of
    :func:`infodiv.inference.curve_inference`) is the example-resampled band (examples
    resampled, everything refitted): it is shaded. The orders-only 95% interval of the mean is
    drawn as dotted lines labelled "Monte-Carlo error"; without ``band`` the legend says that
    no example-resampled band was computed. ``title`` (e.g. :func:`run_label`) heads the plot
    with the model, task and N."""
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
            "" if band is not None else " (no example-resampled band: inference off)"))
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
