"""Matplotlib figures for the paper's Figure 3 (correlations), Figure 4 (module shares) and
Figures 5/7 (junction curves).

Figures are built on :class:`matplotlib.figure.Figure` with the Agg canvas, so nothing touches
pyplot's global state or needs a display; each function returns the Figure and, given ``path``,
saves it as PNG.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["plot_correlations", "plot_module_shares", "plot_junction_curves", "standardize"]

GROUP_COLORS = {"embed": "#8c8c8c", "attn": "#1f77b4", "mlp": "#ff7f0e"}
MEASURE_STYLE = {"accuracy": ("k", "-"), "mse": ("#d62728", "-"), "bias": ("#1f77b4", "--"),
                 "diversity": ("#2ca02c", "-."), "cross_entropy": ("#9467bd", "-"),
                 "ce_bias": ("#17becf", "--"), "ce_diversity": ("#bcbd22", "-.")}


def _figure(width, height):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path):
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=120)
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
    fig = _figure(3.2 * ncols, 2.6 * nrows)
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
    return _save(fig, path)


def plot_correlations(table, path=None, *, alpha: float = 0.05):
    """Figure 3: heat map of correlations per model (rows measure × method, columns tasks).

    Cells with ``p < alpha`` are marked with an asterisk (the paper underlines them); the
    "Avg." column (Fisher-z average) carries no test.
    """
    recs = table.to_records()
    if not recs:
        raise ValueError("the correlation table is empty")
    models = list(dict.fromkeys(r["model"] for r in recs))
    fig = _figure(1.1 + 0.75 * len({r["task"] for r in recs}), 1.0 + 1.9 * len(models))
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
    return _save(fig, path)


def plot_module_shares(table, path=None):
    """Figure 4: stacked bars of the bias and diversity shares of each module group per model.

    Uses the table's "Avg." rows (the mean share over tasks).
    """
    recs = [r for r in table.to_records() if r["task"] == "Avg."]
    if not recs:
        raise ValueError("the module-share table has no 'Avg.' rows")
    models = list(dict.fromkeys(r["model"] for r in recs))
    groups = list(dict.fromkeys(r["group"] for r in recs))
    fig = _figure(2.0 + 1.2 * len(models), 3.2)
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
    return _save(fig, path)
