"""Figures and tables across the runs of one report (``infodiv run`` with several pairs).

- Figure 3 (paper): correlation of accuracy with MSE, bias and diversity over the junction
  points, per model and task, with the Fisher-z "Avg." column (:func:`infodiv.tables.
  correlation_table`), when some model has at least two tasks;
- Figure 6 (paper): accuracy and ensemble MSE averaged over tasks against the number of layers,
  when the runs hold at least two models;
- Table 1 (paper): a layer-sharing model beside an unshared one on the same tasks
  (:func:`infodiv.tables.sharing_table`), when the runs hold both kinds.

:func:`cross_run` returns the figures it wrote (PNG beside the page) and the tables as rows for
the page, each with its estimator and n.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["cross_run", "plot_performance_vs_layers"]


def _load(roots):
    from infodiv.runfiles import load_run

    return [load_run(r)[0] for r in roots]


def _n_layers(contrib) -> int:
    """Block executions of a run: distinct (block, execution) pairs of its attention members."""
    return len({(m.block, m.execution) for m in contrib.members if m.kind != "embed"})


def _shared(contrib) -> bool:
    return any(m.execution > 0 for m in contrib.members)


def plot_performance_vs_layers(points, path=None, *, title=None, tasks=None):
    """Figure 6: mean accuracy and mean ensemble MSE over tasks against the number of layers.

    ``points``: ``[(model, n_layers, accuracy, mse, n_tasks)]``, each averaged over the same
    ``tasks`` (named in the axis labels).
    """
    from .figures import _short, new_figure, save_figure

    pts = sorted(points, key=lambda p: p[1])
    fig = new_figure(8.0, 3.4)
    axes = fig.subplots(1, 2)
    x = [p[1] for p in pts]
    over = f"mean over {', '.join(tasks)}" if tasks else "mean over tasks"
    for ax, col, label in ((axes[0], 2, f"accuracy\n({over})"),
                           (axes[1], 3, "ensemble MSE, logit space, scale=mean")):
        style = "o-" if len(set(x)) == len(x) else "o"   # no line between models of one depth
        ax.plot(x, [p[col] for p in pts], style, color="k")
        top, right = max(p[col] for p in pts), max(x)
        for p in pts:   # labels stay on the canvas: below the highest point, left of the last
            below, left = p[col] == top, p[1] == right and len(set(x)) > 1
            ax.annotate(_short(p[0], 18), (p[1], p[col]), fontsize=7,
                        xytext=(-3 if left else 3, -4 if below else 4),
                        textcoords="offset points", ha="right" if left else "left",
                        va="top" if below else "bottom")
        ax.margins(x=0.12, y=0.18)
        ax.set_xlabel("number of layers (block executions)")
        ax.set_ylabel(label, fontsize=8)
    fig.suptitle(title or "Performance against the number of layers (Figure 6)", fontsize=9)
    return save_figure(fig, path)


def _performance_point(model, items) -> tuple:
    """(model, layers, mean accuracy, mean ensemble MSE, tasks) over ``items`` = [(task, run)]."""
    from estimators import bias_diversity
    from infodiv.runs import ensemble_arrays

    acc = float(np.mean([c.accuracy() for _, c in items]))
    mse = float(np.mean([bias_diversity(**ensemble_arrays(c), loss="squared", space="logit",
                                        scale="mean").loss for _, c in items]))
    return model, _n_layers(items[0][1]), acc, mse, len(items)


def cross_run(roots, out_dir: Path, stem: str) -> tuple[list[Path], list[dict]]:
    """Write the cross-run figures to ``out_dir`` and return ``(pngs, rows)``."""
    from infodiv.runs import run_names
    from infodiv.tables import correlation_table, sharing_table

    from .figures import plot_correlations
    from .summary import _row

    runs = _load(roots)
    names = [run_names(c.meta) for c in runs]
    figures, rows = [], []
    by_model: dict = {}
    for c, (model, task) in zip(runs, names):
        by_model.setdefault(model, []).append((task, c))
    if any(len(v) >= 2 for v in by_model.values()):
        table = correlation_table({(m, t): c for c, (m, t) in zip(runs, names)})
        path = out_dir / f"{stem}_figure3.png"
        plot_correlations(table, path)
        figures.append(path)
        for r in table.to_records():
            rows.append(_row("Across runs: Figure 3 (correlation with accuracy)",
                             f"{r['model']} / {r['task']}: {r['measure']} ({r['method']})",
                             r["r"], estimator=f"{r['method']} r over junction points, p = "
                                               f"{r['p']:.3g}" if np.isfinite(r["p"]) else
                             "Fisher-z average", n=r["n"]))
    if len(by_model) >= 2:
        common = sorted(set.intersection(*({t for t, _ in v} for v in by_model.values())))
        if common:
            points = []
            for model, items in by_model.items():
                items = [(t, c) for t, c in items if t in common]
                points.append(_performance_point(model, items))
                rows.append(_row("Across runs: Figure 6 (performance against layers)",
                                 f"{model}: {points[-1][1]} layers, mean accuracy", points[-1][2],
                                 estimator=f"mean over the task(s) every model was run on: "
                                           f"{', '.join(common)}",
                                 n=sum(c.n_examples for _, c in items)))
            path = out_dir / f"{stem}_figure6.png"
            plot_performance_vs_layers(points, path, tasks=common)
            figures.append(path)
        else:
            rows.append(_row("Across runs: Figure 6 (performance against layers)",
                             "not drawn: the models share no task, and an average over "
                             "different tasks compares the tasks, not the models", None,
                             estimator="–", n=None))
    shared = [m for m, items in by_model.items() if _shared(items[0][1])]
    plain = [m for m, items in by_model.items() if not _shared(items[0][1])]
    if shared and plain:
        s_items, u_items = dict(by_model[shared[0]]), dict(by_model[plain[0]])
        common = [t for t in s_items if t in u_items]
        if common:
            table = sharing_table({t: s_items[t] for t in common},
                                  {t: u_items[t] for t in common}, names=(plain[0], shared[0]))
            for rec in table.to_records():
                for key, value in rec.items():
                    if key != "task":
                        rows.append(_row("Across runs: Table 1 (layer sharing)",
                                         f"{rec['task']}: {key}", value,
                                         estimator="paper Eq. 14 decomposition",
                                         n=s_items[common[0]].n_examples))
    return figures, rows
