"""The paper's figures: Figure 3 (correlations), Figure 4 (module shares) and Figures 5/7
(junction curves, absolute values in their units with example-bootstrap bands).

The curves report's figures (layer-addition curves, gain profiles, Shapley values, the layer
graph) are :mod:`infodiv.reports.curve_figures`'s, the answer figure (real members against
their conditionally independent control) :mod:`infodiv.reports.answer_figure`'s, and the
canvas they share (:func:`new_figure`, :func:`save_figure`, :func:`run_label`)
:mod:`infodiv.reports.canvas`'s; all of them are importable from here. Every figure with more
than one series has a legend; each function returns the Figure and, given ``path``, saves it
as PNG.
"""

from __future__ import annotations

import numpy as np

from .canvas import (
    GROUP_COLORS,
    _short,
    _titled,  # noqa: F401  (answer_figure imports it from here)
    new_figure,
    run_label,
    save_figure,
)
from .curve_figures import plot_gains, plot_layer_curves, plot_layer_graph, plot_shapley

__all__ = ["new_figure", "save_figure", "run_label", "plot_correlations", "plot_module_shares",
           "plot_junction_curves", "plot_layer_curves", "plot_gains", "plot_shapley",
           "plot_layer_graph", "standardize"]

MEASURE_STYLE = {"accuracy": ("k", "-"), "mse": ("#d62728", "-"), "bias": ("#1f77b4", "--"),
                 "diversity": ("#2ca02c", "-."), "cross_entropy": ("#9467bd", "-"),
                 "ce_bias": ("#17becf", "--"), "ce_diversity": ("#bcbd22", "-.")}


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


def _robust_ylim(ax, values, spread: float = 4.0) -> int:
    """Limit ``ax``'s y axis to the bulk of ``values`` when a few points would flatten it: the
    points beyond ``spread`` interquartile ranges of the median are left off scale, their
    count written in the panel. Returns that count (0: the limits are untouched)."""
    v = values[np.isfinite(values)]
    if v.size < 8:
        return 0
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    iqr = q3 - q1
    if iqr <= 0:
        return 0
    lo, hi = med - spread * iqr, med + spread * iqr
    inside = v[(v >= lo) & (v <= hi)]
    off = int(v.size - inside.size)
    if not off:
        return 0
    pad = 0.08 * (inside.max() - inside.min() or iqr)
    ax.set_ylim(inside.min() - pad, inside.max() + pad)
    ax.text(0.98, 0.02, f"{off} point{'s' if off > 1 else ''} off scale", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=7, color="0.3")
    return off


def plot_junction_curves(curves, path=None, *, measures=("accuracy", "mse", "bias", "diversity"),
                         standardized: bool = False, ncols: int = 4):
    """Figures 5/7: measures against the number of members, one column per run and readout,
    one row per unit (accuracy; the squared-loss terms; the cross-entropy terms).

    Absolute values in their units, each with its example-bootstrap band
    (:attr:`JunctionCurves.ci <infodiv.junctions.JunctionCurves>`, shaded) when it was
    computed; accuracy with the majority-class rate dotted. The caption under the panels says
    what the bands are (or that none were computed). A panel whose values hold a few points
    far from the rest (beyond 4 interquartile ranges of the median) is scaled to the rest and
    says how many points are off scale (:func:`_robust_ylim`), so one spike cannot flatten
    it.

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
            drawn = []
            for measure in group:
                y = getattr(cur, measure, None)
                if y is None:
                    continue
                y = np.asarray(y, dtype=np.float64)
                drawn.append(y)
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
            if drawn and not standardized:
                _robust_ylim(ax, np.concatenate(drawn))
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
